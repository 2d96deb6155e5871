// Fuzz: time and locale. The same short sequence of commands run twice against two sandboxes of one seed whose clock
// is placed near a day's, a month's or a year's end or a DST change: once under a drawn TZ and LANG/LC_ALL, once
// under TZ=UTC LANG=C; judged by the sandboxes' own records (payouts, their createdAt, the request log) and by the
// outputs of the two compared, never by the tool's journal.
//   npx tsx test/chaos/clock-fuzz.ts [--seed S] [--runs N] [--kind K,...] [--verbose] [--only I] [--scenario JSON] [--keep]
//
// Each scenario (fast-check, from the seed): a TZ (UTC, Pacific/Kiritimati, Pacific/Pago_Pago, Asia/Kathmandu,
// America/St_Johns, Europe/London, America/New_York, Australia/Lord_Howe), a LANG = LC_ALL (C, de_DE, fr_FR, tr_TR,
// ar_EG, ja_JP, hi_IN, .UTF-8), an instant (a UTC midnight, the zone's own midnight, February's end, the year's end,
// the zone's DST change) and how long before it the clock starts (3 s to 90 min), the sandbox's reading (strict or
// variant), results CSV or XLSX, pain.002 .03 or .10, an --above allowance (GBP 100 or 250), and whether the clock
// is moved past the instant before the second batch. Both clocks move: the sandbox's (SandboxOptions.now, then
// advanceClock) and the CLI's (PRELOAD moves each process's Date by the same offset). The sequence, each a
// process of the built CLI: `policy set --require-approvals 1 --above GBP:A` (nobody approves: the allowance alone
// lets batches go); `run` of batch 1 (GBP, within A) with --json and --status-report; the clock moved (or not);
// `run` of batch 2 (within A alone, over it with batch 1); `status --json --status-report` and `reconcile --json
// --since DAY --until DAY --statement` of batch 1's results (the UTC days of its start and of now); `report` of
// them; `account --json`. Checked:
//   (a) the money the sandbox holds (each payout's reference, amounts, currencies, beneficiary) is the same in both
//       runs, and no reference has two payouts;
//   (b) batch 2 went without approval iff the UTC day the sandbox dates its payouts in held none of batch 1's (the
//       allowance counted by the service's UTC day, whatever TZ): a batch whose start and end (or whose payouts)
//       fall on two UTC days is counted apart; the requests counted per month in the state folder's usage.json are
//       those the sandbox's log dates in each UTC month (a request within 5 s of a month's end counted apart);
//   (c) the machine-read outputs (results CSV/XLSX, pain.002s, camt.053, run's, status's and reconcile's --json)
//       are the same in both runs but for times and ids (run-dependent); each XML valid against its XSD, its dates
//       and times ISO forms (YYYY-MM-DD, with a zone or Z for times);
//   (d) no amount in them written with a locale's digits or separators (Arabic-Indic or Devanagari digits, NBSP,
//       narrow NBSP, a decimal comma);
//   (e) no "unexpected error" nor stack trace in any output.
// `--kind due,duplicate,approval,listAge,clearance[,allowance]` draws the tool's time windows instead (default: allowance, the
// above; the seeds in the README replay), each once under its drawn TZ and LANG, clocks as above, judged against
// what the READMEs promise (by the sandbox's payouts and their createdAt; a decision within the processes' and
// clocks' milliseconds of its limit, or a command across a UTC day, is counted apart):
//   (f) due: a pain.001 (.03: a date, with Z or the zone's offset; .09: Dt, or DtTm with Z, the zone's offset, no
//       zone, or 24:00:00), a CSV or an XLSX (date cells, of the 1900 or the 1904 system) whose rows' ReqdExctnDt
//       are yesterday, today or tomorrow of the UTC or the zone's day; run (or a watch ticked) at the start, past the
//       anchor, a day later: no row paid before its due UTC day; after a command within one UTC day, each row due by
//       then paid once (a watch: all once the file's latest is due, none before);
//   (g) duplicate: two GBP rows run; the same payees and amounts under new references (and a third row) run just
//       inside or just outside --duplicate-window (30m, 2h, 12h, 24h) of their createdAt: held inside, paid outside;
//   (h) approval: a policy's --approvals-expire-after W; plan, approve, then run --plan just inside or outside W of
//       the approval: every row sent inside, none outside;
//   (i) listAge: a policy's --screening-max-age W; a sanctions list (UN XML dateGenerated in UTC or the zone's offset,
//       or a names CSV by its mtime) older than W by 30 s to 2 h: the run refused, nothing sent;
//   (j) clearance: a payee a names list holds, cleared (`screen --clear --expires W`, approved), then varied (the list
//       rewritten, the entry's id or fields changed, another list, the account edited, the file edited, signed by its
//       maker or an unlisted approver, not maker-signed under a policy); the run just inside or outside W: the payee
//       paid iff the clearance is valid and unexpired when its payout is created, never after; the others as
//       --allow-partial says;
//   and (a), (e) as above.
// Exits 1 when any check fails, printing the scenario: `--scenario JSON --only I` replays it.
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import * as XLSX from 'xlsx';
import { parse as parseCsv } from 'csv-parse/sync';
import { newKeyPair } from '../../src/approvals/approvals-file.ts';
import { install, type Installation } from '../approvals/install.ts';
import { Dec } from '../../src/money.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { canonicalJson } from '../../src/text.ts';
import { cleanEnv, generateCsv, KEY, runCli, workDir, type CliRun } from '../engine/helpers.ts';
import { pain001, sampleRows } from '../input/pain001-files.ts';
import { schemaErrors } from '../iso20022/validate.ts';
import { fuzzFlags, leave, parseJson, payoutsByReference, runScenarios, serviceRecords, threw, twicePaid } from './fuzz-judge.ts';

// `--kind due,duplicate,approval,listAge,clearance,allowance`: the kinds drawn (default allowance alone: the seeds below replay)
const KINDS = process.argv.includes('--kind') ? process.argv.splice(process.argv.indexOf('--kind'), 2)[1]!.split(',') : ['allowance'];
const { given: GIVEN, seed: SEED, runs: RUNS, verbose: VERBOSE, only: ONLY, keep: KEEP } = fuzzFlags<Scenario | WindowScenario>();
/**
 * The CLI's clock, imported first into each of its processes (NODE_OPTIONS): Date moved by PB_FUZZ_CLOCK_OFFSET_MS as
 * the sandbox's is, so that host and service agree on the time as they would in life.
 */
const PRELOAD = `data:text/javascript,${encodeURIComponent(`
  const offset = Number(process.env.PB_FUZZ_CLOCK_OFFSET_MS ?? 0);
  const Real = Date;
  globalThis.Date = class extends Real {
    constructor(...a) { if (a.length) super(...a); else super(Real.now() + offset); }
    static now() { return Real.now() + offset; }
  };`)}`;

/** The scenario's sandbox, its clock `offset` ms from now, no rate limit nor quota. */
const clockSandbox = (variant: boolean, n: number, offset: number) =>
  startSandbox({
    rateLimitPerSecond: null,
    monthlyQuota: null,
    randomSeed: SEED + n,
    shapes: variant ? 'variant' : 'strict',
    now: () => Date.now() + offset,
  });

/** The installation's CLI as a process under the zone, language and clock offset drawn, from and to on that clock. */
async function clockCli(root: string, inst: Installation, o: { tz: string; lang: string; offset: number }, args: string[]) {
  const env = cleanEnv({
    HOME: root,
    PAYOUT_API_KEY: KEY,
    PAYOUT_BATCH_RATE: '1000',
    TZ: o.tz,
    LANG: o.lang,
    LC_ALL: o.lang,
    PB_FUZZ_CLOCK_OFFSET_MS: String(o.offset),
    NODE_OPTIONS: `--import=${PRELOAD}`,
  });
  env.PAYOUT_BATCH_STATE_DIR = join(root, 'state');
  const from = Date.now() + o.offset;
  const r: CliRun = await runCli(args, { cwd: root, env, timeoutMs: 120_000, bin: inst.bin });
  return { ...r, from, to: Date.now() + o.offset };
}

const TZS = [
  'UTC',
  'Pacific/Kiritimati',
  'Pacific/Pago_Pago',
  'Asia/Kathmandu',
  'America/St_Johns',
  'Europe/London',
  'America/New_York',
  'Australia/Lord_Howe',
] as const;
const LANGS = ['C', 'de_DE.UTF-8', 'fr_FR.UTF-8', 'tr_TR.UTF-8', 'ar_EG.UTF-8', 'ja_JP.UTF-8', 'hi_IN.UTF-8'] as const;
type Anchor = 'utcMidnight' | 'localMidnight' | 'monthEnd' | 'yearEnd' | 'dst';
interface Scenario {
  tz: (typeof TZS)[number];
  lang: (typeof LANGS)[number];
  anchor: Anchor;
  /** Seconds before the anchor the clocks start. */
  before: number;
  /** The clocks moved past the anchor before batch 2. */
  cross: boolean;
  above: 100 | 250;
  rows1: number;
  rows2: number;
  variant: boolean;
  xlsx: boolean;
  v10: boolean;
}
const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  tz: fc.constantFrom(...TZS),
  lang: fc.constantFrom(...LANGS),
  anchor: fc.constantFrom<Anchor>('utcMidnight', 'localMidnight', 'monthEnd', 'yearEnd', 'dst'),
  before: fc.constantFrom(3, 20, 90, 600, 5400),
  cross: fc.boolean(),
  above: fc.constantFrom<100 | 250>(100, 250),
  rows1: fc.integer({ min: 1, max: 3 }),
  rows2: fc.integer({ min: 1, max: 2 }),
  variant: fc.boolean(),
  xlsx: fc.boolean(),
  v10: fc.boolean(),
});

/** The DST changes of 2027 (UTC) of the zones that have one; the others take London's. */
const DST: Record<string, number> = {
  'Europe/London': Date.UTC(2027, 2, 28, 1),
  'America/New_York': Date.UTC(2027, 2, 14, 7),
  'America/St_Johns': Date.UTC(2027, 2, 14, 5, 30),
  'Australia/Lord_Howe': Date.UTC(2027, 3, 3, 15),
};
/** The first instant of 2026-12-03 in the zone (its date read by Intl, in quarter hours: every zone's offset is one). */
function localMidnight(tz: string): number {
  const day = (t: number) => new Intl.DateTimeFormat('en-CA', { timeZone: tz }).format(t);
  let t = Date.UTC(2026, 11, 2);
  while (day(t) < '2026-12-03') t += 15 * 60_000;
  return t;
}
function anchorOf(sc: Pick<Scenario, 'tz'> & { anchor: Anchor }): number {
  return {
    utcMidnight: Date.UTC(2026, 11, 3),
    localMidnight: localMidnight(sc.tz),
    monthEnd: Date.UTC(2027, 2, 1),
    yearEnd: Date.UTC(2027, 0, 1),
    dst: DST[sc.tz] ?? DST['Europe/London']!,
  }[sc.anchor];
}

const STACK = /unexpected error|\n\s+at .+:\d+:\d+\)?/i;
/** A locale's digits or separators where a machine reads an amount (a decimal comma: in a CSV, a quoted cell of one). */
const LOCALE_MARKS = /[\u0660-\u066C\u06F0-\u06F9\u0966-\u096F\u00A0\u202F]|\d,\d\d(?!\d)/;
const CSV_LOCALE_MARKS = /[\u0660-\u066C\u06F0-\u06F9\u0966-\u096F\u00A0\u202F]|"[\d.' ]*\d,\d+"/;
const utcDay = (t: number) => new Date(t).toISOString().slice(0, 10);
const utcMonth = (t: number) => new Date(t).toISOString().slice(0, 7);

/** One side's run: what the sandbox holds, the outputs to compare, and what it decided. */
interface Side {
  label: string;
  money: string[];
  outputs: Map<string, string>;
  straddled: number;
  nearMonthEnd: number;
  batch2: 'sent' | 'refused' | 'other';
}
interface Outcome {
  violations: string[];
  notes: string[];
  commands: number;
  payouts: number;
  sent2: number;
  refused2: number;
  straddled: number;
  nearMonthEnd: number;
  xml: number;
}

async function runSide(sc: Scenario, n: number, twin: boolean, out: Outcome): Promise<Side> {
  const label = twin ? 'twin (UTC, C)' : `${sc.tz}, ${sc.lang}`;
  const side: Side = { label, money: [], outputs: new Map(), straddled: 0, nearMonthEnd: 0, batch2: 'other' };
  const v = (s: string) => out.violations.push(`${label}: ${s}`);
  const root = await workDir('pb-clock-fuzz-');
  // (an installation of its own: its policies in its own host folder, never the machine's /etc/payout-batch)
  const inst = install(join(root, 'install'));
  const start = anchorOf(sc) - sc.before * 1000;
  let offset = start - Date.now();
  const offset0 = offset;
  const sb: LocalSandbox = await clockSandbox(sc.variant, n, offset0);
  const vnow = () => Date.now() + offset;
  try {
    const service = ['--base-url', sb.url];
    const tz = twin ? 'UTC' : sc.tz;
    const lang = twin ? 'C' : sc.lang;
    const cli = async (what: string, args: string[]) => {
      const r = await clockCli(root, inst, { tz, lang, offset }, args);
      out.commands++;
      out.notes.push(
        `${label}: ${what} ${new Date(r.from).toISOString()}: exit ${r.code}${r.code ? `: ${r.stderr.trim().split('\n').slice(-1)[0]?.slice(0, 200)}` : ''}`,
      );
      // (e)
      if (STACK.test(r.stdout + r.stderr)) v(`(e) ${what}: ${(r.stderr || r.stdout).slice(0, 800)}`);
      return r;
    };
    const keep = async (name: string, text: string, csv = false) => {
      side.outputs.set(name, text.replaceAll(root, '<root>').replace(/127\.0\.0\.1[_:]\d+(-[0-9a-f]+)?/g, '<host>'));
      // (d)
      const m = (csv ? CSV_LOCALE_MARKS : LOCALE_MARKS).exec(text);
      if (m) v(`(d) ${name}: "${text.slice(Math.max(0, m.index - 40), m.index + 40)}"`);
    };
    const xml = async (name: string, path: string, message: string) => {
      if (!existsSync(path)) return v(`(c) ${name} not written`);
      const text = await readFile(path, 'utf8');
      out.xml++;
      for (const e of await schemaErrors(text, message)) v(`(c) ${name}: not valid against ${message}.xsd: ${e}`);
      for (const [, tag, value] of text.matchAll(/<(\w*(?:Dt|DtTm))>([^<]*)<\//g))
        if (!/^\d{4}-\d\d-\d\d(T\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d))?$/.test(value!))
          v(`(c) ${name}: <${tag}> ${value} is no ISO date or time with a zone`);
      await keep(name, text);
    };
    const results = async (name: string, path: string) => {
      if (!existsSync(path)) return v(`(c) ${name} not written`);
      const text = sc.xlsx
        ? XLSX.utils.sheet_to_csv(XLSX.read(await readFile(path)).Sheets[XLSX.read(await readFile(path)).SheetNames[0]!]!)
        : await readFile(path, 'utf8');
      await keep(name, text, true);
    };

    // the policy: one approver nobody uses; batches go by the allowance alone
    const approver = newKeyPair();
    const list = join(root, 'approvers.json');
    await writeFile(list, JSON.stringify([{ name: 'Alice', publicKey: approver.publicKey }]));
    const p = await cli('policy set', [
      'policy',
      'set',
      '--require-approvals',
      '1',
      '--approvers',
      list,
      '--above',
      `GBP:${sc.above}`,
      ...service,
    ]);
    if (p.code !== 0) v(`(e) policy set: exit ${p.code}: ${p.stderr.slice(0, 400)}`);

    // batch 1 within the allowance; batch 2 within it alone, over it with batch 1
    const amounts1 = Array.from({ length: sc.rows1 }, (_, i) => new Dec(`${20 + i}.${String(11 * (i + 1) + n).slice(-2)}`));
    const total1 = amounts1.reduce((a, b) => a.plus(b), new Dec(0));
    const total2 = new Dec(sc.above).minus(total1).plus('5.37');
    const half = total2.div(2).toDecimalPlaces(2, Dec.ROUND_DOWN).minus('1.01');
    const amounts2 = sc.rows2 === 1 ? [total2] : [half, total2.minus(half)];
    const ext = sc.xlsx ? 'xlsx' : 'csv';
    const batch = async (k: number, amounts: Dec[]) => {
      const file = join(root, `batch${k}.csv`);
      await writeFile(
        file,
        generateCsv({ rows: amounts.length, currencies: ['GBP'], prefix: `CF${n}B${k}`, amount: (i) => amounts[i]!.toFixed(2) }),
      );
      return { file, results: join(root, `batch${k}.results.${ext}`) };
    };
    const b1 = await batch(1, amounts1);
    const r1 = await cli('run batch 1', [
      'run',
      b1.file,
      '-y',
      '--json',
      '--results',
      b1.results,
      '--status-report',
      join(root, 'b1.pain002.xml'),
      ...(sc.v10 ? ['--status-report-version', 'pain.002.001.10'] : []),
      ...service,
    ]);
    if (r1.code !== 0) v(`(b) batch 1 (GBP ${total1.toFixed()}, within ${sc.above}): exit ${r1.code}`);
    await keep('run 1 --json', r1.stdout);
    await results('results 1', b1.results);
    await xml('run 1 pain.002', join(root, 'b1.pain002.xml'), sc.v10 ? 'pain.002.001.10' : 'pain.002.001.03');
    const made1 = serviceRecords(sb).length;

    if (sc.cross) {
      const ms = Math.max(0, anchorOf(sc) - vnow()) + 10_000;
      sb.advanceClock(ms);
      offset += ms;
      out.notes.push(`${label}: clock +${ms} ms`);
    }
    const b2 = await batch(2, amounts2);
    const r2 = await cli('run batch 2', [
      'run',
      b2.file,
      '-y',
      '--json',
      '--results',
      b2.results,
      '--status-report',
      join(root, 'b2.pain002.xml'),
      ...service,
    ]);
    await keep('run 2 --json', r2.stdout);
    if (r2.code === 0) await results('results 2', b2.results);

    // (b) the allowance by the service's UTC day
    const snap = sb.snapshot();
    const { byRef } = payoutsByReference(serviceRecords(sb), [
      ...amounts1.map((_, i) => `CF${n}B1-${String(i + 1).padStart(4, '0')}`),
      ...amounts2.map((_, i) => `CF${n}B2-${String(i + 1).padStart(4, '0')}`),
    ]);
    const createdAt = new Map(snap.payouts.map((x) => [String(x.id), Date.parse(String(x.createdAt))]));
    const daysOf = (prefix: string) =>
      new Set([...byRef].filter(([ref]) => ref.startsWith(prefix)).flatMap(([, ps]) => ps.map((x) => utcDay(createdAt.get(x.id)!))));
    const days1 = daysOf(`CF${n}B1-`);
    const days2 = daysOf(`CF${n}B2-`);
    const made2 = serviceRecords(sb).length - made1;
    side.batch2 = r2.code === 0 && made2 === sc.rows2 ? 'sent' : r2.code === 3 && made2 === 0 ? 'refused' : 'other';
    const straddle =
      utcDay(r1.from) !== utcDay(r1.to) ||
      utcDay(r2.from) !== utcDay(r2.to) ||
      [...days1].some((d) => d !== utcDay(r1.from)) ||
      days1.size > 1 ||
      days2.size > 1;
    if (straddle) side.straddled++;
    else if (side.batch2 === 'other') v(`(b) batch 2: exit ${r2.code}, ${made2} of ${sc.rows2} payouts made`);
    else {
      const sameDay = days1.has(utcDay(r2.from));
      if (sameDay && side.batch2 === 'sent')
        v(
          `(b) batch 2 (GBP ${total2.toFixed()}) sent without approval on ${[...days2].join(',')}, the UTC day batch 1 (GBP ${total1.toFixed()}) was sent on: over GBP ${sc.above}`,
        );
      if (!sameDay && side.batch2 === 'refused')
        v(
          `(b) batch 2 (GBP ${total2.toFixed()}, within GBP ${sc.above}) refused on ${utcDay(r2.from)}, batch 1 sent on ${[...days1].join(',')}`,
        );
    }

    // follow-ups of batch 1
    const s = await cli('status', [
      'status',
      b1.results,
      '--json',
      '--status-report',
      join(root, 'b1.status.pain002.xml'),
      ...(sc.v10 ? ['--status-report-version', 'pain.002.001.10'] : []),
      ...service,
    ]);
    await keep('status --json', s.stdout);
    await xml('status pain.002', join(root, 'b1.status.pain002.xml'), sc.v10 ? 'pain.002.001.10' : 'pain.002.001.03');
    await results('results 1 after status', b1.results);
    const rc = await cli('reconcile', [
      'reconcile',
      b1.results,
      '--json',
      '--since',
      utcDay(start),
      '--until',
      utcDay(vnow()),
      '--statement',
      join(root, 'b1.camt053.xml'),
      ...service,
    ]);
    if (rc.code !== 0) v(`(b) reconcile --since ${utcDay(start)} --until ${utcDay(vnow())}: exit ${rc.code}`);
    await keep('reconcile --json', rc.stdout);
    await xml('camt.053', join(root, 'b1.camt053.xml'), 'camt.053.001.02');
    const rep = await cli('report', ['report', b1.results, '--out', join(root, 'b1.html')]);
    if (rep.code !== 0) v(`(e) report: exit ${rep.code}`);
    const acc = await cli('account', ['account', '--json', ...service]);
    if (!parseJson(acc.stdout)) v(`(c) account --json printed no JSON: ${acc.stdout.slice(0, 200)}`);

    // (b) the quota: usage.json's months against the sandbox's log
    const usage = parseJson(await readFile(join(root, 'state', 'usage.json'), 'utf8').catch(() => '')) as
      { keys?: Record<string, { months?: Record<string, number> }> } | undefined;
    const counted: Record<string, number> = {};
    for (const k of Object.values(usage?.keys ?? {}))
      for (const [m, c] of Object.entries(k.months ?? {})) counted[m] = (counted[m] ?? 0) + c;
    const logged: Record<string, number> = {};
    let near = false;
    for (const e of sb.requestLog()) {
      if (e.apiKey !== KEY) continue;
      logged[utcMonth(e.at)] = (logged[utcMonth(e.at)] ?? 0) + 1;
      if (utcMonth(e.at - 5000) !== utcMonth(e.at + 5000)) near = true;
    }
    if (near) side.nearMonthEnd++;
    else if (canonicalJson(counted) !== canonicalJson(logged))
      v(`(b) requests counted by month ${canonicalJson(counted)}, the sandbox's log ${canonicalJson(logged)}`);

    // (a) the money
    for (const [ref, ps] of byRef)
      for (const x of ps) {
        const b = x.made!.body;
        side.money.push(
          `${ref} ${String(b.sourceAmount)} ${String(b.sourceCurrency)}>${String(b.destinationCurrency)} ${canonicalJson(b.beneficiary)}`,
        );
      }
    for (const t of twicePaid(serviceRecords(sb), new Set(byRef.keys()))) v(`(a) ${t}`);
    out.payouts += side.money.length;
    out.straddled += side.straddled;
    out.nearMonthEnd += side.nearMonthEnd;
    if (side.batch2 === 'sent') out.sent2++;
    if (side.batch2 === 'refused') out.refused2++;
    return side;
  } finally {
    await sb.close();
    await leave(root, KEEP);
  }
}

/** What differs by run, not by zone or locale: times, the service's ids and references, the message ids. */
function runFree(text: string): string {
  return text
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?/g, '<time>')
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, '<uuid>')
    .replace(/\b(PO|SW|TX)-[0-9A-Z-]{6,}\b/g, '<ref>')
    .replace(/\bPB\d{8}T\d{6}-[0-9a-f]{8}\b/g, '<msgid>');
}

async function runScenario(sc: Scenario, n: number): Promise<Outcome> {
  const out: Outcome = { violations: [], notes: [], commands: 0, payouts: 0, sent2: 0, refused2: 0, straddled: 0, nearMonthEnd: 0, xml: 0 };
  try {
    const drawn = await runSide(sc, n, false, out);
    const twin = await runSide(sc, n, true, out);
    if (drawn.straddled || twin.straddled) return out;
    // (a)
    const [a, b] = [drawn.money.sort().join('\n'), twin.money.sort().join('\n')];
    if (a !== b) out.violations.push(`(a) the money differs from the twin's:\n${a}\n---\n${b}`);
    // (c)
    for (const [name, text] of drawn.outputs) {
      const other = twin.outputs.get(name);
      if (other === undefined) out.violations.push(`(c) ${name} written under ${drawn.label}, not in the twin`);
      else if (runFree(text) !== runFree(other)) {
        const [x, y] = [runFree(text).split('\n'), runFree(other).split('\n')];
        const i = x.findIndex((l, j) => l !== y[j]);
        out.violations.push(
          `(c) ${name} differs from the twin's at line ${i + 1}:\n    ${x[i]?.slice(0, 300)}\n    ${y[i]?.slice(0, 300)}`,
        );
      }
    }
  } catch (e) {
    out.violations.push(threw('e', e));
  }
  return out;
}

// ---- The tool's time windows (`--kind due,duplicate,approval,listAge,clearance`), judged against what the READMEs promise. ----
type WindowKind = 'due' | 'duplicate' | 'approval' | 'listAge' | 'clearance';
/** clearance: what happens to it, or to what it is bound to, between `screen --clear` and the run. */
const VARIATIONS = [
  'none',
  'none',
  'listUpdated',
  'otherEntry',
  'otherList',
  'account',
  'entryChanged',
  'edited',
  'makerOnly',
  'unlisted',
  'makerUnsigned',
] as const;
interface DueRow {
  /** The due day: the clock's start day (UTC, or the zone's `local` day) plus `day`. */
  day: -1 | 0 | 1;
  local: boolean;
  /** How it is written (of the format's forms, modulo their number). */
  form: number;
  hour: number;
}
interface WindowScenario {
  kind: WindowKind;
  tz: (typeof TZS)[number];
  lang: (typeof LANGS)[number];
  anchor: 'utcMidnight' | 'localMidnight' | 'dst';
  /** Seconds before the anchor the clocks start. */
  before: number;
  variant: boolean;
  /** due: the batch's format (an XLSX's dates as date cells, of the 1900 or the 1904 system), run or watched, its rows. */
  format?: 'v03' | 'v09' | 'csv' | 'xlsx' | 'xlsx1904';
  watch?: boolean;
  rows?: DueRow[];
  /** duplicate, approval, listAge: the window, and where the second command falls against its limit (s: - inside, + outside). */
  window?: '30m' | '2h' | '12h' | '24h';
  margin?: number;
  /** listAge: the list dated by its dateGenerated in UTC or in the zone's offset, or by its file's modification time. */
  listDate?: 'utc' | 'zone' | 'mtime';
  /** clearance: its variation, under an account policy (its approvers, the maker's signature) or `--approvers`, with --allow-partial. */
  variation?: (typeof VARIATIONS)[number];
  policy?: boolean;
  allowPartial?: boolean;
  /**
   * clearance: the held payee the batch's last row, the run at --rate 1 --concurrency 1 (its last row sent seconds after
   * its first), the clocks moved to 3 s before or after the expiry. (Rows in flight pass the check before the pace's wait.)
   */
  slow?: boolean;
}
const windowArb = (kinds: WindowKind[]): fc.Arbitrary<WindowScenario> =>
  fc
    .record({
      kind: fc.constantFrom(...kinds),
      tz: fc.constantFrom(...TZS),
      lang: fc.constantFrom(...LANGS),
      anchor: fc.constantFrom<WindowScenario['anchor']>('utcMidnight', 'localMidnight', 'dst'),
      before: fc.constantFrom(3, 20, 600, 5400),
      variant: fc.boolean(),
      format: fc.constantFrom<NonNullable<WindowScenario['format']>>('v03', 'v09', 'v09', 'csv', 'xlsx', 'xlsx1904'),
      watch: fc.boolean(),
      rows: fc.array(
        fc.record({
          day: fc.constantFrom<DueRow['day']>(-1, 0, 1),
          local: fc.boolean(),
          form: fc.nat(5),
          hour: fc.constantFrom(0, 1, 9, 13, 22, 23),
        }),
        { minLength: 2, maxLength: 4 },
      ),
      window: fc.constantFrom<NonNullable<WindowScenario['window']>>('30m', '2h', '12h', '24h'),
      margin: fc.constantFrom(-600, -30, 30, 600, 7200),
      listDate: fc.constantFrom<NonNullable<WindowScenario['listDate']>>('utc', 'zone', 'zone', 'mtime'),
      variation: fc.constantFrom(...VARIATIONS),
      policy: fc.boolean(),
      allowPartial: fc.boolean(),
      slow: fc.boolean(),
    })
    .map(({ format, watch, rows, window, margin, listDate, variation, policy, allowPartial, slow, ...sc }) => ({
      ...sc,
      ...(sc.kind === 'due' ? { format, watch, rows } : { window, margin: sc.kind === 'listAge' ? Math.abs(margin) : margin }),
      ...(sc.kind === 'listAge' ? { listDate } : {}),
      ...(sc.kind === 'clearance' ? { variation, policy, allowPartial, slow, margin: slow ? Math.sign(margin) * 3 : margin } : {}),
    }));

interface WindowOutcome {
  violations: string[];
  notes: string[];
  commands: number;
  payouts: number;
  /** Decisions judged: to hold (not due, a duplicate, an approval expired, a list too old) or to send. */
  judged: number;
  mustHold: number;
  mustSend: number;
  /** Too near a limit for the clocks' and processes' milliseconds, or a command across a UTC day: not judged. */
  apart: number;
}
const WINDOW_MS = { '30m': 1_800_000, '2h': 7_200_000, '12h': 43_200_000, '24h': 86_400_000 } as const;
const pad2 = (x: number) => String(x).padStart(2, '0');
/** The zone's wall time of an instant (to the second) and its offset (+05:45). */
function zoned(tz: string, t: number): { local: string; offset: string } {
  const p = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(t)
      .map((x) => [x.type, x.value]),
  );
  const local = `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}`;
  const min = Math.round((Date.parse(`${local}Z`) - Math.floor(t / 1000) * 1000) / 60_000);
  return { local, offset: `${min < 0 ? '-' : '+'}${pad2(Math.floor(Math.abs(min) / 60))}:${pad2(Math.abs(min) % 60)}` };
}
/** The UTC day a written ReqdExctnDt is due on, as src/input/README.md says: a date its own day; a time with a zone the later of its own day and its UTC day. */
function dueOf(written: string): string {
  const day = written.slice(0, 10);
  if (!/T.*(Z|[+-]\d\d:\d\d)$/.test(written)) return day;
  const utc = utcDay(Date.parse(written));
  return utc > day ? utc : day;
}

/** A scenario's sandbox, clocks and CLI (under its TZ and LANG). */
async function windowWorld(sc: WindowScenario, n: number, out: WindowOutcome) {
  const root = await workDir('pb-clock-windows-');
  const inst = install(join(root, 'install'));
  const start = anchorOf(sc) - sc.before * 1000;
  let offset = start - Date.now();
  const offset0 = offset;
  const sb = await clockSandbox(sc.variant, n, offset0);
  const vnow = () => Date.now() + offset;
  const cli = async (what: string, args: string[]) => {
    const r = await clockCli(root, inst, { tz: sc.tz, lang: sc.lang, offset }, args);
    out.commands++;
    const last = (r.stderr.trim() || r.stdout.trim()).split('\n').slice(-1)[0]?.slice(0, 240);
    out.notes.push(
      `${what} ${new Date(r.from).toISOString()}..${new Date(r.to).toISOString().slice(11)}: exit ${r.code}${r.code ? `: ${last}` : ''}`,
    );
    if (STACK.test(r.stdout + r.stderr)) out.violations.push(`(e) ${what}: ${(r.stderr || r.stdout).slice(0, 800)}`);
    return r;
  };
  const move = (to: number) => {
    const ms = Math.max(0, Math.round(to - vnow()));
    sb.advanceClock(ms);
    offset += ms;
    out.notes.push(`clocks +${Math.round(ms / 1000)} s, to ${new Date(vnow()).toISOString()}`);
  };
  /** The sandbox's payouts of each reference, and their createdAt. */
  const paid = (refs: string[]) => {
    const at = new Map(sb.snapshot().payouts.map((x) => [String(x.id), Date.parse(String(x.createdAt))]));
    const { byRef } = payoutsByReference(serviceRecords(sb), refs);
    return (ref: string) => (byRef.get(ref) ?? []).map((x) => ({ ...x, at: at.get(x.id)! }));
  };
  // Alice approves; Dan makes the plans (a policy needs its maker's signature)
  const [alice, dan] = [newKeyPair(), newKeyPair()];
  const approvers = [
    { name: 'Alice', publicKey: alice.publicKey },
    { name: 'Dan', publicKey: dan.publicKey },
  ];
  await writeFile(join(root, 'approvers.json'), JSON.stringify(approvers));
  await writeFile(join(root, 'alice.pem'), alice.privatePem, { mode: 0o600 });
  await writeFile(join(root, 'dan.pem'), dan.privatePem, { mode: 0o600 });
  const batch = async (name: string, prefix: string, amounts: string[]) => {
    await writeFile(join(root, name), generateCsv({ rows: amounts.length, currencies: ['GBP'], prefix, amount: (i) => amounts[i]! }));
    return amounts.map((_, i) => `${prefix}-${String(i + 1).padStart(4, '0')}`);
  };
  return { root, sb, start, vnow, cli, move, paid, batch, service: ['--base-url', sb.url] };
}
type World = Awaited<ReturnType<typeof windowWorld>>;
/** clearance: an approver nobody listed, with her own list. */
const EVE = newKeyPair();

/** One decision: `must` send (true), hold (false), or too near its limit to say (undefined); `count` payouts made. */
function judge(out: WindowOutcome, must: boolean | undefined, count: number, what: string) {
  if (must === undefined) return void out.apart++;
  out.judged++;
  if (must) out.mustSend++;
  else out.mustHold++;
  if (must && count !== 1) out.violations.push(`${what}: ${count} payouts, 1 due`);
  if (!must && count) out.violations.push(`${what}: ${count} payout(s), none due`);
}

/** `policy set --require-approvals 1 --approvers FILE ...more` at the scenario's service; false, a violation noted, when it fails. */
async function setPolicy(w: World, approvers: string, more: string[], out: WindowOutcome): Promise<boolean> {
  const p = await w.cli('policy set', ['policy', 'set', '--require-approvals', '1', '--approvers', approvers, ...more, ...w.service]);
  if (p.code !== 0) out.violations.push(`(e) policy set: exit ${p.code}: ${p.stderr.slice(0, 300)}`);
  return p.code === 0;
}

/**
 * (f) A batch whose rows carry a ReqdExctnDt (a pain.001's, or a column of a CSV, or an XLSX's date cells): run, or
 * watched, three times: at the clock's start, past the anchor, a day later. No row paid before its due UTC day (by
 * the sandbox's createdAt); after a command within one UTC day, each row due by then paid (a watch: every row once
 * the file's latest is due, none before); none twice.
 */
async function dueKind(sc: WindowScenario, n: number, w: World, out: WindowOutcome) {
  const fmt = sc.format!;
  const { offset } = zoned(sc.tz, w.start);
  const startDay = (local: boolean) => (local ? zoned(sc.tz, w.start).local.slice(0, 10) : utcDay(w.start));
  const rows = sc.rows!.map((r, i) => {
    const d = utcDay(Date.parse(startDay(r.local)) + r.day * 86_400_000);
    const t = `${pad2(r.hour)}:${r.hour % 2 ? '30' : '00'}:00`;
    const forms =
      fmt === 'v03'
        ? [d, `${d}Z`, `${d}${offset}`]
        : fmt === 'v09'
          ? [d, `${d}T${t}Z`, `${d}T${t}${offset}`, `${d}T${t}`, `${d}T24:00:00Z`, `${d}T24:00:00${offset}`]
          : [d];
    const written = forms[r.form % forms.length]!;
    return {
      ref: `CF${n}D-${String(i + 1).padStart(4, '0')}`,
      amount: `${30 + i}.${String(13 * (i + 1) + n).slice(-2)}`,
      written,
      due: dueOf(written),
    };
  });
  out.notes.push(`rows: ${rows.map((r) => `${r.ref} ${r.written} (due ${r.due})`).join(', ')}`);
  const ext = { v03: 'xml', v09: 'xml', csv: 'csv', xlsx: 'xlsx', xlsx1904: 'xlsx' }[fmt];
  let bytes: string | Buffer;
  if (fmt === 'v03' || fmt === 'v09') {
    const version = fmt === 'v03' ? 'pain.001.001.03' : 'pain.001.001.09';
    const sample = sampleRows().filter((r) => r.method === 'SEPA' && r.sourceCurrency === 'EUR');
    // one PmtInf per row, each of its own date
    const docs = rows.map((r, i) =>
      pain001([{ ...sample[i]!, reference: r.ref, sourceAmount: r.amount, withdrawal: 'true', documents: '' }], version, {
        msgId: `CF${n}D`,
        date: `@@${i}@@`,
      }),
    );
    const blocks = docs.map((d, i) =>
      /<PmtInf>[\s\S]*<\/PmtInf>/
        .exec(d)![0]
        .replace(/<PmtInfId>[^<]*</, `<PmtInfId>PMT-${i + 1}<`)
        .replace(
          rows[i]!.written.includes('T') ? `<Dt>@@${i}@@</Dt>` : `@@${i}@@`,
          rows[i]!.written.includes('T') ? `<DtTm>${rows[i]!.written}</DtTm>` : rows[i]!.written,
        ),
    );
    const sum = rows.reduce((a, r) => a.plus(r.amount), new Dec(0)).toFixed(2);
    bytes = docs[0]!
      .replace(/<PmtInf>[\s\S]*<\/PmtInf>/, blocks.join('\n'))
      .replace(/<NbOfTxs>\d+<\/NbOfTxs>/, `<NbOfTxs>${rows.length}</NbOfTxs>`)
      .replace(/<CtrlSum>[^<]*<\/CtrlSum>/, `<CtrlSum>${sum}</CtrlSum>`);
  } else {
    const csv = generateCsv({ rows: rows.length, currencies: ['GBP'], prefix: `CF${n}D`, amount: (i) => rows[i]!.amount });
    const lines = csv.trimEnd().split('\n');
    bytes = [`${lines[0]},ReqdExctnDt`, ...lines.slice(1).map((l, i) => `${l},${rows[i]!.written}`)].join('\n') + '\n';
    if (fmt !== 'csv') {
      // the dates as Excel writes them: serial numbers in a date format, of the workbook's date system
      const aoa = parseCsv(bytes) as unknown[][];
      const epoch = fmt === 'xlsx1904' ? Date.UTC(1904, 0, 1) : Date.UTC(1899, 11, 30);
      const ws = XLSX.utils.aoa_to_sheet(aoa);
      const col = aoa[0]!.length - 1;
      rows.forEach((r, i) => {
        ws[XLSX.utils.encode_cell({ r: i + 1, c: col })] = {
          t: 'n',
          v: (Date.parse(r.written) - epoch) / 86_400_000,
          z: ['yyyy-mm-dd', 'd/m/yyyy', 'mmmm d, yyyy'][sc.rows![i]!.form % 3],
        };
      });
      const wb = XLSX.utils.book_new();
      XLSX.utils.book_append_sheet(wb, ws, 'Payments');
      wb.Workbook = { ...wb.Workbook, WBProps: { date1904: fmt === 'xlsx1904' } };
      bytes = XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer;
    }
  }
  const watchDir = join(w.root, 'watch');
  const file = sc.watch ? join(watchDir, 'inbox', `batch.${ext}`) : join(w.root, `batch.${ext}`);
  if (sc.watch) {
    await mkdir(join(watchDir, 'inbox'), { recursive: true });
    await writeFile(join(watchDir, 'payout-batch.json'), JSON.stringify({ environment: 'sandbox', baseUrl: w.sb.url, settleSeconds: 0 }));
  }
  await writeFile(file, bytes);
  if (sc.watch) await writeFile(`${file}.ready`, '');
  const refs = rows.map((r) => r.ref);
  for (const [k, moveTo] of [undefined, anchorOf(sc) + 10_000, w.start + 86_400_000 + sc.before * 1000 + 10_000].entries()) {
    if (moveTo) w.move(moveTo);
    const r = sc.watch
      ? await w.cli(`watch --once ${k + 1}`, ['watch', watchDir, '--once'])
      : await w.cli(`run ${k + 1}`, ['run', file, '-y', '--json', '--results', join(w.root, `results.${k}.csv`), ...w.service]);
    const of = w.paid(refs);
    const day = utcDay(r.from) === utcDay(r.to) ? utcDay(r.from) : undefined;
    const latest = rows.map((x) => x.due).reduce((a, b) => (a > b ? a : b));
    for (const x of rows)
      judge(
        out,
        day === undefined ? undefined : (sc.watch ? latest : x.due) <= day,
        of(x.ref).length,
        `(f) ${x.ref} ReqdExctnDt ${x.written} (due ${x.due}${sc.watch ? `, the file's latest ${latest}` : ''}) after ${sc.watch ? 'tick' : 'run'} ${k + 1} on ${day}`,
      );
  }
  const of = w.paid(refs);
  for (const x of rows)
    for (const p of of(x.ref))
      if (utcDay(p.at) < x.due)
        out.violations.push(
          `(f) ${x.ref} ReqdExctnDt ${x.written}: paid ${new Date(p.at).toISOString()} (payout ${p.id}), before its due UTC day ${x.due}`,
        );
  for (const t of twicePaid(serviceRecords(w.sb), new Set(refs))) out.violations.push(`(a) ${t}`);
  out.payouts += refs.reduce((a, ref) => a + of(ref).length, 0);
}

/**
 * (g) `run` of two GBP rows; the clocks moved so that a second batch repeating both payees and amounts under new
 * references (and a third row paying another amount) runs just inside or just outside `--duplicate-window` of them
 * (by the sandbox's createdAt; the anchor between): each repeat held inside it, paid outside (src/engine/REFERENCE.md,
 * PROBABLE_DUPLICATE); the third paid.
 */
async function duplicateKind(sc: WindowScenario, n: number, w: World, out: WindowOutcome) {
  const W = WINDOW_MS[sc.window!];
  const amounts = [`41.${String(17 + n).slice(-2)}`, `42.${String(29 + n).slice(-2)}`];
  const first = await w.batch('first.csv', `CF${n}A`, amounts);
  const r1 = await w.cli('run first', ['run', 'first.csv', '-y', '--duplicate-window', sc.window!, ...w.service]);
  const of1 = w.paid(first);
  const made = first.map((ref) => of1(ref)[0]?.at);
  if (made.some((t) => t === undefined)) return void out.violations.push(`(g) the first batch: ${made.filter(Boolean).length} of 2 paid`);
  w.move((sc.margin! > 0 ? r1.to : Math.min(...(made as number[]))) + W + sc.margin! * 1000);
  const second = await w.batch('second.csv', `CF${n}B`, [...amounts, '47.53']);
  const r2 = await w.cli('run second', ['run', 'second.csv', '-y', '--allow-partial', '--duplicate-window', sc.window!, ...w.service]);
  const of2 = w.paid(second);
  first.forEach((ref, i) => {
    const inside = r2.to - made[i]! < W;
    const outside = r2.from - r1.to > W;
    judge(
      out,
      outside ? true : inside ? false : undefined,
      of2(second[i]!).length,
      `(g) ${second[i]} repeating ${ref} (created ${new Date(made[i]!).toISOString()}), run ${new Date(r2.from).toISOString()}, window ${sc.window}`,
    );
  });
  judge(out, true, of2(second[2]!).length, `(g) ${second[2]}, repeating nothing`);
  for (const t of twicePaid(serviceRecords(w.sb), new Set([...first, ...second]))) out.violations.push(`(a) ${t}`);
  out.payouts += [...first, ...second].reduce((a, ref) => a + (ref.includes('A-') ? of1(ref) : of2(ref)).length, 0);
}

/**
 * (h) `policy set --require-approvals 1 --approvals-expire-after W`; `plan`; `approve` (its signedAt by the clock);
 * the clocks moved so that `run --plan` starts just inside or just outside W after the approval: every row sent
 * inside, none outside (src/approvals/REFERENCE.md).
 */
async function approvalKind(sc: WindowScenario, n: number, w: World, out: WindowOutcome) {
  const W = WINDOW_MS[sc.window!];
  const refs = await w.batch('batch.csv', `CF${n}P`, ['23.45', '24.56']);
  const approvers = join(w.root, 'approvers.json');
  if (!(await setPolicy(w, approvers, ['--approvals-expire-after', sc.window!], out))) return;
  const pl = await w.cli('plan', [
    'plan',
    'batch.csv',
    '--out',
    'plan.json',
    '--as',
    'Dan',
    '--approver-key',
    join(w.root, 'dan.pem'),
    ...w.service,
  ]);
  if (pl.code !== 0) return void out.violations.push(`(e) plan: exit ${pl.code}: ${pl.stderr.slice(0, 300)}`);
  const ap = await w.cli('approve', [
    'approve',
    'plan.json',
    '--as',
    'Alice',
    '--key-file',
    join(w.root, 'alice.pem'),
    '--approvers',
    approvers,
    '-y',
  ]);
  if (ap.code !== 0) return void out.violations.push(`(e) approve: exit ${ap.code}: ${ap.stderr.slice(0, 300)}`);
  w.move((sc.margin! > 0 ? ap.to : ap.from) + W + sc.margin! * 1000);
  const r = await w.cli('run --plan', ['run', '--plan', 'plan.json', '-y', '--json', ...w.service]);
  const of = w.paid(refs);
  const must = r.to - ap.from < W ? true : r.from - ap.to > W ? false : undefined;
  for (const ref of refs)
    judge(
      out,
      must,
      of(ref).length,
      `(h) ${ref}: approved ${new Date(ap.from).toISOString()}, run --plan ${new Date(r.from).toISOString()}, approvals expire after ${sc.window}`,
    );
  for (const t of twicePaid(serviceRecords(w.sb), new Set(refs))) out.violations.push(`(a) ${t}`);
  out.payouts += refs.reduce((a, ref) => a + of(ref).length, 0);
}

/**
 * (i) `policy set --above GBP:100000 --screening-max-age W` (batches go without approval); a sanctions list dated
 * (its UN dateGenerated, in UTC or in the zone's offset, or its modification time) W plus `margin` seconds before
 * the run: a list older than W refuses the run, nothing sent (src/approvals/REFERENCE.md, "Screening"). (A list
 * dated by its day may be taken as older than it is; only the refusal is judged.)
 */
async function listAgeKind(sc: WindowScenario, n: number, w: World, out: WindowOutcome) {
  const W = WINDOW_MS[sc.window!];
  const refs = await w.batch('batch.csv', `CF${n}S`, ['31.41', '32.52']);
  if (!(await setPolicy(w, join(w.root, 'approvers.json'), ['--above', 'GBP:100000', '--screening-max-age', sc.window!], out))) return;
  const dated = w.vnow() - W - sc.margin! * 1000;
  const list = join(w.root, sc.listDate === 'mtime' ? 'names.csv' : 'un.xml');
  const { local, offset } = zoned(sc.tz, dated);
  const generated = sc.listDate === 'utc' ? new Date(dated).toISOString() : `${local}${offset}`;
  await writeFile(
    list,
    sc.listDate === 'mtime'
      ? 'name\nZebediah Quirkfeld\n'
      : `<?xml version="1.0" encoding="UTF-8"?>\n<CONSOLIDATED_LIST dateGenerated="${generated}"><INDIVIDUALS><INDIVIDUAL><DATAID>1</DATAID><FIRST_NAME>ZEBEDIAH</FIRST_NAME><SECOND_NAME>QUIRKFELD</SECOND_NAME><UN_LIST_TYPE>Test</UN_LIST_TYPE><REFERENCE_NUMBER>QDi.1</REFERENCE_NUMBER></INDIVIDUAL></INDIVIDUALS><ENTITIES/></CONSOLIDATED_LIST>\n`,
  );
  if (sc.listDate === 'mtime') await utimes(list, dated / 1000, dated / 1000);
  const r = await w.cli('run', ['run', 'batch.csv', '-y', '--json', '--sanctions-list', list, ...w.service]);
  const of = w.paid(refs);
  const tooOld = r.from - dated > W;
  for (const ref of refs)
    judge(
      out,
      tooOld ? false : undefined,
      of(ref).length,
      `(i) ${ref}: the list dated ${sc.listDate === 'mtime' ? `by its mtime ${new Date(dated).toISOString()}` : generated}, run ${new Date(r.from).toISOString()}, max age ${sc.window}`,
    );
  for (const t of twicePaid(serviceRecords(w.sb), new Set(refs))) out.violations.push(`(a) ${t}`);
  out.payouts += refs.reduce((a, ref) => a + of(ref).length, 0);
}

/**
 * (j) A batch of three GBP rows whose first payee a names list holds (plain:E1); `screen --clear` of it, `--expires W`
 * (made by Dan, who signs it under a policy), approved by Alice; then one variation (the list rewritten with another
 * entry, the same E1; the payee listed as E2 instead; also on a UN list; the payee's account edited; the entry's country
 * changed; the clearance's expiry pushed a day later by hand; approved by its maker only; by Eve, on her own list; under
 * a policy, not signed by its maker); the clocks moved to W plus `margin` after it; `run --sanctions-list ...`. The held
 * payee paid iff the clearance is valid (none, listUpdated) and unexpired when the run sends (src/engine/README.md,
 * src/approvals/clearance.ts): its payout created before the expiry; the others paid iff --allow-partial or it is.
 */
async function clearanceKind(sc: WindowScenario, n: number, w: World, out: WindowOutcome) {
  const W = WINDOW_MS[sc.window!];
  const v = sc.variation!;
  const refs = await w.batch('batch.csv', `CF${n}C`, ['51.01', '52.02', '53.03']);
  const approvers = join(w.root, 'approvers.json');
  await writeFile(join(w.root, 'eve.json'), JSON.stringify([{ name: 'Eve', publicKey: EVE.publicKey }]));
  await writeFile(join(w.root, 'eve.pem'), EVE.privatePem, { mode: 0o600 });
  const held = refs[0]!;
  const [head, first, ...others] = (await readFile(join(w.root, 'batch.csv'), 'utf8')).trimEnd().split('\n');
  const csv = [head, ...(sc.slow ? [...others, first] : [first, ...others])].join('\n') + '\n';
  await writeFile(join(w.root, 'batch.csv'), csv);
  if (!csv.includes(',Oliver Brown,')) return void out.violations.push(`(j) the batch's first payee is not Oliver Brown:\n${csv}`);
  const list = join(w.root, 'names.csv');
  const names = (id: string, country = 'IR', more = '') => writeFile(list, `name,id,country\nOliver Brown,${id},${country}\n${more}`);
  await names('E1');
  const run = ['--sanctions-list', 'names.csv', ...(sc.policy ? ['--approvers', 'eve.json'] : ['--approvers', approvers])];
  if (sc.policy) {
    if (!(await setPolicy(w, approvers, ['--above', 'GBP:100000'], out))) return;
  }
  const makerKey = sc.policy && v !== 'makerUnsigned' ? ['--approver-key', join(w.root, 'dan.pem')] : [];
  const c = await w.cli('screen --clear', [
    'screen',
    'batch.csv',
    '--sanctions-list',
    'names.csv',
    '--clear',
    held,
    '--entry',
    'plain:E1',
    '--reason',
    'another Oliver Brown, born 1990',
    '--expires',
    sc.window!,
    '--as',
    'Dan',
    ...makerKey,
    ...w.service,
  ]);
  if (c.code !== 0) return void out.violations.push(`(e) screen --clear: exit ${c.code}: ${(c.stderr || c.stdout).slice(0, 300)}`);
  const dir = join(w.root, 'clearances');
  const file = join(
    dir,
    readdirSync(dir).find((f) => f.endsWith('.clearance.json'))!,
  );
  const made = JSON.parse(await readFile(file, 'utf8')) as { expiresAt: string };
  const expires = Date.parse(made.expiresAt);
  if (!(expires >= c.from + W && expires <= c.to + W))
    out.violations.push(`(j) the clearance made ${new Date(c.from).toISOString()} --expires ${sc.window} says ${made.expiresAt}`);
  const signer = { makerOnly: ['Dan', 'dan.pem', approvers], unlisted: ['Eve', 'eve.pem', join(w.root, 'eve.json')] }[
    v as 'makerOnly' | 'unlisted'
  ] ?? ['Alice', 'alice.pem', approvers];
  const ap = await w.cli('approve', [
    'approve',
    file,
    '--as',
    signer[0]!,
    '--key-file',
    join(w.root, signer[1]!),
    '--approvers',
    signer[2]!,
    '-y',
  ]);
  if (ap.code !== 0) return void out.violations.push(`(e) approve: exit ${ap.code}: ${ap.stderr.slice(0, 300)}`);
  // the variation, after the clearance and its approval
  if (v === 'listUpdated') await names('E1', 'IR', 'Zebediah Quirkfeld,E9,SY\n');
  if (v === 'otherEntry') await names('E2');
  if (v === 'entryChanged') await names('E1', 'SY');
  if (v === 'otherList') {
    await writeFile(
      join(w.root, 'un.xml'),
      `<?xml version="1.0" encoding="UTF-8"?>\n<CONSOLIDATED_LIST dateGenerated="${new Date(w.vnow()).toISOString()}"><INDIVIDUALS><INDIVIDUAL><DATAID>E1</DATAID><FIRST_NAME>OLIVER</FIRST_NAME><SECOND_NAME>BROWN</SECOND_NAME><UN_LIST_TYPE>Test</UN_LIST_TYPE><REFERENCE_NUMBER>QDi.1</REFERENCE_NUMBER></INDIVIDUAL></INDIVIDUALS><ENTITIES/></CONSOLIDATED_LIST>\n`,
    );
    run.push('--sanctions-list', 'un.xml');
  }
  if (v === 'account')
    await writeFile(
      join(w.root, 'batch.csv'),
      csv.replace('31926819,GB29NWBK60161331926819', '55555555,GB33BUKB20201555555555').replace(',601613,', ',202015,'),
    );
  if (v === 'edited')
    await writeFile(file, (await readFile(file, 'utf8')).replace(made.expiresAt, new Date(expires + 86_400_000).toISOString()));
  w.move((sc.margin! > 0 ? expires : c.from + W) + sc.margin! * 1000);
  const r = await w.cli('run', [
    'run',
    'batch.csv',
    '-y',
    '--json',
    ...(sc.allowPartial ? ['--allow-partial'] : []),
    ...(sc.slow ? ['--rate', '1', '--concurrency', '1'] : []),
    ...run,
    ...w.service,
  ]);
  const of = w.paid(refs);
  const valid = v === 'none' || v === 'listUpdated';
  const cleared = !valid ? false : r.to < c.from + W ? true : r.from > expires ? false : undefined;
  const what = `(j) ${v}${sc.policy ? ' under a policy' : ''}: the clearance made ${new Date(c.from).toISOString()} until ${made.expiresAt}, run ${new Date(r.from).toISOString()}`;
  judge(out, cleared, of(held).length, `${what}: ${held}, the payee held`);
  for (const ref of refs.slice(1))
    judge(out, sc.allowPartial ? true : cleared, of(ref).length, `${what}${sc.allowPartial ? ', --allow-partial' : ''}: ${ref}`);
  for (const p of of(held))
    if (!valid || !(p.at < expires)) out.violations.push(`${what}: ${held} paid at ${new Date(p.at).toISOString()} (payout ${p.id})`);
  for (const t of twicePaid(serviceRecords(w.sb), new Set(refs))) out.violations.push(`(a) ${t}`);
  out.payouts += refs.reduce((a, ref) => a + of(ref).length, 0);
}

async function runWindow(sc: WindowScenario, n: number): Promise<WindowOutcome> {
  const out: WindowOutcome = { violations: [], notes: [], commands: 0, payouts: 0, judged: 0, mustHold: 0, mustSend: 0, apart: 0 };
  let w: World | undefined;
  try {
    w = await windowWorld(sc, n, out);
    const kinds = { due: dueKind, duplicate: duplicateKind, approval: approvalKind, listAge: listAgeKind, clearance: clearanceKind };
    await kinds[sc.kind](sc, n, w, out);
  } catch (e) {
    out.violations.push(threw('e', e));
  } finally {
    await w?.sb.close();
    if (w) await leave(w.root, KEEP);
  }
  return out;
}

const windowKinds = KINDS.filter((k) => k !== 'allowance') as WindowKind[];
const drawn = KINDS.includes('allowance')
  ? windowKinds.length
    ? fc.oneof(scenarioArb, windowArb(windowKinds))
    : scenarioArb
  : windowArb(windowKinds);
const scenarios = GIVEN ? [GIVEN] : fc.sample<Scenario | WindowScenario>(drawn, { seed: SEED, numRuns: RUNS });
const totals = {
  commands: 0,
  payouts: 0,
  sent2: 0,
  refused2: 0,
  straddled: 0,
  nearMonthEnd: 0,
  xml: 0,
  ...{ judged: 0, mustHold: 0, mustSend: 0, apart: 0 },
};
const started = performance.now();
const failures = await runScenarios(
  scenarios,
  { only: ONLY, given: !!GIVEN, verbose: VERBOSE },
  (sc, n): Promise<Partial<Outcome & WindowOutcome> & { violations: string[]; notes: string[] }> =>
    'kind' in sc ? runWindow(sc, n) : runScenario(sc, n),
  totals,
);
console.log(
  `clock-fuzz ${GIVEN ? 'of a scenario given' : `--seed ${SEED} --kind ${KINDS.join(',')}`}: ${scenarios.length} scenarios, ${totals.commands} commands, ${totals.payouts} payouts, batch 2 sent ${totals.sent2} / refused ${totals.refused2}, ` +
    `${totals.xml} XML documents, ${totals.straddled} runs across a UTC day counted apart, ${totals.nearMonthEnd} near a month's end; ` +
    `windows: ${totals.judged} judged (${totals.mustHold} to hold, ${totals.mustSend} to send), ${totals.apart} too near a limit counted apart; ` +
    `${failures} scenarios with a violation, ${((performance.now() - started) / 1000).toFixed(0)} s`,
);
process.exit(failures ? 1 : 0);

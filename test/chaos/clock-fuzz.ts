// Fuzz: time and locale. The same short sequence of commands run twice against two sandboxes of one seed whose clock
// is placed near a day's, a month's or a year's end or a DST change: once under a drawn TZ and LANG/LC_ALL, once
// under TZ=UTC LANG=C; judged by the sandboxes' own records (payouts, their createdAt, the request log) and by the
// outputs of the two compared, never by the tool's journal.
//   npx tsx test/chaos/clock-fuzz.ts [--seed S] [--runs N] [--verbose] [--only I] [--scenario JSON] [--keep]
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
// Exits 1 when any check fails, printing the scenario: `--scenario JSON --only I` replays it.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import * as XLSX from 'xlsx';
import { newKeyPair } from '../../src/approvals/approvals-file.ts';
import { Dec } from '../../src/money.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { canonicalJson } from '../../src/text.ts';
import { cleanEnv, generateCsv, KEY, runCli, workDir, type CliRun } from '../engine/helpers.ts';
import { schemaErrors } from '../iso20022/validate.ts';
import { fuzzFlags, leave, parseJson, payoutsByReference, runScenarios, serviceRecords, threw, twicePaid } from './fuzz-judge.ts';

const { given: GIVEN, seed: SEED, runs: RUNS, verbose: VERBOSE, only: ONLY, keep: KEEP } = fuzzFlags<Scenario>();
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
function anchorOf(sc: Scenario): number {
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
  const start = anchorOf(sc) - sc.before * 1000;
  let offset = start - Date.now();
  const offset0 = offset;
  const sb: LocalSandbox = await startSandbox({
    rateLimitPerSecond: null,
    monthlyQuota: null,
    randomSeed: SEED + n,
    shapes: sc.variant ? 'variant' : 'strict',
    now: () => Date.now() + offset0,
  });
  const vnow = () => Date.now() + offset;
  try {
    const service = ['--base-url', sb.url];
    const tz = twin ? 'UTC' : sc.tz;
    const lang = twin ? 'C' : sc.lang;
    const cli = async (what: string, args: string[]): Promise<CliRun & { from: number; to: number }> => {
      const env = cleanEnv({
        HOME: root,
        PAYOUT_API_KEY: KEY,
        PAYOUT_BATCH_RATE: '1000',
        TZ: tz,
        LANG: lang,
        LC_ALL: lang,
        PB_FUZZ_CLOCK_OFFSET_MS: String(offset),
        NODE_OPTIONS: `--import=${PRELOAD}`,
      });
      env.PAYOUT_BATCH_STATE_DIR = join(root, 'state');
      const from = vnow();
      const r = await runCli(args, { cwd: root, env, timeoutMs: 120_000 });
      const to = vnow();
      out.commands++;
      out.notes.push(
        `${label}: ${what} ${new Date(from).toISOString()}: exit ${r.code}${r.code ? `: ${r.stderr.trim().split('\n').slice(-1)[0]?.slice(0, 200)}` : ''}`,
      );
      // (e)
      if (STACK.test(r.stdout + r.stderr)) v(`(e) ${what}: ${(r.stderr || r.stdout).slice(0, 800)}`);
      return { ...r, from, to };
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

const scenarios = GIVEN ? [GIVEN] : fc.sample(scenarioArb, { seed: SEED, numRuns: RUNS });
const totals = { commands: 0, payouts: 0, sent2: 0, refused2: 0, straddled: 0, nearMonthEnd: 0, xml: 0 };
const started = performance.now();
const failures = await runScenarios(scenarios, { only: ONLY, given: !!GIVEN, verbose: VERBOSE }, runScenario, totals);
console.log(
  `clock-fuzz --seed ${SEED}: ${scenarios.length} scenarios, ${totals.commands} commands, ${totals.payouts} payouts, batch 2 sent ${totals.sent2} / refused ${totals.refused2}, ` +
    `${totals.xml} XML documents, ${totals.straddled} runs across a UTC day counted apart, ${totals.nearMonthEnd} near a month's end; ` +
    `${failures} scenarios with a violation, ${((performance.now() - started) / 1000).toFixed(0)} s`,
);
process.exit(failures ? 1 : 0);

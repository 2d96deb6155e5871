// Fuzz: `reconcile` (its figures, `--statement`'s camt.053) and `--status-report`'s pain.002 after batches whose
// payouts moved while the sandbox's clock crossed days and a month end, judged by the sandbox's own wallets and
// transactions, never by the tool's journal or results.
//   npx tsx test/chaos/statement-fuzz.ts [--seed S] [--runs N] [--verbose] [--only I] [--scenario JSON] [--keep]
//
// Each scenario (fast-check draws them from the seed): a sandbox (strict or variant reading) whose clock starts a
// few hours before a month's end, wallets holding odd cents (USD short, funded by a swap, sometimes); 1 to 3 batches
// (GBP, EUR, NGN, USD, CNY, HKD; rows whose fee converts and rounds; amounts 0.01, 999999.99, millions, typed with
// thousands separators "1,234.56", "1.234,56", "1 234,56", "1'234.56") run by main() in this process, CSV or XLSX
// results, `--status-report` or not, one of them (sometimes) in another state folder; between them steps: the clock
// moved (minutes to days), payouts moved through spec §3 (SUCCESSFUL, FAILED or REJECTED with their refunds, a
// request for information), a payout made directly through the API. Then, for each batch of the main state folder,
// `status --status-report` and 1 to 3 `reconcile --json --statement` with a period drawn (none; a UTC date; a time
// with an offset; a batch's or a refund's own time, cutting it in half) under each TZ (UTC, Pacific/Kiritimati,
// America/Los_Angeles), and once as text. Checked:
//   (a) each statement: one Stmt per wallet the batch moved in the period; its opening balance plus its entries is its
//       closing balance, both the service's balance at the period's ends; every transaction of the period in the
//       wallet once with its exact amount and direction, none outside it; a payout's charges its fee; valid (XSD);
//   (b) reconcile's figures equal the sandbox's: per currency debited, refunded, swapped and net; each row's debit,
//       refund and expected debit (amount + fee); the debits of the period no batch of the ledger explains (another
//       state folder's, the direct payout) listed apart exactly, those of the ledger's other batches as explained;
//   (c) a status report: each row's TxSts the service's status, its InstdAmt the row's amount exactly; valid (XSD);
//   (d) money exact: every amount with its currency's decimals, no float artefacts, the text output's grouped
//       figures the JSON's, the reconciliation CSV's money columns adding up to the totals;
//   (e) no "unexpected error" nor stack trace; the JSON and the statement the same under every TZ.
// Exits 1 when any check fails, printing the scenario: `--scenario JSON --only I` replays it.
import { existsSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import * as XLSX from 'xlsx';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { Dec } from '../../src/money.ts';
import { PAYOUT_TRANSITIONS, type PayoutStatus } from '../../src/spec/codes.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { HEADER, KEY, ROOT, cleanEnv, runMain, swapReferenceOfCsv, workDir } from '../engine/helpers.ts';
import { schemaErrors, texts } from '../iso20022/validate.ts';
import { fuzzFlags, leave, parseJson, runScenarios, threw } from './fuzz-judge.ts';

const { given: GIVEN, seed: SEED, runs: RUNS, verbose: VERBOSE, only: ONLY, keep: KEEP } = fuzzFlags<Scenario>();

const CURRENCIES = ['GBP', 'EUR', 'NGN', 'USD', 'CNY', 'HKD'] as const;
const ZONES = ['UTC', 'Pacific/Kiritimati', 'America/Los_Angeles'] as const;
const STYLES = ['plain', 'grouped', 'euro', 'spaced', 'apostrophe', 'comma'] as const;
const TARGETS = ['SUCCESSFUL', 'SUCCESSFUL', 'PROCESSING', 'FAILED', 'REJECTED', 'ADDITIONAL_INFO_REQUIRED'] as const;
const HOUR = 3_600_000;
const ADVANCES = [60_000, 17 * 60_000, HOUR, 5 * HOUR, 23 * HOUR, 25 * HOUR, 3 * 24 * HOUR] as const;

interface RowSpec {
  cur: number;
  tpl: number;
  cents: string;
  style: (typeof STYLES)[number];
}
interface Batch {
  rows: RowSpec[];
  xlsx: boolean;
  /** Run in a state folder of its own: its debits are no batch of the main ledger's. */
  other: boolean;
  statusReport: boolean;
}
type Step =
  | { k: 'advance'; ms: number }
  | { k: 'move'; row: number; to: (typeof TARGETS)[number] }
  | { k: 'direct'; gbp: boolean; cents: string }
  /** Top-ups of the wallets (odd cents), `count` of them, a minute apart: the transactions' listing pages. */
  | { k: 'noise'; count: number };
/** A moment drawn from the sandbox's transactions (`own`: the reconciled batch's): the tx-th (by time, modulo), moved by `delta` ms, written as `form`. */
interface Moment {
  own: boolean;
  tx: number;
  delta: number;
  /** `local`: no zone, refused (exit 2) under every TZ. */
  form: 'date' | 'Z' | 'offset' | 'local';
}
interface Reconcile {
  batch: number;
  since?: Moment;
  until?: Moment;
}
interface Scenario {
  variant: boolean;
  /** The month whose end the clock crosses (months after 2025-01), and the minutes before its end the clock starts. */
  month: number;
  before: number;
  swap: boolean;
  batches: Batch[];
  /** After each batch, its steps. */
  steps: Step[][];
  reconciles: Reconcile[];
}

const AMOUNTS = ['0.01', '0.05', '1.00', '12.34', '999.99', '1000.00', '4321.07', '999999.99', '1234567.89', '20000000.01'];
const centsArb = fc.oneof(
  fc.constantFrom(...AMOUNTS),
  fc.integer({ min: 1, max: 99_999_999 }).map((c) => (c / 100).toFixed(2)),
  fc.integer({ min: 100_000, max: 9_999_999_999 }).map((c) => new Dec(c).div(100).toFixed(2)),
);
const rowArb: fc.Arbitrary<RowSpec> = fc.record({
  cur: fc.nat(5),
  tpl: fc.nat(20),
  cents: centsArb,
  style: fc.constantFrom(...STYLES),
});
const batchArb: fc.Arbitrary<Batch> = fc.record({
  rows: fc.array(rowArb, { minLength: 1, maxLength: 6 }),
  xlsx: fc.boolean(),
  other: fc.constantFrom(false, false, true),
  statusReport: fc.boolean(),
});
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ k: fc.constant('advance' as const), ms: fc.constantFrom(...ADVANCES) }) },
  { weight: 5, arbitrary: fc.record({ k: fc.constant('move' as const), row: fc.nat(30), to: fc.constantFrom(...TARGETS) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('direct' as const), gbp: fc.boolean(), cents: centsArb }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('noise' as const), count: fc.integer({ min: 20, max: 130 }) }) },
);
const momentArb: fc.Arbitrary<Moment> = fc.record({
  own: fc.constantFrom(true, true, false),
  tx: fc.nat(100),
  delta: fc.constantFrom(0, 0, -1, 1, -60_000, 30 * 60_000, -5 * HOUR),
  form: fc.constantFrom('date', 'date', 'Z', 'Z', 'offset', 'offset', 'local'),
});
const scenarioArb: fc.Arbitrary<Scenario> = fc
  .record({
    variant: fc.boolean(),
    month: fc.nat(19),
    before: fc.constantFrom(5, 45, 130, 400),
    swap: fc.constantFrom(false, false, true),
    batches: fc.array(batchArb, { minLength: 1, maxLength: 3 }),
    steps: fc.array(fc.array(stepArb, { maxLength: 6 }), { minLength: 3, maxLength: 3 }),
    reconciles: fc.array(
      fc.record({
        batch: fc.nat(2),
        since: fc.option(momentArb, { nil: undefined, freq: 2 }),
        until: fc.option(momentArb, { nil: undefined, freq: 2 }),
      }),
      { minLength: 1, maxLength: 3 },
    ),
  })
  // (the first batch always in the main state folder: something to reconcile)
  .map((s) => ({ ...s, batches: s.batches.map((b, i) => (i === 0 ? { ...b, other: false } : b)) }));

const STACK = /unexpected error|\n\s+at .+:\d+:\d+\)?/i;
const sample = readFileSync(join(ROOT, 'samples/payroll-2025-01.csv'), 'utf8')
  .replace(/^\uFEFF/, '')
  .trim()
  .split(/\r?\n/)
  .slice(1);
const col = (name: string) => HEADER.indexOf(name);
/** Templates by source currency: the sample's rows of it, and an NIP row to NGN from it (its 100 NGN fee converted and rounded). */
const TEMPLATES = new Map<string, string[][]>(
  CURRENCIES.map((c) => {
    const rows = sample.map((l) => l.split(',')).filter((r) => r[col('sourceCurrency')] === c && !r.some((x) => x.includes('"')));
    const nip = sample.map((l) => l.split(',')).find((r) => r[col('method')] === 'NIP')!;
    return [c, [...rows, ...(c === 'NGN' ? [] : [[...nip].map((x, i) => (i === col('sourceCurrency') ? c : x))])]];
  }),
);

/** An amount as a person types it (with its thousands and decimal marks), quoted for CSV when it holds a comma. */
function typed(cents: string, style: RowSpec['style']): string {
  const [int, frac] = cents.split('.') as [string, string];
  const group = (sep: string) => int.replace(/\B(?=(\d{3})+$)/g, sep);
  const t =
    style === 'grouped'
      ? `${group(',')}.${frac}`
      : style === 'euro'
        ? `${group('.')},${frac}`
        : style === 'spaced'
          ? `${group(' ')},${frac}`
          : style === 'apostrophe'
            ? `${group("'")}.${frac}`
            : style === 'comma'
              ? `${int},${frac}`
              : cents;
  return t.includes(',') ? `"${t}"` : t;
}

interface Outcome {
  violations: string[];
  notes: string[];
  payouts: number;
  moves: number;
  reconciles: number;
  statements: number;
  entries: number;
  reports: number;
}

/** The command by main() in this process under `tz` (set for the process: Date's zone is the process's). */
async function command(args: string[], dir: string, env: Record<string, string>, tz = 'UTC') {
  process.env.TZ = tz;
  try {
    const r = await runMain(args, { cwd: dir, env: { ...env, TZ: tz } });
    return { code: r.code ?? -1, stdout: r.stdout, stderr: r.stderr };
  } finally {
    process.env.TZ = 'UTC';
  }
}

type Tx = {
  id: string;
  walletId: string;
  currency: string;
  type: string;
  amount: Dec;
  before: Dec;
  after: Dec;
  reference: string;
  at: number;
  meta: Record<string, unknown>;
};
const txsOf = (sb: LocalSandbox): Tx[] =>
  sb.snapshot().transactions.map((t) => ({
    id: String(t.id),
    walletId: String(t.walletId),
    currency: String(t.currency),
    type: String(t.type),
    amount: new Dec(String(t.amount)),
    before: new Dec(String(t.balanceBefore)),
    after: new Dec(String(t.balanceAfter)),
    reference: String(t.reference),
    at: Date.parse(String(t.createdAt)),
    meta: t.metadata as Record<string, unknown>,
  }));

/** The payout of each key (its creating idempotency record) at the sandbox. */
function payoutsByKey(sb: LocalSandbox) {
  const s = sb.snapshot();
  const keyOf = new Map<string, string>();
  for (const e of s.idempotency) {
    if (!e.recordId) continue;
    const [route] = e.fingerprint.split('\u0000');
    if (route === 'initiate') keyOf.set(String(e.recordId), e.slot.split('\u0000')[1]!);
  }
  return s.payouts.map((p) => ({
    id: String(p.id),
    key: keyOf.get(String(p.id)) ?? '',
    status: String(p.status),
    currency: String(p.sourceCurrency),
    amount: new Dec(String(p.sourceAmount)),
    fee: new Dec(String(p.fee)),
    createdAt: Date.parse(String(p.createdAt)),
  }));
}

/** A moment of the sandbox's timeline as the flag writes it, and the instant (ms) the tool must read it as (a date: its UTC day's start, or end for --until). */
function momentText(m: Moment, times: number[], end: boolean): { text: string; at: number } {
  const t = (times.length ? times[m.tx % times.length]! : Date.UTC(2025, 0, 31)) + m.delta;
  if (m.form === 'date') {
    const d = new Date(t).toISOString().slice(0, 10);
    return { text: d, at: Date.parse(d) + (end ? 86_399_999 : 0) };
  }
  if (m.form === 'Z') return { text: new Date(t).toISOString(), at: t };
  if (m.form === 'local') return { text: new Date(t).toISOString().slice(0, 19), at: t };
  // (the offset drawn from the moment: -08:00, +14:00 or +05:30)
  const offsets = [-480, 840, 330];
  const off = offsets[Math.abs(m.delta + m.tx) % 3]!;
  const local = new Date(t + off * 60_000).toISOString().slice(0, 23);
  const sign = off < 0 ? '-' : '+';
  const hh = String(Math.floor(Math.abs(off) / 60)).padStart(2, '0');
  const mm = String(Math.abs(off) % 60).padStart(2, '0');
  return { text: `${local}${sign}${hh}:${mm}`, at: t };
}

interface StmtView {
  acct: string;
  from?: string;
  to?: string;
  opening?: { amt: string; ind: string };
  closing?: { amt: string; ind: string };
  entries: { amt: string; ind: string; id?: string; chrgs?: string; kind: string }[];
}
function parseStatement(xml: string): StmtView[] {
  return xml
    .split('<Stmt>')
    .slice(1)
    .map((s) => {
      const body = s.split('</Stmt>')[0]!;
      const [head, ...ntries] = body.split('<Ntry>');
      const bal = head!
        .split('<Bal>')
        .slice(1)
        .map((b) => ({ cd: texts(b, 'Cd')[0], amt: texts(b, 'Amt')[0]!, ind: texts(b, 'CdtDbtInd')[0]! }));
      return {
        acct: /<Acct>\s*<Id>\s*<Othr>\s*<Id>([^<]*)<\/Id>/.exec(head!)?.[1] ?? '',
        from: texts(head!, 'FrDtTm')[0],
        to: texts(head!, 'ToDtTm')[0],
        opening: bal.find((b) => b.cd === 'OPBD'),
        closing: bal.find((b) => b.cd === 'CLBD'),
        entries: ntries.map((e) => ({
          amt: texts(e, 'Amt')[0]!,
          ind: texts(e, 'CdtDbtInd')[0]!,
          id: /wallet transaction ([^)<]+)\)/.exec(e)?.[1],
          chrgs: /<Chrgs>\s*<Amt[^>]*>([^<]*)</.exec(e)?.[1],
          kind: texts(e, 'AddtlNtryInf')[0]?.split(' ')[0] ?? '',
        })),
      };
    });
}
const signed = (b: { amt: string; ind: string } | undefined) =>
  b ? (b.ind === 'DBIT' ? new Dec(b.amt).negated() : new Dec(b.amt)) : undefined;
/** An ISO amount: xs:decimal, at most 2 decimals here (every currency of the fuzz), no exponent, no grouping. */
const ISO_AMOUNT = /^\d+(\.\d{1,2})?$/;
/** A figure of reconcile's JSON: exactly the currency's 2 decimals. */
const FIGURE = /^-?\d+\.\d{2}$/;

async function runScenario(sc: Scenario, n: number): Promise<Outcome> {
  const out: Outcome = { violations: [], notes: [], payouts: 0, moves: 0, reconciles: 0, statements: 0, entries: 0, reports: 0 };
  const dir = await workDir('pb-statement-fuzz-');
  const states = { main: join(dir, 'state'), other: join(dir, 'state-other') };
  const envOf = (other: boolean) => cleanEnv({ PAYOUT_BATCH_STATE_DIR: other ? states.other : states.main, PAYOUT_BATCH_RATE: '1000' });
  const outputs: string[] = [];
  const world = JSON.parse(readFileSync(join(ROOT, 'src/sandbox/default-seed.json'), 'utf8')) as {
    businesses: { wallets: { currency: string; balance: string }[] }[];
  };
  const odd: Record<string, string> = {
    NGN: '49876543210.98',
    USD: sc.swap ? '10.00' : '9876543210.11',
    EUR: '9345678901.91',
    GBP: '8765432109.19',
    CNY: '76543210987.07',
    HKD: '65432109876.03',
  };
  for (const w of world.businesses[0]!.wallets) w.balance = odd[w.currency] ?? w.balance;
  // the clock: `before` minutes before the end of the drawn month (UTC), moving on in real time from there
  const monthEnd = Date.UTC(2025, 1 + sc.month, 1);
  const t0 = Date.now();
  const sb: LocalSandbox = await startSandbox({
    seed: world,
    rateLimitPerSecond: null,
    monthlyQuota: null,
    shapes: sc.variant ? 'variant' : 'strict',
    randomSeed: SEED + n,
    now: () => monthEnd - sc.before * 60_000 + (Date.now() - t0),
  });
  const headers = { 'x-api-key': KEY, 'content-type': 'application/json' };
  const control = async (path: string, body: unknown) =>
    fetch(`${sb.url}/_sandbox/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const say = (label: string, r: { code: number; stdout: string; stderr: string }) => {
    outputs.push(r.stdout, r.stderr);
    if (STACK.test(r.stdout + r.stderr)) out.violations.push(`(e) ${label}: ${(r.stderr || r.stdout).slice(0, 800)}`);
  };
  /** Each batch: its file, results, references and intended amounts. */
  const ran: { file: string; results: string; refs: Map<string, { amount: Dec; currency: string }>; other: boolean; swapRef?: string }[] =
    [];
  const directKeys: string[] = [];
  try {
    for (const [b, batch] of sc.batches.entries()) {
      const lines = [HEADER.join(',')];
      const refs = new Map<string, { amount: Dec; currency: string }>();
      for (const [i, r] of batch.rows.entries()) {
        const cur = CURRENCIES[r.cur % CURRENCIES.length]!;
        const tpls = TEMPLATES.get(cur)!;
        const c = [...tpls[r.tpl % tpls.length]!];
        const ref = `SF${n}-${b}-${String(i + 1).padStart(3, '0')}`;
        c[col('reference')] = ref;
        c[col('sourceAmount')] = typed(r.cents, r.style);
        c[col('documents')] = '';
        c[col('withdrawal')] = 'true';
        refs.set(ref, { amount: new Dec(r.cents), currency: cur });
        lines.push(c.join(','));
      }
      const file = join(dir, `batch-${b}.csv`);
      await writeFile(file, lines.join('\n') + '\n');
      const results = join(dir, `batch-${b}.results.${batch.xlsx ? 'xlsx' : 'csv'}`);
      const usd = [...refs.values()].some((v) => v.currency === 'USD');
      const report = join(dir, `batch-${b}.run.pain002.xml`);
      const args = ['run', file, '--base-url', sb.url, '--yes', '--json', '--results', results];
      if (sc.swap && usd) args.push('--fund-by-swap');
      if (batch.statusReport) args.push('--status-report', report);
      const run = await command(args, dir, envOf(batch.other));
      say(`run of batch ${b}`, run);
      out.notes.push(
        `batch ${b}${batch.other ? ' (another state folder)' : ''}: ${batch.rows.length} rows, exit ${run.code}` +
          (run.code ? `: ${lastWords(run)}` : ''),
      );
      if (!existsSync(results)) continue;
      ran.push({ file, results, refs, other: batch.other, swapRef: sc.swap && usd ? swapReferenceOfCsv(file, 'USD') : undefined });
      if (batch.statusReport) await judgeReport(`run of batch ${b}`, report, refs, sb, out);
      for (const step of sc.steps[b] ?? []) {
        if (step.k === 'advance') {
          sb.advanceClock(step.ms);
          out.notes.push(`clock +${step.ms / 60_000} min`);
        } else if (step.k === 'move') {
          const ps = sb.snapshot().payouts;
          if (!ps.length) continue;
          const p = ps[step.row % ps.length]!;
          let from = String(p.status) as PayoutStatus;
          const path: PayoutStatus[] = [];
          if (from === 'ADDITIONAL_INFO_REQUIRED' && step.to !== 'FAILED' && step.to !== 'REJECTED') path.push((from = 'PENDING'));
          if (from === 'PENDING' && (step.to === 'SUCCESSFUL' || step.to === 'PROCESSING')) path.push((from = 'PROCESSING'));
          if (PAYOUT_TRANSITIONS[from].includes(step.to)) path.push(step.to);
          for (const to of path) {
            const r = await control(`payouts/${String(p.id)}/status`, { status: to, reason: 'Beneficiary bank declined' });
            out.moves++;
            out.notes.push(`${String(p.payoutRef)} -> ${to}: ${r.status}`);
          }
        } else if (step.k === 'noise') {
          const listed = (await (await fetch(`${sb.url}/v1/payout-api/payouts/wallets`, { headers })).json()) as unknown;
          const ids = JSON.stringify(listed).match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g) ?? [];
          for (let i = 0; i < step.count; i++) {
            const amount = `${(i * 7919) % 100_000}.${String((i * 37) % 100).padStart(2, '0')}`;
            await control(`wallets/${ids[i % ids.length]!}/credit`, {
              amount: amount === '0.00' ? '0.01' : amount,
              reference: `TOPUP-${n}-${i}`,
            });
            sb.advanceClock(60_000);
          }
          out.notes.push(`${step.count} top-ups, a minute apart`);
        } else {
          // a payout made directly through the API: no batch's
          const body = JSON.parse(directBody(step.gbp, step.cents)) as Record<string, unknown>;
          const key = `fuzz-direct-${n}-${directKeys.length}`;
          const r = await fetch(`${sb.url}/v1/payout-api/payouts/initiate`, {
            method: 'POST',
            headers: { ...headers, 'idempotency-key': key },
            body: JSON.stringify(body),
          });
          directKeys.push(key);
          out.notes.push(`a payout made directly (${step.gbp ? 'GBP' : 'EUR'} ${step.cents}): ${r.status}`);
        }
      }
    }
    out.payouts = sb.snapshot().payouts.length;

    // the main ledger's batches: status (its report), then reconciles
    const mains = ran.filter((r) => !r.other);
    if (!mains.length) return out;
    for (const [i, m] of mains.entries()) {
      const report = join(dir, `batch-main-${i}.pain002.xml`);
      const r = await command(['status', m.results, '--base-url', sb.url, '--json', '--status-report', report], dir, envOf(false));
      say(`status of ${m.results.slice(dir.length + 1)}`, r);
      await judgeReport(`status of ${m.results.slice(dir.length + 1)}`, report, m.refs, sb, out);
    }
    const txs = txsOf(sb);
    const timesOf = (ts: Tx[]) => [...new Set(ts.map((t) => t.at))].sort((a, b) => a - b);
    for (const [k, rc] of sc.reconciles.entries()) {
      const m = mains[rc.batch % mains.length]!;
      // (a batch's own times: its payouts and refunds, its swap; a period cutting them in half)
      const ids = new Set(
        payoutsByKey(sb)
          .filter((p) => [...m.refs.keys()].some((ref) => p.key === idempotencyKey(ref, 1)))
          .map((p) => p.id),
      );
      const own = timesOf(txs.filter((t) => ids.has(String(t.meta.payoutId)) || t.reference === m.swapRef));
      const pick = (x: Moment, end: boolean) => momentText(x, x.own && own.length ? own : timesOf(txs), end);
      const since = rc.since && pick(rc.since, false);
      const until = rc.until && pick(rc.until, true);
      const period = [...(since ? ['--since', since.text] : []), ...(until ? ['--until', until.text] : [])];
      const label = `reconcile ${m.results.slice(dir.length + 1)} ${period.join(' ')}`.trim();
      const seen: { zone: string; json: string; stmt?: string }[] = [];
      for (const zone of ZONES) {
        const stmt = join(dir, `stmt-${k}-${zone.replace('/', '_')}.xml`);
        const r = await command(
          ['reconcile', m.results, '--base-url', sb.url, '--json', '--no-report', '--statement', stmt, ...period],
          dir,
          envOf(false),
          zone,
        );
        out.reconciles++;
        say(`${label} (TZ ${zone})`, r);
        const json = parseJson(r.stdout);
        const nothing = /no statement written: no wallet transaction of the period is one of this batch/.test(r.stderr);
        if ([rc.since, rc.until].some((x) => x?.form === 'local')) {
          // (a time without its zone: refused, whatever the host's zone)
          if (r.code !== 2 || !/not a date \(ISO 8601 with its zone/.test(r.stderr))
            out.violations.push(
              `(e) ${label} (TZ ${zone}): a time without a zone: exit ${r.code}: ${(r.stderr || r.stdout).slice(0, 300)}`,
            );
          seen.push({ zone, json: `refused ${r.code}` });
          continue;
        }
        if (since && until && since.at > until.at) {
          // (a period ending before it starts: refused before any request, naming both flags)
          if (r.code !== 2 || !/--since .* is after --until .*: the period holds nothing/.test(r.stderr))
            out.violations.push(
              `(e) ${label} (TZ ${zone}): a period ending before it starts: exit ${r.code}: ${(r.stderr || r.stdout).slice(0, 300)}`,
            );
          seen.push({ zone, json: `refused ${r.code}` });
          continue;
        }
        if (nothing && (!json || json.error !== undefined)) {
          // (refused, exit 2, when the period holds no movement of the batch: judged so; with --json the refusal is
          // printed as {exitCode, error})
          seen.push({ zone, json: `refused ${r.code}` });
          if (zone === 'UTC') {
            out.notes.push(`${label}: exit ${r.code}: ${r.stderr.trim().slice(-200)}`);
            await judgeReconcile(label, {}, r, undefined, { since, until }, m, ran, directKeys, sb, out);
          }
          continue;
        }
        if (!json) {
          out.violations.push(`(e) ${label} (TZ ${zone}): exit ${r.code}, no JSON: ${(r.stderr || r.stdout).slice(0, 400)}`);
          continue;
        }
        const xml = await readFile(stmt, 'utf8').catch(() => undefined);
        seen.push({ zone, json: comparable(json), stmt: xml && comparableXml(xml, !until) });
        if (zone !== 'UTC') continue;
        out.notes.push(`${label}: exit ${r.code}, ${json.statement ? 'a statement' : 'no statement'}`);
        await judgeReconcile(label, json, r, xml, { since, until }, m, ran, directKeys, sb, out);
      }
      for (const s of seen.slice(1)) {
        if (s.json !== seen[0]!.json)
          out.violations.push(`(e) ${label}: its JSON under TZ ${s.zone} differs from UTC's: ${diff(seen[0]!.json, s.json)}`);
        if (s.stmt !== seen[0]!.stmt)
          out.violations.push(
            `(e) ${label}: its statement under TZ ${s.zone} differs from UTC's: ${diff(seen[0]!.stmt ?? '', s.stmt ?? '')}`,
          );
      }
    }
    // once as text (and its report): the grouped figures are the JSON's
    const m = mains[0]!;
    const text = await command(['reconcile', m.results, '--base-url', sb.url], dir, envOf(false), 'America/Los_Angeles');
    say('reconcile as text', text);
    // (d) its report reads every amount the run paid ("1.234,56" is 1234.56), none left out of its totals
    const html = await readFile(m.results.replace(/\.(csv|xlsx)$/, '.reconciliation.html'), 'utf8').catch(() => '');
    for (const note of html.match(/Row \d+: sourceAmount [^<]* is not an amount[^<]*/g) ?? [])
      out.violations.push(`(d) reconcile's report: ${note}`);
    const json = parseJson(
      (await command(['reconcile', m.results, '--base-url', sb.url, '--json', '--no-report'], dir, envOf(false))).stdout,
    );
    for (const t of (json?.totals ?? []) as Record<string, string>[]) {
      const line = text.stdout.split('\n').find((l) => l.trim().startsWith(`${t.currency}: debited`));
      const figures = /debited (\S+), refunded (\S+)(?:, swap (\S+))?, net (\S+); the results say (\S+):/.exec(line ?? '');
      if (!figures) {
        out.violations.push(`(d) reconcile as text: no line for ${t.currency}: ${text.stdout.slice(0, 300)}`);
        continue;
      }
      const [, debited, refunded, swapped, net] = figures;
      for (const [name, shown, want] of [
        ['debited', debited, t.debited],
        ['refunded', refunded, t.refunded],
        ['swap', swapped, t.swapped],
        ['net', net, t.net],
      ] as const)
        if (want !== undefined && (shown === undefined || !/^-?\d{1,3}(,\d{3})*\.\d{2}$/.test(shown) || shown.replaceAll(',', '') !== want))
          out.violations.push(`(d) reconcile as text: ${t.currency} ${name} ${shown}, the JSON's ${want}`);
    }
  } catch (e) {
    out.violations.push(threw('e', e));
  } finally {
    process.env.TZ = 'UTC';
    await sb.close();
    await leave(dir, KEEP);
  }
  return out;
}

/** The last line of a command's output that is not a JSON log line. */
const lastWords = (r: { stdout: string; stderr: string }) =>
  (r.stderr + '\n' + (parseJson(r.stdout) ? JSON.stringify(parseJson(r.stdout)).slice(0, 600) : r.stdout))
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('{"level"'))
    .slice(-2)
    .join(' | ')
    .slice(0, 300);

/** A GBP (Faster Payments) or EUR (SEPA) payout of another payment of the business. */
function directBody(gbp: boolean, cents: string): string {
  const beneficiary = gbp
    ? {
        accountName: 'Direct Payee Ltd',
        accountNumber: '31926819',
        iban: 'GB29NWBK60161331926819',
        sortCode: '601613',
        accountCurrency: 'GBP',
      }
    : { accountName: 'Direct Zahlung GmbH', iban: 'DE89370400440532013000', accountCurrency: 'EUR' };
  return JSON.stringify({
    sourceAmount: Number(cents),
    sourceCurrency: gbp ? 'GBP' : 'EUR',
    destinationCurrency: gbp ? 'GBP' : 'EUR',
    destinationCountryCode: gbp ? 'GBR' : 'DEU',
    method: gbp ? 'FASTER_PAYMENTS' : 'SEPA',
    beneficiary,
    narration: 'a payment made outside the batch',
  });
}

/** What differs by run, not by zone: the message's id and creation time, the quota's count, an open period's end (now). */
const comparable = (json: Record<string, unknown>): string => {
  const { quota: _q, statement: _s, ...rest } = json;
  const period = rest.period as Record<string, unknown> | undefined;
  return JSON.stringify({ ...rest, ...(period ? { period: { ...period, to: period.to ?? 'now' } } : {}) });
};
/** (an open period ends now: its end, and the closing balance's time, differ by run) */
const comparableXml = (xml: string, open: boolean): string =>
  (open ? xml.replaceAll(texts(xml, 'ToDtTm')[0] ?? '(none)', 'now') : xml)
    .replace(/<MsgId>PB[^<]*<\/MsgId>/g, '<MsgId/>')
    .replace(/<CreDtTm>[^<]*<\/CreDtTm>/g, '<CreDtTm/>')
    .replace(/<Id>PB[^<]*<\/Id>/g, '<Id/>');
const diff = (a: string, b: string): string => {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return `at ${i}: ${JSON.stringify(a.slice(Math.max(0, i - 60), i + 120))} / ${JSON.stringify(b.slice(Math.max(0, i - 60), i + 120))}`;
};

/** (c) A pain.002: each row's TxSts the service's status of its payout, its InstdAmt the row's amount, the sums exact; valid. */
async function judgeReport(
  label: string,
  path: string,
  refs: Map<string, { amount: Dec; currency: string }>,
  sb: LocalSandbox,
  out: Outcome,
): Promise<void> {
  const xml = await readFile(path, 'utf8').catch(() => undefined);
  if (!xml) return void out.violations.push(`(c) ${label}: no status report written`);
  out.reports++;
  const version = /urn:iso:std:iso:20022:tech:xsd:(pain\.002\.001\.\d\d)/.exec(xml)?.[1] ?? 'pain.002.001.03';
  for (const e of (await schemaErrors(xml, version)).slice(0, 3)) out.violations.push(`(c) ${label}: the report is not valid: ${e}`);
  const byRef = new Map<string, ReturnType<typeof payoutsByKey>[number]>();
  for (const p of payoutsByKey(sb)) for (const ref of refs.keys()) if (p.key === idempotencyKey(ref, 1)) byRef.set(ref, p);
  const tx = xml.split('<TxInfAndSts>').slice(1);
  if (tx.length !== refs.size) out.violations.push(`(c) ${label}: ${tx.length} transactions in the report, ${refs.size} rows`);
  const iso: Record<string, string> = {
    SUCCESSFUL: 'ACSC',
    PENDING: 'ACSP',
    PROCESSING: 'ACSP',
    ADDITIONAL_INFO_REQUIRED: 'PDNG',
    FAILED: 'RJCT',
    REJECTED: 'RJCT',
  };
  let sum = new Dec(0);
  for (const t of tx) {
    const ref = texts(t, 'OrgnlEndToEndId')[0] ?? '';
    const want = refs.get(ref);
    if (!want) {
      out.violations.push(`(c) ${label}: a transaction of no row (${ref})`);
      continue;
    }
    const p = byRef.get(ref);
    const sts = texts(t, 'TxSts')[0];
    if (p && sts !== iso[p.status]) out.violations.push(`(c) ${label}: ${ref} ${sts}, its payout ${p.id} is ${p.status} at the service`);
    if (!p && sts === 'ACSC') out.violations.push(`(c) ${label}: ${ref} ACSC, no payout of it at the service`);
    const amt = /<InstdAmt Ccy="([A-Z]{3})">([^<]*)<\/InstdAmt>/.exec(t);
    if (!amt || amt[1] !== want.currency || !ISO_AMOUNT.test(amt[2]!) || !new Dec(amt[2]!).eq(want.amount))
      out.violations.push(`(c) ${label}: ${ref} InstdAmt ${amt?.[0] ?? '(none)'}, the row's ${want.amount.toFixed(2)} ${want.currency}`);
    sum = sum.plus(want.amount);
  }
  const ctrl = texts(xml, 'OrgnlCtrlSum')[0];
  if (ctrl === undefined || !new Dec(ctrl).eq(sum)) out.violations.push(`(c) ${label}: OrgnlCtrlSum ${ctrl}, the rows' ${sum.toFixed()}`);
}

type Ran = { file: string; results: string; refs: Map<string, { amount: Dec; currency: string }>; other: boolean; swapRef?: string };

/** (a), (b), (d) of one reconcile (under UTC), from the sandbox's transactions. */
async function judgeReconcile(
  label: string,
  json: Record<string, unknown>,
  r: { code: number; stdout: string; stderr: string },
  xml: string | undefined,
  flags: { since?: { text: string; at: number }; until?: { text: string; at: number } },
  m: Ran,
  ran: Ran[],
  directKeys: string[],
  sb: LocalSandbox,
  out: Outcome,
): Promise<void> {
  const txs = txsOf(sb);
  const payouts = payoutsByKey(sb);
  const keysOf = (b: Ran) => new Set([...b.refs.keys()].flatMap((ref) => [1, 2, 3].map((a) => idempotencyKey(ref, a))));
  const mine = new Set(payouts.filter((p) => keysOf(m).has(p.key)).map((p) => p.id));
  const ledger = new Set(
    ran.filter((b) => !b.other && b !== m).flatMap((b) => payouts.filter((p) => keysOf(b).has(p.key)).map((p) => p.id)),
  );
  const ofBatch = (t: Tx) => mine.has(String(t.meta.payoutId)) || (m.swapRef !== undefined && t.reference === m.swapRef);
  // the period: --since, else the batch's first movement (its payouts' creation, its transactions); --until (a date: its end), else none
  const batchTimes = [...payouts.filter((p) => mine.has(p.id)).map((p) => p.createdAt), ...txs.filter(ofBatch).map((t) => t.at)];
  const from = flags.since?.at ?? (batchTimes.length ? Math.min(...batchTimes) : undefined);
  const to = flags.until?.at;
  const inPeriod = (t: Tx) => (from === undefined || t.at >= from) && (to === undefined || t.at <= to);

  if (!Object.keys(json).length) {
    const moved = txs.some((t) => inPeriod(t) && ofBatch(t));
    if (moved)
      out.violations.push(
        `(a) ${label}: refused "no wallet transaction of the period is one of this batch", yet the batch moved money in it`,
      );
    return;
  }
  if (r.code !== 0)
    out.violations.push(
      `(b) ${label}: exit ${r.code}, tiesOut ${String(json.tiesOut)}: ${JSON.stringify(json.problems ?? r.stderr).slice(0, 500)}`,
    );
  // (b) per currency
  const want = new Map<string, { debited: Dec; refunded: Dec; swapped?: Dec }>();
  const of = (c: string) => want.get(c) ?? want.set(c, { debited: new Dec(0), refunded: new Dec(0) }).get(c)!;
  for (const t of txs) {
    if (mine.has(String(t.meta.payoutId))) {
      const w = of(t.currency);
      if (t.meta.kind === 'payout') w.debited = w.debited.plus(t.amount);
      else w.refunded = w.refunded.plus(t.amount);
    } else if (m.swapRef !== undefined && t.reference === m.swapRef) {
      const w = of(t.currency);
      w.swapped = (w.swapped ?? new Dec(0)).plus(t.amount);
    }
  }
  const totals = (json.totals ?? []) as Record<string, string | undefined>[];
  for (const [c, w] of want) {
    const t = totals.find((x) => x.currency === c);
    if (!t) {
      out.violations.push(`(b) ${label}: no ${c} total; the sandbox moved ${w.debited.toFixed()} / ${w.refunded.toFixed()} of the batch`);
      continue;
    }
    const net = w.debited.plus(w.refunded).plus(w.swapped ?? 0);
    for (const [f, v] of [
      ['debited', w.debited],
      ['refunded', w.refunded],
      ['net', net],
      ['swapped', w.swapped],
    ] as const) {
      const shown = t[f];
      if (v === undefined && shown === undefined) continue;
      if (shown === undefined || !FIGURE.test(shown) || !new Dec(shown).eq(v ?? 0))
        out.violations.push(`(b) ${label}: ${c} ${f} ${shown}, the sandbox's ${(v ?? new Dec(0)).toFixed(2)}`);
    }
  }
  for (const t of totals)
    if (!want.has(t.currency ?? '') && [t.debited, t.refunded, t.swapped].some((v) => v !== undefined && !new Dec(v).isZero()))
      out.violations.push(`(b) ${label}: a ${t.currency} total ${JSON.stringify(t)} of nothing the sandbox moved for the batch`);
  // (b) each row: debit, refund, expected (amount + fee: the service's)
  for (const row of (json.rows ?? []) as Record<string, unknown>[]) {
    const id = row.payoutId as string | undefined;
    if (!id) continue;
    const p = payouts.find((x) => x.id === id);
    if (!p || !mine.has(id)) {
      out.violations.push(`(b) ${label}: row ${String(row.rowNumber)} names payout ${id}, none of the batch's at the sandbox`);
      continue;
    }
    const own = txs.filter((t) => String(t.meta.payoutId) === id);
    const debit = own.filter((t) => t.type === 'DEBIT').reduce((a, t) => a.plus(t.amount), new Dec(0));
    const refund = own.filter((t) => t.type === 'CREDIT').reduce((a, t) => a.plus(t.amount), new Dec(0));
    for (const [f, v] of [
      ['debit', debit],
      ['refund', refund],
      ['expected', p.amount.plus(p.fee)],
    ] as const) {
      const shown = row[f] as string | undefined;
      if (shown === undefined || !FIGURE.test(shown.replace(/^-/, '')) || !new Dec(shown).eq(v))
        out.violations.push(`(b) ${label}: row ${String(row.rowNumber)} (${id}) ${f} ${shown}, the sandbox's ${v.toFixed(2)}`);
    }
  }
  // (b) the debits of the period that are no batch's of this ledger: apart, exactly; the ledger's other batches' explained
  const debits = txs.filter((t) => t.type === 'DEBIT' && inPeriod(t) && !ofBatch(t));
  const swapLeg = (t: Tx) => txs.some((c) => c.reference === t.reference && c.type === 'CREDIT' && c.currency !== t.currency);
  const explainedWant = debits.filter((t) => ledger.has(String(t.meta.payoutId)) || swapLeg(t));
  const unexplainedWant = debits.filter((t) => !explainedWant.includes(t));
  // (and the credits of the period no row explains: top-ups, others' refunds and swap legs)
  const creditsWant = txs.filter((t) => t.type === 'CREDIT' && inPeriod(t) && !ofBatch(t));
  for (const [name, wanted] of [
    ['unexplained', unexplainedWant],
    ['explained', explainedWant],
    ['otherCredits', creditsWant],
  ] as const) {
    const shown = (json[name] ?? []) as Record<string, string>[];
    const ids = new Set(shown.map((s) => s.id));
    for (const t of wanted)
      if (!ids.has(t.id))
        out.violations.push(
          `(b) ${label}: ${name} lacks ${t.currency} ${t.amount.toFixed()} (${String(t.meta.kind)} ${t.id} at ${new Date(t.at).toISOString()})`,
        );
    for (const s of shown) {
      const t = wanted.find((x) => x.id === s.id);
      if (!t)
        out.violations.push(
          `(b) ${label}: ${name} lists ${s.amount} ${s.currency} (${s.id} at ${s.createdAt}), not one the sandbox's period holds`,
        );
      else if (!FIGURE.test(s.amount ?? '') || !new Dec(s.amount!).eq(t.amount))
        out.violations.push(`(b) ${label}: ${name} ${s.id} ${s.amount}, the sandbox's ${t.amount.toFixed(2)}`);
    }
  }
  if (directKeys.length && !unexplainedWant.length && !flags.since && !flags.until)
    out.notes.push(`${label}: the direct payouts fell outside the period`);
  // (d) the reconciliation CSV's money columns
  const recPath = json.reconciliationFile as string | undefined;
  if (recPath) {
    const lines = recPath.endsWith('.csv')
      ? parse<Record<string, string>>(await readFile(recPath, 'utf8'), { columns: true, bom: true })
      : // (a workbook: money as number cells, read back as their shortest decimal text)
        XLSX.utils
          .sheet_to_json<Record<string, string | number>>(XLSX.read(await readFile(recPath)).Sheets.Reconciliation!, { raw: true })
          .map((l) =>
            Object.fromEntries(
              Object.entries(l).map(([k, v]) => [
                k,
                typeof v === 'number' && /^-?\d+(\.\d{1,2})?$/.test(String(v)) ? new Dec(String(v)).toFixed(2) : String(v),
              ]),
            ),
          );
    const sums = new Map<string, Dec>();
    for (const l of lines) {
      for (const c of ['totalDeductible', 'debit', 'refund', 'net'])
        if (l[c] && !FIGURE.test(l[c])) out.violations.push(`(d) ${label}: the reconciliation's ${c} "${l[c]}" (${l.kind})`);
      if (l.kind === 'row' || l.kind === 'row (not created)')
        sums.set(l.currency!, (sums.get(l.currency!) ?? new Dec(0)).plus(l.debit || 0));
    }
    for (const t of totals)
      if (!(sums.get(t.currency!) ?? new Dec(0)).eq(t.debited ?? 0))
        out.violations.push(
          `(d) ${label}: the reconciliation's ${t.currency} row debits add up to ${sums.get(t.currency!)?.toFixed()}, its total ${t.debited}`,
        );
  }
  // (a) the statement
  const stmt = json.statement as { path?: string } | undefined;
  const moved = new Map<string, Tx[]>();
  for (const t of txs.filter(inPeriod)) moved.set(t.walletId, [...(moved.get(t.walletId) ?? []), t]);
  const batchWallets = [...moved].filter(([, ts]) => ts.some(ofBatch));
  if (!stmt || !xml) {
    if (batchWallets.length)
      out.violations.push(
        `(a) ${label}: no statement, though the batch moved ${batchWallets.length} wallet(s) in the period: ${r.stderr.slice(0, 300)}`,
      );
    return;
  }
  out.statements++;
  for (const e of (await schemaErrors(xml, 'camt.053.001.02')).slice(0, 3))
    out.violations.push(`(a) ${label}: the statement is not valid: ${e}`);
  const views = parseStatement(xml);
  const walletOf = (acct: string) => [...moved.keys()].find((w) => w.replace(/-/g, '') === acct);
  for (const [w] of batchWallets)
    if (!views.some((v) => v.acct === w.replace(/-/g, '')))
      out.violations.push(`(a) ${label}: no Stmt of wallet ${w}, which the batch moved in the period`);
  const fees = new Map(payouts.map((p) => [p.id, p.fee]));
  for (const v of views) {
    const w = walletOf(v.acct);
    if (!w) {
      out.violations.push(`(a) ${label}: a Stmt of account ${v.acct}, no wallet the batch moved in the period`);
      continue;
    }
    const ts = moved.get(w)!;
    out.entries += v.entries.length;
    const [opening, closing] = [signed(v.opening), signed(v.closing)];
    const sum = v.entries.reduce((a, e) => a.plus(e.ind === 'DBIT' ? new Dec(e.amt).negated() : new Dec(e.amt)), new Dec(0));
    if (!opening || !closing || !opening.plus(sum).eq(closing))
      out.violations.push(
        `(a) ${label}: wallet ${w}: opening ${opening?.toFixed()} + entries ${sum.toFixed()} != closing ${closing?.toFixed()}`,
      );
    // the service's balances at the period's ends: before its first movement of the period, after its last (or now)
    const all = txs.filter((t) => t.walletId === w);
    const first = all.find((t) => from === undefined || t.at >= from);
    const atFrom = first ? first.before : all.at(-1)!.after;
    const upTo = all.filter((t) => to === undefined || t.at <= to);
    const atTo = upTo.length ? upTo.at(-1)!.after : all[0]!.before;
    if (!opening?.eq(atFrom))
      out.violations.push(
        `(a) ${label}: wallet ${w}: opening ${opening?.toFixed()}, the service's balance at the start ${atFrom.toFixed()}`,
      );
    if (!closing?.eq(atTo))
      out.violations.push(`(a) ${label}: wallet ${w}: closing ${closing?.toFixed()}, the service's balance at the end ${atTo.toFixed()}`);
    for (const b of [v.opening, v.closing])
      if (b && !ISO_AMOUNT.test(b.amt)) out.violations.push(`(d) ${label}: a balance written ${b.amt}`);
    const ids = v.entries.map((e) => e.id);
    for (const t of ts) {
      const n = ids.filter((id) => id === t.id).length;
      if (n !== 1)
        out.violations.push(
          `(a) ${label}: transaction ${t.id} (${t.currency} ${t.amount.toFixed()}, ${String(t.meta.kind)}) ${n} times in the statement`,
        );
    }
    for (const e of v.entries) {
      const t = ts.find((x) => x.id === e.id);
      if (!t) {
        const outside = txs.find((x) => x.id === e.id);
        out.violations.push(
          `(a) ${label}: entry ${e.id} ${e.ind} ${e.amt}: ${outside ? `outside the period (${new Date(outside.at).toISOString()})` : 'no transaction of the service'}`,
        );
        continue;
      }
      if (!ISO_AMOUNT.test(e.amt) || !new Dec(e.amt).eq(t.amount.abs()) || e.ind !== (t.type === 'DEBIT' ? 'DBIT' : 'CRDT'))
        out.violations.push(`(a) ${label}: entry ${e.id} ${e.ind} ${e.amt}, the service's ${t.type} ${t.amount.toFixed()}`);
      const fee = t.meta.kind === 'payout' && mine.has(String(t.meta.payoutId)) ? fees.get(String(t.meta.payoutId)) : undefined;
      if (fee && !fee.isZero() && (e.chrgs === undefined || !new Dec(e.chrgs).eq(fee)))
        out.violations.push(`(a) ${label}: entry ${e.id}'s charges ${e.chrgs}, the payout's fee ${fee.toFixed()}`);
    }
    const start = from === undefined ? undefined : new Date(from).toISOString();
    if (start && v.from !== start) out.violations.push(`(a) ${label}: wallet ${w}: FrDtTm ${v.from}, the period's start ${start}`);
    if (to !== undefined && v.to !== new Date(to).toISOString())
      out.violations.push(`(a) ${label}: wallet ${w}: ToDtTm ${v.to}, the period's end ${new Date(to).toISOString()}`);
  }
}

const scenarios = GIVEN ? [GIVEN] : fc.sample(scenarioArb, { seed: SEED, numRuns: RUNS });
process.env.TZ = 'UTC';
const started = performance.now();
const totals = { payouts: 0, moves: 0, reconciles: 0, statements: 0, entries: 0, reports: 0 };
const failures = await runScenarios(scenarios, { only: ONLY, given: !!GIVEN, verbose: VERBOSE }, runScenario, totals);
console.log(
  `\nseed ${SEED}, ${ONLY === undefined && !GIVEN ? RUNS : 1} scenarios, ${totals.payouts} payouts, ${totals.moves} status moves, ` +
    `${totals.reconciles} reconciles (${totals.statements} statements judged, ${totals.entries} entries), ${totals.reports} status reports, ` +
    `${failures} scenarios with a violation, ${((performance.now() - started) / 1000).toFixed(0)} s`,
);
process.exitCode = failures ? 1 : 0;

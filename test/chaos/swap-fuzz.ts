// Fuzz: batches funded by a swap (spec §4.7, §1.11), judged by the sandbox's own records (its swaps and payouts,
// the key and body that made each, the requests it received), never by the tool's journal or results.
//   npx tsx test/chaos/swap-fuzz.ts [--seed S] [--runs N] [--verbose] [--only I] [--scenario JSON] [--keep]
//
// Each scenario (fast-check, from the seed): 1 to 3 batches of 3 to 10 rows in USD and GBP (their wallets short,
// 10.00 each; GBP sometimes full) and EUR (the funding wallet's own rows), a sandbox in this process (strict or
// variant reading, refusals binding their key or not), two hosts (a state folder each; or one PostgreSQL team
// ledger), and 3 to 9 steps, each with a fault or not (the rate moved after the pairs read, by 0.4% or by 3%; the
// next swap answered PROCESSING and reversed at once; 5xx or a lost answer after create, on the swap and the
// initiates):
//   run (main() here; --fund-by-swap or not, --swap-from EUR or not; the batch's swap reversed at its 1st-3rd
//   request after the swap, sometimes), the same as a process SIGKILLed 0-30 ms after its 1st-4th request after the
//   preflight, `plan --out` approved by two then `run --plan --require-approvals 2` (between them the wallets or the
//   file changed, or the short wallet drained and a `run --fund-by-swap` killed, its swap failing before effect
//   half the time, the wallet credited back), a tick of a watch folder of its own (`fundBySwap` or not),
//   the file edited (rows added, an amount changed, rows removed; under its --batch-id or not) and run again,
//   `retry` of its results (plain; or `--resend-failed` after one of its payouts FAILED and was refunded),
//   `status` then `reconcile`, the other host running the same batch (its own copy of the file), the funding or the
//   short wallet credited (control route) or drained (a swap of the fuzz's own, reference FUZZ-...), the batch's
//   swap reversed (control route).
// Checked after each step:
//   (a) no swap reference has two swaps, every swap's and every swap request's key is a swap key of its reference
//       that some run journalled (`initiating`), and no two swaps, the first not reversed, fund one row (a swap's
//       reference hashes every valid row of its currency, engine/swap.ts swapReference: it funds those with no payout
//       yet; counted apart, as notes, two swaps made by two ledgers and a first swap's credit spent in between);
//   (b) a swap is requested only by a step with --fund-by-swap, a plan naming one or a watch's fundBySwap naming its
//       currency, from the EUR wallet when
//       --swap-from EUR, into a currency of the batch's rows; under `run --plan` only the plan's swap, its wallets and
//       reference, never selling more than its swapAmount;
//   (c) no reference has two payouts (but FAILED ones resent by --resend-failed), none under a key of no reference,
//       each matches a row of a file given;
//   (d) a run that exits 0, 1 or 5 names its results, holding every row of the file (a retry: those of its file, or
//       none when nothing changed); `status --json` and `reconcile --json` show a swap of the batch with the id and
//       status the service has for its reference (one with no id, its outcome unknown to the journal: a note);
//   (e) no "unexpected error" nor stack trace, from a killed process either.
// Exits 1 when any check fails, printing the scenario: `--scenario JSON --only I` replays it.
import { subscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import pg from 'pg';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { newKeyPair } from '../../src/approvals/approvals-file.ts';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { listedPairs } from '../../src/engine/preflight.ts';
import { convertAtRate, swapReference } from '../../src/engine/swap.ts';
import { Dec, toApi } from '../../src/money.ts';
import { readResults } from '../../src/results/read.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import type { FaultConfig } from '../../src/sandbox/contract.ts';
import { IDEMPOTENCY_KEY_HEADER } from '../../src/spec/endpoints.ts';
import { approveAs, cleanEnv, generateCsv, ROOT, runCli, runMain, workDir, type CliRun } from '../engine/helpers.ts';
import { connectionTo } from '../ops/helpers.ts';
import { startCluster, type Cluster } from '../pg/cluster.ts';
import { fuzzFlags, leave, matches, parseJson, runScenarios, serviceRecords, threw, twicePaid } from './fuzz-judge.ts';

const { given: GIVEN, seed: SEED, runs: RUNS, verbose: VERBOSE, only: ONLY, keep: KEEP } = fuzzFlags<Scenario>();

// prettier-ignore
const KINDS = ['run', 'run', 'run', 'kill', 'kill', 'plan', 'plan', 'edit', 'edit', 'retry', 'resend', 'status', 'host2', 'wallet', 'reverse', 'watch'] as const;
type Kind = (typeof KINDS)[number];
const FAULTS = ['none', 'none', 'rate', 'rateFar', 'reject', '5xx', 'drop'] as const;
interface Step {
  k: Kind;
  batch: number;
  /** --fund-by-swap (run, kill, edit, host2). */
  flag: boolean;
  swapFrom: boolean;
  fault: (typeof FAULTS)[number];
  /** kill: SIGKILL at this request after the preflight (1-4); run: the batch's swap reversed at this initiate (0: not). */
  at: number;
  /** plan: what changes between `plan --out` and `run --plan`; wallet: what is done. */
  /** killRun: the short wallet drained, `run --fund-by-swap` SIGKILLed at its `at`-th request after the preflight, the wallet credited back. */
  between: 'none' | 'drainEUR' | 'creditEUR' | 'drainShort' | 'creditShort' | 'edit' | 'killRun';
  edit: 'add' | 'amount' | 'remove';
  label: boolean;
  pick: number;
}
interface Scenario {
  variant: boolean;
  storeRefusals: boolean;
  gbpShort: boolean;
  team: boolean;
  batches: { rows: number; eur: boolean }[];
  steps: Step[];
}

const stepArb: fc.Arbitrary<Step> = fc.record({
  k: fc.constantFrom(...KINDS),
  batch: fc.nat(2),
  flag: fc.constantFrom(true, true, true, false),
  swapFrom: fc.boolean(),
  fault: fc.constantFrom(...FAULTS),
  at: fc.integer({ min: 0, max: 4 }),
  between: fc.constantFrom('none', 'none', 'drainEUR', 'creditEUR', 'drainShort', 'creditShort', 'edit', 'killRun'),
  edit: fc.constantFrom('add', 'amount', 'remove'),
  label: fc.constantFrom(true, true, true, false),
  pick: fc.nat(1000),
});
const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  variant: fc.boolean(),
  storeRefusals: fc.boolean(),
  gbpShort: fc.boolean(),
  team: fc.constantFrom(false, false, true),
  batches: fc.array(fc.record({ rows: fc.integer({ min: 3, max: 10 }), eur: fc.boolean() }), { minLength: 1, maxLength: 3 }),
  steps: fc.array(stepArb, { minLength: 3, maxLength: 9 }),
});

const STACK = /unexpected error|\n\s+at .+:\d+:\d+\)?/i;
type Row = Record<string, string>;

/** Every swap request's Idempotency-Key the sandbox of the scenario received (node's http diagnostics channel). */
let received: string[] = [];
subscribe('http.server.request.start', (m) => {
  const req = (m as { request: IncomingMessage }).request;
  const key = req.headers[IDEMPOTENCY_KEY_HEADER];
  if (req.method === 'POST' && req.url?.endsWith('/swap') && typeof key === 'string') received.push(key);
});

let cluster: Cluster | undefined;

interface Outcome {
  violations: string[];
  notes: string[];
  steps: number;
  kills: number;
  swaps: number;
  reversed: number;
  payouts: number;
  refused: number;
  /** On a team ledger: 1. */
  team: number;
  /** Pairs of swaps funding one row counted apart (two ledgers, the first's credit spent between). */
  apart: number;
}

/** The swaps of the sandbox, with the key and body that made each. */
function serviceSwaps(sb: LocalSandbox) {
  const s = sb.snapshot();
  const made = new Map<string, { key: string; body: Record<string, unknown> }>();
  for (const e of s.idempotency) {
    if (!e.recordId) continue;
    const [route, json] = e.fingerprint.split('\u0000');
    if (route === 'swap') made.set(e.recordId, { key: e.slot.split('\u0000')[1]!, body: JSON.parse(json!) as Record<string, unknown> });
  }
  return s.swaps.map((w) => ({
    id: String(w.id),
    ref: String(w.payoutRef),
    status: String(w.status),
    from: String(w.sourceCurrency),
    to: String(w.destinationCurrency),
    sourceWalletId: String(w.sourceWalletId),
    destinationWalletId: String(w.destinationWalletId),
    sourceAmount: new Dec(String(w.sourceAmount)),
    createdAt: String(w.createdAt),
    made: made.get(String(w.id)),
  }));
}

async function runScenario(sc: Scenario, n: number): Promise<Outcome> {
  const out: Outcome = {
    violations: [],
    notes: [],
    steps: 0,
    kills: 0,
    swaps: 0,
    reversed: 0,
    payouts: 0,
    refused: 0,
    team: +sc.team,
    apart: 0,
  };
  const apart = new Set<string>();
  const dir = await workDir('pb-swap-fuzz-');
  received = [];
  const world = JSON.parse(readFileSync(join(ROOT, 'src/sandbox/default-seed.json'), 'utf8')) as {
    businesses: { wallets: { currency: string; balance: string }[] }[];
  };
  for (const w of world.businesses[0]!.wallets) if (w.currency === 'USD' || (w.currency === 'GBP' && sc.gbpShort)) w.balance = '10.00';
  let onRequest = (_route: string) => {};
  const sb = await startSandbox({
    seed: world,
    rateLimitPerSecond: null,
    monthlyQuota: null,
    shapes: sc.variant ? 'variant' : 'strict',
    storeRefusals: sc.storeRefusals,
    randomSeed: SEED + n,
    onRequest: (e) => void (e.route !== 'control' && onRequest(e.route)),
  });
  const conn = connectionTo(sb);
  const ledger = sc.team ? await (cluster ??= await startCluster()).newDatabase() : undefined;
  const pending: Promise<unknown>[] = [];
  try {
    const hosts = ['a', 'b'].map((h) => ({
      dir: join(dir, h),
      state: join(dir, h, 'state'),
      env: cleanEnv({
        PAYOUT_BATCH_STATE_DIR: join(dir, h, 'state'),
        PAYOUT_BATCH_RATE: '1000',
        ...(ledger ? { PAYOUT_BATCH_LEDGER_URL: ledger } : {}),
      }),
    }));
    for (const h of hosts) await mkdir(h.dir, { recursive: true });
    /** The state folders (each a ledger of its own but for a team ledger's): the hosts', then each watch folder's. */
    const states: [string, string][] = hosts.map((h, i) => [h.state, 'ab'[i]!]);
    const service = ['--base-url', sb.url];
    // the batches: references unique per batch, amounts unique across them
    let header: string[] = [];
    const sheets = sc.batches.map((b, i) => {
      const csv = generateCsv({
        rows: b.rows,
        currencies: b.eur ? ['USD', 'GBP', 'EUR'] : ['USD', 'GBP'],
        prefix: `SF${n}B${i}`,
        amount: (j) => `${(i + 1) * 100 + j * 7}.${String(10 + j)}`,
      });
      const rows = parse<Row>(csv, { columns: true });
      header = Object.keys(rows[0]!);
      return rows;
    });
    const fileOf = (b: number, host = 0) => join(hosts[host]!.dir, `batch-${b}.csv`);
    const save = (rows: Row[], path: string) => writeFile(path, stringify([header, ...rows.map((r) => header.map((h) => r[h] ?? ''))]));
    /** Every content given to a step: its rows (for check (c)) and the swap reference of each currency's rows (a). */
    const everGiven: Row[] = [];
    const refs = new Set<string>();
    const covers = new Map<string, Set<string>>();
    const give = (rows: Row[]) => {
      for (const r of rows) {
        everGiven.push({ ...r });
        refs.add(r.reference!);
      }
      for (const c of new Set(rows.map((r) => r.sourceCurrency!))) {
        const mine = rows.filter((r) => r.sourceCurrency === c).map((r) => r.reference!);
        covers.set(swapReference(mine, c), new Set(mine.map((x) => `${c}|${x}`)));
      }
    };
    for (const [b, rows] of sheets.entries()) {
      await save(rows, fileOf(b));
      give(rows);
    }
    const shortOf = (b: number) =>
      [...new Set(sheets[b]!.map((r) => r.sourceCurrency!))].filter((c) => c === 'USD' || (c === 'GBP' && sc.gbpShort));
    const lastResults = new Map<number, string>();
    const keys = { Alice: newKeyPair(), Bob: newKeyPair() };
    const approvers = join(dir, 'approvers.json');
    await writeFile(approvers, JSON.stringify(Object.entries(keys).map(([name, k]) => ({ name, publicKey: k.publicKey }))));
    let resendAsked = false;
    let drains = 0;

    const walletsNow = async () => (await conn.client.listWallets()).data;
    const credit = async (currency: string, amount: string) => {
      const w = (await walletsNow()).find((x) => x.currency === currency)!;
      const r = await fetch(`${sb.url}/_sandbox/wallets/${w.walletId}/credit`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount }),
      });
      return `${currency} credited ${amount}: ${r.status}`;
    };
    /** A swap of the fuzz's own (reference FUZZ-DRAIN-k) into CNY, leaving `leave` in the wallet. */
    const drain = async (currency: string, leave: string) => {
      const all = await walletsNow();
      const w = all.find((x) => x.currency === currency)!;
      const to = all.find((x) => x.currency === 'CNY')!;
      const amount = new Dec(String(w.balance)).minus(leave);
      if (!amount.greaterThan(0)) return `${currency} not drained (${String(w.balance)})`;
      const rate = ((await listedPairs(conn.client)) ?? []).find((p) => p.baseCurrency === currency && p.quoteCurrency === 'CNY');
      if (!rate?.rate) return `${currency} not drained (no ${currency}/CNY pair)`;
      const body = {
        sourceWalletId: w.walletId,
        destinationWalletId: to.walletId,
        swapAmount: toApi(amount),
        swapCurrency: currency,
        amountToBeSent: toApi(convertAtRate(amount, 'CNY', new Dec(String(rate.rate)), true)),
        currencyToBeSent: 'CNY',
        reference: `FUZZ-DRAIN-${++drains}`,
      };
      try {
        await conn.client.swap(JSON.stringify(body), { idempotencyKey: `fuzz-drain-swap-${drains}` });
        return `${currency} drained to ${leave}`;
      } catch (e) {
        return `${currency} drain refused: ${e instanceof Error ? e.message : String(e)}`;
      }
    };
    const reverse = async () => {
      const s = serviceSwaps(sb).filter((w) => !w.ref.startsWith('FUZZ-') && w.status !== 'REJECTED');
      const w = s.at(-1);
      if (!w) return 'no swap to reverse';
      const r = await fetch(`${sb.url}/_sandbox/swaps/${w.id}/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ status: 'REJECTED', reason: 'reversed by the fuzz' }),
      });
      if (r.ok) out.reversed++;
      return `swap ${w.ref} reversed: ${r.status}`;
    };
    const faultOf = (f: Step['fault']): Partial<FaultConfig> =>
      ({
        none: {},
        rate: { rateMoveAfterPairsRead: { pct: 0.4, times: 1 } },
        rateFar: { rateMoveAfterPairsRead: { pct: -3, times: 1 } },
        reject: { rejectNextSwaps: 1 },
        '5xx': { errorAfterCreate: 0.5, routes: ['swap', 'initiate'] },
        drop: { dropAfterCreate: 0.5, routes: ['swap', 'initiate'] },
      })[f] as Partial<FaultConfig>;

    /** Runs a command of a host: main() here, or a process killed at its `killAt`-th request after the preflight. */
    const cmd = async (args: string[], host: number, o: { killAt?: number; delay?: number; reverseAt?: number } = {}): Promise<CliRun> => {
      const h = hosts[host]!;
      if (o.killAt) {
        let started = false;
        let count = 0;
        let child: { kill: (s: NodeJS.Signals) => boolean } | undefined;
        onRequest = (route) => {
          if (route === 'listSwaps' || route === 'swap' || route === 'initiate') started = true;
          // (0 to 30 ms later: a kill between the answer and the next journal line or request too)
          if (started && ++count === o.killAt) setTimeout(() => child?.kill('SIGKILL'), o.delay ?? 0);
        };
        const r = await runCli(args, { cwd: h.dir, env: h.env, onSpawn: (c) => (child = c) });
        onRequest = () => {};
        return r;
      }
      if (o.reverseAt) {
        // (counted from the swap on: the 1st is most often the wallets read that checks its credit, before any row)
        let seen = -1;
        onRequest = (route) => {
          if (route === 'swap' && seen < 0) seen = 0;
          else if (seen >= 0 && ++seen === o.reverseAt) pending.push(reverse().then((t) => out.notes.push(`  mid-run: ${t}`)));
        };
      }
      const r = await runMain(args, { cwd: h.dir, env: h.env });
      onRequest = () => {};
      await Promise.all(pending.splice(0));
      return r;
    };

    for (const [k, step] of sc.steps.entries()) {
      const b = step.batch % sheets.length;
      const file = fileOf(b);
      const what = `step ${k + 1} ${step.k} of batch ${b}`;
      const swapsBefore = new Set(serviceSwaps(sb).map((w) => w.id));
      const swapRequestsBefore = sb.requestLog().filter((e) => e.route === 'swap').length;
      const payoutsBefore = new Set(serviceRecords(sb).map((p) => p.id));
      /** What this step may swap: undefined none; else the plan's swaps when `run --plan`. */
      let mayswap:
        | { plan?: { reference: string; swapAmount: string; sourceWalletId: string; destinationWalletId: string }[]; into?: string[] }
        | undefined;
      let given: Row[] | undefined;
      const runs: { label: string; r: CliRun; given?: Row[] }[] = [];
      const flags = (s: Step) => [...(s.flag ? ['--fund-by-swap'] : []), ...(s.swapFrom ? ['--swap-from', 'EUR'] : [])];
      sb.setFaults(faultOf(step.fault));
      const did: string[] = [];
      switch (step.k) {
        case 'run':
        case 'kill': {
          if (step.flag) mayswap = {};
          const args = ['run', file, ...flags(step), ...service, '--yes', '--json', '--allow-partial'];
          const r = await cmd(
            args,
            0,
            step.k === 'kill' ? { killAt: Math.max(1, step.at), delay: (step.pick % 4) * 10 } : { reverseAt: step.at % 4 },
          );
          if (step.k === 'kill') {
            out.kills += r.signal ? 1 : 0;
            did.push(r.signal ? `killed at request ${Math.max(1, step.at)} after the preflight` : `not killed: exit ${r.code}`);
            if (STACK.test(r.stderr)) out.violations.push(`(e) ${what}: ${r.stderr.slice(0, 800)}`);
          } else runs.push({ label: 'run', r, given: sheets[b] });
          break;
        }
        case 'plan': {
          const plan = join(hosts[0]!.dir, `plan-${k}.json`);
          const p = await cmd(
            ['plan', file, '--out', plan, '--prepared-by', 'Dan', '--allow-partial', ...flags({ ...step, flag: false }), ...service],
            0,
          );
          if (STACK.test(p.stderr + p.stdout)) out.violations.push(`(e) ${what} plan: ${p.stderr.slice(0, 800)}`);
          const made = parseJson(await readFile(plan, 'utf8').catch(() => ''));
          if (!made) {
            did.push(`plan exit ${p.code}, no plan: ${p.stderr.trim().split('\n').slice(-1)[0]?.slice(0, 200)}`);
            break;
          }
          const planned = (made.swaps ?? []) as {
            reference: string;
            swapAmount: string;
            sourceWalletId: string;
            destinationWalletId: string;
          }[];
          did.push(`plan exit ${p.code}: ${planned.length} swaps (${planned.map((s) => `${s.swapAmount} ${s.reference}`).join(', ')})`);
          mayswap = { plan: planned };
          for (const who of ['Alice', 'Bob'] as const) await approveAs(plan, who, keys[who].privatePem);
          if (step.between === 'edit') {
            did.push(editBatch(sheets[b]!, step, `${n}-${k}`));
            await save(sheets[b]!, file);
            give(sheets[b]!);
          } else if (step.between === 'killRun') {
            const short = shortOf(b)[0] ?? 'USD';
            const was = new Dec(String((await walletsNow()).find((w) => w.currency === short)!.balance));
            did.push(await drain(short, '5.00'));
            const args = ['run', file, '--fund-by-swap', ...service, '--yes', '--json', '--allow-partial'];
            // (half the time its swap fails before any effect: journalled, never made)
            if (step.pick % 2) sb.setFaults({ errorBeforeEffect: 1, routes: ['swap'] });
            const killed = await cmd(args, 0, { killAt: Math.max(1, step.at), delay: (step.pick % 4) * 10 });
            sb.setFaults(faultOf(step.fault));
            out.kills += killed.signal ? 1 : 0;
            did.push(
              killed.signal
                ? `a run --fund-by-swap killed at request ${Math.max(1, step.at)}`
                : `a run --fund-by-swap: exit ${killed.code}`,
            );
            if (STACK.test(killed.stderr)) out.violations.push(`(e) ${what} killed run: ${killed.stderr.slice(0, 800)}`);
            const now = new Dec(String((await walletsNow()).find((w) => w.currency === short)!.balance));
            if (was.greaterThan(now)) did.push(await credit(short, was.minus(now).toFixed(2)));
            // (what the killed run swapped is its own: the plan's run is judged from here)
            for (const w of serviceSwaps(sb)) swapsBefore.add(w.id);
          } else if (step.between !== 'none') did.push(await walletStep(step.between));
          const r = await cmd(
            ['run', '--plan', plan, '--require-approvals', '2', '--approvers', approvers, '--yes', '--json', ...service],
            0,
          );
          runs.push({ label: 'run --plan', r, given: sheets[b] });
          break;
        }
        case 'edit': {
          if (step.flag) mayswap = {};
          did.push(editBatch(sheets[b]!, step, `${n}-${k}`));
          await save(sheets[b]!, file);
          give(sheets[b]!);
          const label = step.label ? ['--batch-id', `sf-${n}-${b}`] : [];
          const r = await cmd(['run', file, ...label, ...flags(step), ...service, '--yes', '--json', '--allow-partial'], 0);
          runs.push({ label: `run${step.label ? ' --batch-id' : ''}`, r, given: sheets[b] });
          break;
        }
        case 'retry':
        case 'resend': {
          const results = lastResults.get(b);
          if (!results) {
            did.push('no results to retry');
            break;
          }
          if (step.k === 'resend') {
            const t = await readResults(results);
            const row = t.rows.filter((x) => x.result.payoutId)[step.pick % Math.max(1, t.rows.length)];
            if (row?.result.payoutId) {
              for (const status of ['PROCESSING', 'FAILED'])
                await fetch(`${sb.url}/_sandbox/payouts/${row.result.payoutId}/status`, {
                  method: 'POST',
                  headers: { 'content-type': 'application/json' },
                  body: JSON.stringify({ status, reason: 'failed by the fuzz' }),
                });
              did.push(`payout of ${row.cells.reference} FAILED`);
            }
            const st = await cmd(['status', results, ...service, '--json'], 0);
            if (STACK.test(st.stderr + st.stdout)) out.violations.push(`(e) ${what} status: ${st.stderr.slice(0, 800)}`);
            resendAsked = true;
          }
          const r = await cmd(['retry', results, ...(step.k === 'resend' ? ['--resend-failed'] : []), ...service, '--yes', '--json'], 0);
          runs.push({ label: step.k, r, given: (await readResults(results)).rows.map((x) => x.cells as Row) });
          break;
        }
        case 'status': {
          const results = lastResults.get(b);
          if (!results) {
            did.push('no results');
            break;
          }
          for (const c of ['status', 'reconcile'] as const) {
            const r = await cmd([c, results, ...service, '--json'], 0);
            if (STACK.test(r.stderr + r.stdout)) out.violations.push(`(e) ${what} ${c}: ${r.stderr.slice(0, 800)}`);
            const json = parseJson(r.stdout.trim().split('\n').at(-1) ?? '') ?? parseJson(r.stdout);
            const shown = (json?.swaps ?? []) as { reference: string; id?: string; status?: string }[];
            const service_ = serviceSwaps(sb);
            did.push(
              `${c} exit ${r.code}: ${shown.map((s) => `${s.reference} ${s.id ?? '-'} ${s.status ?? '-'}`).join(', ') || 'no swap shown'}`,
            );
            for (const s of shown) {
              const at = service_.find((w) => w.ref === s.reference);
              // (a swap this batch's journal holds no answer of is not asked about: status reads what has an id, as for payouts)
              if (at && s.id === undefined)
                out.notes.push(`(d?) ${what}: ${c} shows ${s.reference} ${s.status ?? ''}, the service has ${at.id} ${at.status}`);
              else if (at && (at.id !== s.id || at.status !== s.status))
                out.violations.push(
                  `(d) ${what}: ${c} shows swap ${s.reference} as ${s.id ?? '(none)'} ${s.status ?? ''}, the service has ${at.id} ${at.status}`,
                );
            }
            // (a swap the service has for this batch's rows, shown by neither)
            for (const cur of shortOf(b)) {
              const mine = sheets[b]!.filter((x) => x.sourceCurrency === cur).map((x) => `${cur}|${x.reference}`);
              const at = service_.filter((w) => [...(covers.get(w.ref) ?? [])].some((x) => mine.includes(x)));
              for (const w of at)
                if (!shown.some((s) => s.reference === w.ref) && (r.code === 0 || r.code === 1 || r.code === 5))
                  out.notes.push(`(d?) ${what}: ${c} shows no swap ${w.ref} (${w.id} ${w.status}) of the batch's ${cur} rows`);
            }
          }
          break;
        }
        case 'host2': {
          if (step.flag) mayswap = {};
          await copyFile(file, fileOf(b, 1));
          const r = await cmd(['run', fileOf(b, 1), ...flags(step), ...service, '--yes', '--json', '--allow-partial'], 1);
          runs.push({ label: 'run on host b', r, given: sheets[b] });
          break;
        }
        case 'watch': {
          // a watch folder of host a, its configuration's fundBySwap naming the short currencies (swapFrom: USD only), or none
          const into = step.flag ? (step.swapFrom ? ['USD'] : ['USD', 'GBP']) : undefined;
          if (into) mayswap = { into };
          const folder = join(hosts[0]!.dir, `watch-${k}`);
          states.push([join(folder, '.state'), `watch-${k}`]);
          await mkdir(join(folder, 'inbox'), { recursive: true });
          const config = { environment: 'sandbox', baseUrl: sb.url, settleSeconds: 0, rate: 1000, allowPartial: step.label };
          const fund = into && { fundBySwap: Object.fromEntries(into.map((c) => [c, '100000'])) };
          await writeFile(join(folder, 'payout-batch.json'), JSON.stringify({ ...config, ...fund }));
          await copyFile(file, join(folder, 'inbox', `batch-${b}.csv`));
          const r = await cmd(['watch', folder, '--once'], 0);
          if (STACK.test(r.stderr + r.stdout)) out.violations.push(`(e) ${what} watch: ${r.stderr.slice(0, 800)}`);
          const where = (await readdir(join(folder, 'done')).catch(() => [])).length ? 'done' : 'not done';
          const why = r.code ? `: ${r.stderr.trim().split('\n').slice(-1)[0]?.slice(0, 240)}` : '';
          did.push(`watch${into ? ` (fundBySwap ${into.join(', ')})` : ''}: exit ${r.code}, ${where}${why}`);
          break;
        }
        case 'wallet':
          did.push(await walletStep(step.between === 'none' || step.between === 'edit' ? 'creditShort' : step.between));
          break;
        case 'reverse':
          did.push(await reverse());
          break;
      }
      sb.setFaults({});
      out.steps++;

      async function walletStep(how: Step['between']): Promise<string> {
        const short = shortOf(b)[0] ?? 'USD';
        if (how === 'drainEUR') return drain('EUR', String(50 + (step.pick % 200)));
        if (how === 'creditEUR') return credit('EUR', '1000.00');
        if (how === 'drainShort') return drain(short, '5.00');
        return credit(short, String(20 + (step.pick % 400)));
      }

      for (const { label, r, given: g } of runs) {
        given = g;
        if (STACK.test(r.stderr + r.stdout)) out.violations.push(`(e) ${what} ${label}: ${r.stderr.slice(0, 800)}`);
        const json = parseJson(r.stdout.trim().split('\n').at(-1) ?? '') ?? parseJson(r.stdout);
        const written = typeof json?.results === 'string' ? json.results : undefined;
        // (--json: the reasons of a refusal or a halt, else the last lines said)
        const reasons = [json?.refused, json?.halted].flat().filter((x) => typeof x === 'string');
        const said = reasons.length ? reasons.join(' | ') : r.stderr.trim().split('\n').slice(-2).join(' | ');
        did.push(`${label}: exit ${r.code}${r.code ? `: ${said.slice(0, 300)}` : ''}`);
        if (r.code === 0 || r.code === 1 || r.code === 5) {
          // (a retry whose results would be the file given writes none: nothing changed)
          if (!written && !label.startsWith('re')) out.violations.push(`(d) ${what} ${label}: exit ${r.code} and no results named`);
          else if (!written) did.push('no new results');
          else {
            if (label !== 'run on host b') lastResults.set(b, written);
            const after = (await readResults(written)).rows.map((x) => x.cells.reference ?? '').sort();
            const want = (g ?? []).map((x) => x.reference ?? '').sort();
            if (g && JSON.stringify(after) !== JSON.stringify(want))
              out.violations.push(`(d) ${what} ${label}: ${want.length} rows given, ${after.length} in ${written}`);
          }
        } else {
          out.refused++;
          if (!r.stderr.trim() && !r.stdout.trim()) out.violations.push(`(d) ${what} ${label}: exit ${r.code} saying nothing`);
        }
      }
      void given;
      out.notes.push(
        `${what}${step.fault !== 'none' ? ` [${step.fault}]` : ''}${step.flag ? '' : ' (no --fund-by-swap)'}: ${did.join('; ')}`,
      );

      // (b) swaps and swap requests of this step
      const swaps = serviceSwaps(sb);
      const fresh = swaps.filter((w) => !swapsBefore.has(w.id) && !w.ref.startsWith('FUZZ-'));
      out.swaps += fresh.length;
      const swapRequests = sb.requestLog().filter((e) => e.route === 'swap').length - swapRequestsBefore;
      const ownDrains = swaps.filter((w) => !swapsBefore.has(w.id) && w.ref.startsWith('FUZZ-')).length;
      if (!mayswap && swapRequests > ownDrains && step.k !== 'wallet')
        out.violations.push(`(b) ${what}: ${swapRequests - ownDrains} swap requests by a step without --fund-by-swap or a plan`);
      for (const w of fresh) {
        out.notes.push(`  swap ${w.id} ${w.ref} ${w.sourceAmount.toFixed()} ${w.from} -> ${w.to} ${w.status} (key ${w.made?.key})`);
        if (!mayswap) out.violations.push(`(b) ${what}: swap ${w.id} ${w.ref} by a step without --fund-by-swap or a plan`);
        if (step.swapFrom && step.k !== 'watch' && w.from !== 'EUR')
          out.violations.push(`(b) ${what}: swap ${w.id} from ${w.from}, --swap-from EUR`);
        if (!sheets[b]!.some((x) => x.sourceCurrency === w.to)) out.violations.push(`(b) ${what}: swap ${w.id} into ${w.to}, no row of it`);
        if (mayswap?.into && !mayswap.into.includes(w.to))
          out.violations.push(`(b) ${what}: swap ${w.id} into ${w.to}, the watch's fundBySwap names ${mayswap.into.join(', ')}`);
        if (mayswap?.plan) {
          const p = mayswap.plan.find((x) => x.reference === w.ref);
          if (!p) out.violations.push(`(b) ${what}: swap ${w.id} ${w.ref} is not the plan's`);
          else if (
            w.sourceAmount.greaterThan(p.swapAmount) ||
            w.sourceWalletId !== p.sourceWalletId ||
            w.destinationWalletId !== p.destinationWalletId
          )
            out.violations.push(
              `(b) ${what}: swap ${w.id} sells ${w.sourceAmount.toFixed()} ${w.from}, the plan ${p.swapAmount} (or other wallets)`,
            );
        }
      }
      // (a)
      const journalled = await journalledSwapKeys(states, ledger);
      const byRef = new Map<string, typeof swaps>();
      for (const w of swaps.filter((x) => !x.ref.startsWith('FUZZ-'))) byRef.set(w.ref, [...(byRef.get(w.ref) ?? []), w]);
      for (const [ref, ws] of byRef) {
        if (ws.length > 1)
          out.violations.push(
            `(a) after ${what}: ${ws.length} swaps of reference ${ref}: ${ws.map((w) => `${w.id} ${w.status}`).join(', ')}`,
          );
        if (!covers.has(ref)) out.violations.push(`(a) after ${what}: swap ${ws[0]!.id} of reference ${ref}, no batch's`);
        for (const w of ws) {
          const key = w.made?.key;
          const ofRef = key && Array.from({ length: 8 }, (_, a) => idempotencyKey(ref, a + 1, 'swap')).includes(key);
          if (!ofRef) out.violations.push(`(a) after ${what}: swap ${w.id} under key ${key}, not a swap key of ${ref}`);
          else if (!journalled.has(key)) out.violations.push(`(a) after ${what}: swap ${w.id} under key ${key} no run journalled`);
        }
      }
      for (const key of new Set(received))
        if (!key.startsWith('fuzz-') && !journalled.has(key))
          out.violations.push(`(a) after ${what}: a swap request under key ${key} no run journalled`);
      // (a swap's reference names every valid row of its currency; it funds those with no payout yet when it was made)
      const mine = swaps.filter((x) => !x.ref.startsWith('FUZZ-'));
      const paid = paidRows(sb, refs);
      const funds = (w: (typeof mine)[number]) =>
        new Set([...(covers.get(w.ref) ?? [])].filter((row) => !paid.some((p) => p.row === row && p.at <= w.createdAt)));
      for (const [i, s1] of mine.entries())
        for (const s2 of mine.slice(i + 1)) {
          const a = funds(s1);
          const shared = [...funds(s2)].filter((x) => a.has(x));
          if (!shared.length || s1.status === 'REJECTED' || s1.ref === s2.ref) continue;
          const [o1, o2] = [journalled.get(s1.made?.key ?? ''), journalled.get(s2.made?.key ?? '')];
          // (the first swap's credit spent in between by other rows or the fuzz's own drain: a wallet is the account's, not a batch's)
          const spent = [
            ...paid.filter((p) => p.row.startsWith(`${s1.to}|`) && !a.has(p.row) && p.at > s1.createdAt && p.at <= s2.createdAt),
            ...swaps.filter(
              (w) => w.ref.startsWith('FUZZ-') && w.from === s1.to && w.createdAt > s1.createdAt && w.createdAt <= s2.createdAt,
            ),
          ].length;
          // (two hosts of their own ledgers: neither knows what the other sent; README "A team ledger")
          const twoLedgers = !!o1 && !!o2 && !o1.has('team') && ![...o1].some((h) => o2.has(h));
          const pair = `${s1.id} ${s2.id}`;
          if ((twoLedgers || spent) && !apart.has(pair)) {
            apart.add(pair);
            out.apart++;
          }
          if (twoLedgers)
            out.notes.push(
              `(a, two ledgers) after ${what}: swaps ${s1.ref} and ${s2.ref} by hosts ${[...(o1 ?? [])].join()} and ${[...(o2 ?? [])].join()} both fund ${shared[0]}`,
            );
          else if (spent)
            out.notes.push(
              `(a, credit spent between) after ${what}: swaps ${s1.ref} and ${s2.ref} both fund ${shared[0]}; ${spent} debits between`,
            );
          else
            out.violations.push(
              `(a) after ${what}: swaps ${s1.id} ${s1.ref} (${s1.status}) and ${s2.id} ${s2.ref} both fund ${shared.slice(0, 3).join(', ')}${shared.length > 3 ? '...' : ''}`,
            );
        }
      // (c)
      const payouts = serviceRecords(sb);
      out.payouts += payouts.filter((p) => !payoutsBefore.has(p.id)).length;
      out.violations.push(...twicePaid(payouts, refs, { resendAsked }).map((v) => `(c) after ${what}: ${v}`));
      for (const p of payouts)
        if (p.made && !p.made.key.startsWith('fuzz-') && !everGiven.some((g) => matches(g, p.made!.body)))
          out.violations.push(`(c) after ${what}: payout ${p.id} matches no row of any file given`);
    }
  } catch (e) {
    out.violations.push(threw('e', e));
  } finally {
    onRequest = () => {};
    await Promise.allSettled(pending);
    await sb.close();
    await leave(dir, KEEP);
  }
  return out;
}

/** Each payout of a reference the files named: its row (`CUR|reference`) and when it was made. */
function paidRows(sb: LocalSandbox, refs: Set<string>): { row: string; at: string }[] {
  const refOf = new Map([...refs].flatMap((ref) => Array.from({ length: 8 }, (_, a) => [idempotencyKey(ref, a + 1), ref] as const)));
  const made = new Map(serviceRecords(sb).map((p) => [p.id, p.made]));
  return sb.snapshot().payouts.flatMap((p) => {
    const m = made.get(String(p.id));
    const ref = m && refOf.get(m.key);
    return ref ? [{ row: `${String(m.body.sourceCurrency)}|${ref}`, at: String(p.createdAt) }] : [];
  });
}

/** A batch's rows edited in place: rows added (it needs more), an amount changed, rows removed (it needs less). */
function editBatch(rows: Row[], s: Step, tag: string): string {
  const at = s.pick % rows.length;
  if (s.edit === 'add' || rows.length < 2) {
    const copies = [0, 1].map((j): Row => ({
      ...rows[(at + j) % rows.length]!,
      reference: `SFADD-${tag}-${j}`,
      sourceAmount: `${600 + (s.pick % 300) + j}.${10 + j}`,
    }));
    rows.push(...copies);
    return `rows added ${copies.map((c) => `${c.reference} ${c.sourceCurrency} ${c.sourceAmount}`).join(', ')}`;
  }
  if (s.edit === 'amount') {
    rows[at]!.sourceAmount = `${400 + (s.pick % 97)}.${String(s.pick % 90).padStart(2, '0')}`;
    return `${rows[at]!.reference} sourceAmount -> ${rows[at]!.sourceAmount}`;
  }
  const gone = rows.splice(at, 1 + (s.pick % 2));
  return `removed ${gone.map((g) => g.reference).join(', ')}`;
}

/** The keys of every swap `initiating` line the hosts' journals (or the team ledger) hold, each with the hosts ('a', 'b', 'watch-K'; 'team') that may have made its swap. */
async function journalledSwapKeys(states: [string, string][], ledger: string | undefined): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  const take = (text: string, origin: string) => {
    for (const l of text.split('\n')) {
      const e = parseJson(l);
      if (e?.t !== 'swap' || typeof e.key !== 'string') continue;
      // (a host whose last word on the key is the service's refusal did not make its swap)
      if (e.phase === 'initiating' || e.phase === 'created') out.set(e.key, (out.get(e.key) ?? new Set()).add(origin));
      else if (e.phase === 'stale-rate' || e.phase === 'rejected')
        out
          .set(e.key, (out.get(e.key) ?? new Set()).add(origin))
          .get(e.key)!
          .delete(origin);
    }
  };
  for (const [state, origin] of states)
    for (const f of await readdir(join(state, 'ledgers'), { recursive: true }).catch(() => []))
      if (f.endsWith('.journal.jsonl')) take(await readFile(join(state, 'ledgers', f), 'utf8'), origin);
  if (ledger) {
    const db = new pg.Client({ connectionString: ledger });
    await db.connect();
    try {
      const r = await db.query<{ line: string }>(`SELECT line FROM payout_batch.journal_lines WHERE line LIKE '{"t":"swap"%'`);
      take(r.rows.map((x) => x.line).join('\n'), 'team');
    } finally {
      await db.end();
    }
  }
  return out;
}

const scenarios = GIVEN ? [GIVEN] : fc.sample(scenarioArb, { seed: SEED, numRuns: RUNS });
const t0 = performance.now();
const totals = { steps: 0, kills: 0, swaps: 0, reversed: 0, payouts: 0, refused: 0, team: 0, apart: 0 };
const failures = await runScenarios(scenarios, { only: ONLY, given: !!GIVEN, verbose: VERBOSE }, runScenario, totals);
cluster?.destroy();
console.log(
  `\nseed ${SEED}, ${ONLY === undefined && !GIVEN ? RUNS : 1} scenarios (${totals.team} on a team ledger), ${totals.steps} steps (${totals.refused} commands refused or stopped, ${totals.kills} SIGKILLs), ` +
    `${totals.swaps} swaps made (${totals.reversed} reversed by the fuzz), ${totals.payouts} payouts, ${totals.apart} pairs of swaps funding one row counted apart, ${failures} scenarios with a violation, ${((performance.now() - t0) / 1000).toFixed(0)} s`,
);
process.exitCode = failures ? 1 : 0;

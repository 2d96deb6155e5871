// Fuzz: one account paid from 2 or 3 hosts (a HOME, state folder and working folder each), under the business's two
// API keys, on file ledgers, one PostgreSQL team ledger, or both; judged by the sandbox's own records, never a journal.
//   npx tsx test/chaos/hosts-fuzz.ts [--seed S] [--runs N] [--verbose] [--only I] [--scenario JSON] [--keep]
//
// Each scenario (fast-check, from the seed): the sandbox in the strict reading (a key is the business's) or the variant
// one (a key is the API key's), refusals binding their key or not; hosts on a file ledger each, all on one team ledger,
// or mixed (hosts 0 and 2 on the team ledger, host 1 on its own); each host with one of Acme's API keys; a batch of 4 to
// 10 rows (GBP, EUR, NGN; documents or not; an invalid row sometimes) copied to each host (the same bytes, renamed,
// re-saved as XLSX, rows reordered). Then 4 to 12 steps: a run on a host (main() in this process, or a process SIGKILLed
// at its 1st to 3rd initiate), two hosts' runs at once (processes), a results file copied to another host and retried
// there (as it was, a row fixed, an amount changed), `plan --out` on one host, two approvals, `run --plan` on another, a
// payout FAILED (refunded) then `retry --resend-failed` on either host, `status`, a host on its own file ledger
// importing its state folder into the team ledger (`ledger import`, a process; the first import of file ledgers alone
// makes the team ledger) and running on the team ledger from then on: alone, right after a run of its own SIGKILLed at
// its 1st to 3rd initiate, or while another host's run on the team ledger goes (a process); once or twice (a host that
// never ran runs first). A step may drain a wallet as its
// preflight reads the methods (rows refused INSUFFICIENT_FUNDS; credited back after it) and lose answers after create (5xx or a
// dropped connection). Checked after each step:
//   (a) one payout per reference across the account, but a resend after a FAILED or REJECTED one once a
//       --resend-failed was asked; none under a key of no reference. A second payout under another API key in the
//       variant reading, made from hosts that share no ledger, is the documented limit (src/engine/REFERENCE.md,
//       "Idempotency keys"): counted apart, with its attempts; any other is a violation, as is one made from a host on
//       the team ledger once an import put the earlier payout there (its host's, of a reference an imported batch sent). A later attempt's key only once
//       the one before was spent at the service: a refusal bound to it under the same API key, or a payout FAILED or
//       REJECTED under it (a resend after a refund);
//   (b) every payout matches a row of a file some host was given; a `run --plan`'s, a body of its approved plan; every
//       initiate came under the API key of a host that ran the step;
//   (c) every row of a command's file in its results (cells compared), or the command refused whole saying why;
//   (d) no "unexpected error" nor stack trace; `status` creates nothing;
//   (e) an import exits 0, or 3 naming each batch it left out and why (or 2: the host never ran, no ledgers/ folder);
//       run twice, it exits 0 again when it did the first time.
// Exits 1 when any check fails, printing the scenario: `--scenario JSON --only I` replays it.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, symlinkSync } from 'node:fs';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import * as XLSX from 'xlsx';
import { newKeyPair } from '../../src/approvals/approvals-file.ts';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { bodyDigest } from '../../src/engine/plan-file.ts';
import { foldJournal, type JournalLine } from '../../src/journal/lines.ts';
import { readFileLedgers } from '../../src/ledger/import.ts';
import { readResults } from '../../src/results/read.ts';
import { writeResults } from '../../src/results/write.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { approveAs, cleanEnv, generateCsv, KEY, ROOT, runCli, runMain, workDir, type CliRun } from '../engine/helpers.ts';
import { setStatus } from '../ops/helpers.ts';
import { startCluster, type Cluster } from '../pg/cluster.ts';
import {
  creatorScopes,
  creditBack,
  drainWallet,
  fuzzFlags,
  leave,
  matches,
  parseJson,
  runScenarios,
  sameCells,
  serviceRecords,
  threw,
} from './fuzz-judge.ts';

const { given: GIVEN, seed: SEED, runs: RUNS, verbose: VERBOSE, only: ONLY, keep: KEEP } = fuzzFlags<Scenario>();

// The CLI as built when the campaign started (a build meanwhile empties dist/ under a process): an installation of its own.
const INSTALLED = mkdtempSync(join(tmpdir(), 'pb-hosts-fuzz-cli-'));
cpSync(join(ROOT, 'dist'), join(INSTALLED, 'dist'), { recursive: true });
cpSync(join(ROOT, 'package.json'), join(INSTALLED, 'package.json'));
symlinkSync(join(ROOT, 'node_modules'), join(INSTALLED, 'node_modules'));
const BIN = join(INSTALLED, 'dist/bin.js');

const API_KEYS = { primary: KEY, secondary: 'sk_sandbox_acme_secondary' } as const;
type Cur = 'GBP' | 'EUR' | 'NGN';
type Copy = 'same' | 'renamed' | 'xlsx' | 'reorder';
interface HostSpec {
  key: keyof typeof API_KEYS;
  copy: Copy;
}
/** Around every step: a wallet drained as its preflight reads the methods (credited back after), answers lost after create. */
interface Around {
  drain: 'none' | Cur;
  faults: boolean;
}
type Step = Around &
  (
    | { t: 'run'; host: number; kill: 0 | 1 | 2 | 3 }
    | { t: 'both'; host: number; other: number }
    | { t: 'copy'; host: number; to: number; edit: 'none' | 'fix' | 'amount'; pick: number }
    | { t: 'plan'; host: number; runner: number }
    | { t: 'fail'; host: number; pick: number }
    | { t: 'status'; host: number }
    | {
        t: 'import';
        host: number;
        /** Before the import: nothing, a run of its own SIGKILLed at its `kill`th initiate, or another host's run on the team ledger at once. */
        pre: 'none' | 'kill' | 'during';
        kill: 1 | 2 | 3;
        /** ms before the import starts (against a run at once). */
        delay: number;
        twice: boolean;
        json: boolean;
      }
  );
interface Scenario {
  layout: 'files' | 'team' | 'mixed';
  hosts: HostSpec[];
  /** The last host under the other API key than host 0's, whatever its own draw (absent: false). */
  bothKeys?: boolean;
  variant: boolean;
  storeRefusals: boolean;
  /** Answers lost after create: 5xx, the connection dropped (the client retries both), a gateway's 408 or 502 page (unknown at once). */
  fault: 'error' | 'drop' | 'gateway';
  rows: number;
  documents: boolean;
  invalidRow: boolean;
  steps: Step[];
}

const around = { drain: fc.constantFrom<Around['drain']>('none', 'none', 'none', 'GBP', 'EUR', 'NGN'), faults: fc.boolean() };
const hostArb = fc.nat(2);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ t: fc.constant('run' as const), host: hostArb, kill: fc.constantFrom<0 | 1 | 2 | 3>(0, 0, 1, 2, 3), ...around }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('both' as const), host: hostArb, other: hostArb, ...around }) },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('copy' as const),
      host: hostArb,
      to: hostArb,
      edit: fc.constantFrom<'none' | 'fix' | 'amount'>('none', 'fix', 'amount'),
      pick: fc.nat(100),
      ...around,
    }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('plan' as const), host: hostArb, runner: hostArb, ...around }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('fail' as const), host: hostArb, pick: fc.nat(100), ...around }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('status' as const), host: hostArb, ...around }) },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('import' as const),
      host: hostArb,
      pre: fc.constantFrom<'none' | 'kill' | 'during'>('none', 'kill', 'during'),
      kill: fc.constantFrom<1 | 2 | 3>(1, 2, 3),
      delay: fc.constantFrom(0, 150, 250, 300, 400, 900),
      twice: fc.boolean(),
      json: fc.boolean(),
      ...around,
    }),
  },
);
const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  layout: fc.constantFrom<Scenario['layout']>('files', 'team', 'mixed'),
  hosts: fc.array(
    fc.record({
      key: fc.constantFrom<HostSpec['key']>('primary', 'secondary'),
      copy: fc.constantFrom<Copy>('same', 'same', 'same', 'renamed', 'xlsx', 'reorder'),
    }),
    { minLength: 2, maxLength: 3 },
  ),
  bothKeys: fc.boolean(),
  variant: fc.boolean(),
  storeRefusals: fc.boolean(),
  fault: fc.constantFrom<Scenario['fault']>('error', 'drop', 'gateway', 'gateway'),
  rows: fc.integer({ min: 4, max: 10 }),
  documents: fc.boolean(),
  invalidRow: fc.constantFrom(false, false, true),
  steps: fc.array(stepArb, { minLength: 4, maxLength: 12 }),
});

type Row = Record<string, string>;
const STACK = /unexpected error|\n\s+at .+:\d+:\d+\)?/i;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

function bytesOf(header: string[], rows: Row[], xlsx: boolean): Buffer {
  const aoa = [header, ...rows.map((r) => header.map((h) => r[h] ?? ''))];
  if (!xlsx) return Buffer.from(stringify(aoa));
  const ws = XLSX.utils.aoa_to_sheet(aoa);
  for (const [addr, cell] of Object.entries(ws) as [string, XLSX.CellObject][]) if (!addr.startsWith('!') && cell.t === 's') cell.z = '@';
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, ws, 'Sheet1');
  return XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer;
}

interface Host {
  i: number;
  key: string;
  team: boolean;
  work: string;
  env: Record<string, string>;
  file: string;
  /** The results file this host last wrote or was given. */
  results?: string;
}
/** A host as it was when a command ran (an import moves it to the team ledger). */
type As = Pick<Host, 'i' | 'key' | 'team'>;

interface Outcome {
  violations: string[];
  notes: string[];
  steps: number;
  commands: number;
  refused: number;
  kills: number;
  made: number;
  /** References paid a second time under another API key from hosts sharing no ledger (variant reading): the documented limit. */
  limit: number;
  /** Scenarios in which the limit could happen (variant, both keys, hosts sharing no ledger). */
  exposed: number;
  resends: number;
  /** Of `limit`: the second payout under a later attempt's key (a retried or resent row). */
  limitLater: number;
  /** `ledger import` commands, and those refused (exit 3). */
  imports: number;
  importsRefused: number;
}

let cluster: Cluster | undefined;

/** An outcome's counts, and the campaign's totals of them, from zero. */
const counts = () => ({
  steps: 0,
  commands: 0,
  refused: 0,
  kills: 0,
  made: 0,
  limit: 0,
  exposed: 0,
  resends: 0,
  limitLater: 0,
  imports: 0,
  importsRefused: 0,
});

async function runScenario(sc: Scenario, n: number): Promise<Outcome> {
  const out: Outcome = { violations: [], notes: [], ...counts() };
  const violations = new Set<string>();
  const root = await workDir('pb-hosts-fuzz-');
  let onRequest = (_route: string) => {};
  const sb: LocalSandbox = await startSandbox({
    rateLimitPerSecond: null,
    monthlyQuota: null,
    shapes: sc.variant ? 'variant' : 'strict',
    storeRefusals: sc.storeRefusals,
    randomSeed: SEED + n,
    onRequest: (e) => onRequest(e.route),
  });
  try {
    // (on file ledgers alone, the first import makes the team ledger)
    let ledger = sc.layout === 'files' ? undefined : await (cluster ??= await startCluster()).newDatabase();
    // the batch, and each host's copy of it
    // (the currencies in turn: the sample's rows come a currency at a time, and a drained wallet must hold rows back)
    const pool = parse<Row>(generateCsv({ rows: 24, currencies: ['GBP', 'EUR', 'NGN'], ...(sc.documents ? { documentsEvery: 3 } : {}) }), {
      columns: true,
    });
    const byCurrency = ['NGN', 'GBP', 'EUR'].map((c) => pool.filter((r) => r.sourceCurrency === c));
    const base: Row[] = Array.from({ length: sc.rows }, (_, i) => ({
      ...byCurrency[i % 3]![Math.floor(i / 3)]!,
      reference: `HF${n}-${String(i + 1).padStart(4, '0')}`,
    }));
    const header = Object.keys(base[0]!);
    if (sc.invalidRow) base[1]!.accountName = '';
    const refs = new Set(base.map((r) => r.reference!));
    const everGiven: Row[] = base.map((r) => ({ ...r }));
    const hosts: Host[] = [];
    for (const [i, h] of sc.hosts.entries()) {
      // (`bothKeys`: the last host under the other key than host 0's, so that two keys share a ledger or not more often)
      const apiKey =
        API_KEYS[sc.bothKeys && i && i === sc.hosts.length - 1 ? (sc.hosts[0]!.key === 'primary' ? 'secondary' : 'primary') : h.key];
      const home = join(root, `host${i}`);
      const work = join(home, 'work');
      await mkdir(join(home, 'tmp'), { recursive: true });
      await mkdir(work, { recursive: true });
      const team = sc.layout === 'team' || (sc.layout === 'mixed' && i % 2 === 0);
      const rows = h.copy === 'reorder' ? [...base].reverse() : base;
      const name = { same: 'pay.csv', renamed: `payroll-host${i}.csv`, xlsx: 'pay.xlsx', reorder: 'pay.csv' }[h.copy];
      const file = join(work, name);
      await writeFile(file, bytesOf(header, rows, h.copy === 'xlsx'));
      const env = cleanEnv({
        HOME: home,
        TMPDIR: join(home, 'tmp'),
        PAYOUT_BATCH_STATE_DIR: join(home, 'state'),
        PAYOUT_API_KEY: apiKey,
        PAYOUT_BATCH_RATE: '1000',
        ...(team && ledger ? { PAYOUT_BATCH_LEDGER_URL: ledger } : {}),
      });
      hosts.push({ i, key: apiKey, team, work, env, file });
    }
    const shared = (a: As, b: As) => (a.team && b.team) || (a.i === b.i && !a.team && !b.team);
    if (sc.variant && hosts.some((a) => hosts.some((b) => a.key !== b.key && !shared(a, b)))) out.exposed = 1;
    // approvers Alice and Bob (the maker is Dan)
    const keys = { Alice: newKeyPair(), Bob: newKeyPair() };
    const approvers = join(root, 'approvers.json');
    await writeFile(approvers, JSON.stringify(Object.entries(keys).map(([name, k]) => ({ name, publicKey: k.publicKey }))));

    const service = ['--base-url', sb.url];
    const scopeOf = (h: As) => (sc.variant ? sha(h.key) : undefined);
    /** Each payout's hosts: those that ran the step that made it, under the API key that made it, as they were then. */
    const madeBy = new Map<string, As[]>();
    /** Payouts the team ledger holds by an import: a host's, of a reference an imported batch of it sent. */
    const held = new Set<string>();
    let resendAsked = false;
    const limitRefs = new Set<string>();
    const laterAttempts = new Set<string>();
    /** Payouts named in a violation of (a) already (once each, whatever their status next). */
    const unexcused = new Set<string>();
    const refOfKey = new Map<string, string>();
    for (const ref of refs) for (let a = 1; a <= 8; a++) refOfKey.set(idempotencyKey(ref, a), ref);
    /** A batch file's rows as text cells. */
    const rowsOf = async (file: string): Promise<Row[]> => {
      if (!file.endsWith('.xlsx')) return parse<Row>(await readFile(file, 'utf8'), { columns: true, bom: true });
      const wb = XLSX.read(await readFile(file));
      return XLSX.utils.sheet_to_json<Row>(wb.Sheets[wb.SheetNames[0]!]!, { defval: '', raw: false });
    };

    for (const [k, step] of sc.steps.entries()) {
      const h = hosts[step.host % hosts.length]!;
      const before = new Set(serviceRecords(sb).map((p) => p.id));
      const logAt = sb.requestLog().length;
      /** Commands of this step: what each was given (rows), and its output. */
      const ran: { what: string; host: Host; as: As; r: CliRun; rows?: Row[]; planBodies?: Set<string>; retried?: string; made?: false }[] =
        [];
      const add = (x: Omit<(typeof ran)[number], 'as'>) => ran.push({ ...x, as: { i: x.host.i, key: x.host.key, team: x.host.team } });
      /** This step's import: its host, and the references of the batches the team ledger now holds. */
      let imported: { host: number; refs: Set<string> } | undefined;
      let what = `step ${k + 1} ${step.t} on host ${h.i}`;
      // the drain as the step's preflight reads the methods, the faults for the step
      let back: () => Promise<unknown> = async () => {};
      let drained = false;
      let seen = 0;
      let killAt: (() => void) | undefined;
      onRequest = (route) => {
        // (drained as the preflight reads the methods, after its wallets: its funds check passed, its sends refused)
        if (route === 'methods' && step.drain !== 'none' && !drained) {
          drained = true;
          back = drain(sb, step.drain, `fuzz-drain-${k}`);
        }
        if (route !== 'initiate') return;
        seen++;
        killAt?.();
      };
      if (step.faults)
        sb.setFaults({
          ...(sc.fault === 'gateway'
            ? { gatewayAfterCreate: { probability: 0.3, status: [408, 502], body: 'html' } }
            : { [sc.fault === 'error' ? 'errorAfterCreate' : 'dropAfterCreate']: 0.3 }),
          routes: ['initiate'],
        });
      const main = (host: Host, args: string[]) => runMain(args, { cwd: host.work, env: host.env });
      const proc = (host: Host, args: string[], kill = 0) =>
        runCli(args, {
          cwd: host.work,
          env: host.env,
          bin: BIN,
          timeoutMs: 120_000,
          onSpawn: kill ? (c) => (killAt = () => void (seen === kill && c.kill('SIGKILL'))) : undefined,
        });
      const common = ['--yes', '--json', '--allow-partial', ...service];
      try {
        switch (step.t) {
          case 'run': {
            const args = ['run', basename(h.file), ...common];
            if (step.kill) {
              const r = await proc(h, args, step.kill);
              out.kills += r.signal ? 1 : 0;
              what += r.signal ? ` (SIGKILLed at initiate ${seen})` : ` (a process, not killed: exit ${r.code})`;
              add({ what, host: h, r, ...(r.signal ? {} : { rows: await rowsOf(h.file) }) });
            } else add({ what, host: h, r: await main(h, args), rows: await rowsOf(h.file) });
            break;
          }
          case 'both': {
            const o = hosts[step.other % hosts.length] === h ? hosts[(h.i + 1) % hosts.length]! : hosts[step.other % hosts.length]!;
            what = `step ${k + 1} runs at once on hosts ${h.i} and ${o.i}`;
            const [a, b] = await Promise.all([h, o].map((x) => proc(x, ['run', basename(x.file), ...common])));
            add({ what: `${what} (host ${h.i})`, host: h, r: a!, rows: await rowsOf(h.file) });
            add({ what: `${what} (host ${o.i})`, host: o, r: b!, rows: await rowsOf(o.file) });
            break;
          }
          case 'copy': {
            const to = hosts[step.to % hosts.length]!;
            if (!h.results) {
              out.notes.push(`${what}: no results yet`);
              break;
            }
            const ext = h.results.endsWith('.xlsx') ? 'xlsx' : 'csv';
            const given = join(to.work, `from-host${h.i}-step${k + 1}.results.${ext}`);
            const table = await readResults(h.results);
            let edit = 'as it was';
            if (step.edit === 'fix') {
              const bad = table.rows.find((r) => !r.cells.accountName?.trim());
              if (bad) bad.cells.accountName = 'Fixed Payee';
              edit = bad ? `${bad.cells.reference} fixed` : 'nothing to fix';
            } else if (step.edit === 'amount' && table.rows.length) {
              const r = table.rows[step.pick % table.rows.length]!;
              r.cells.sourceAmount = `${7 + (step.pick % 5)}.77`;
              edit = `${r.cells.reference} amount -> ${r.cells.sourceAmount}`;
            }
            await writeResults(given, table);
            for (const r of table.rows) everGiven.push({ ...r.cells });
            what = `step ${k + 1} results of host ${h.i} (${basename(h.results)}, ${edit}) retried on host ${to.i}`;
            const r = await main(to, ['retry', given, ...common]);
            add({ what, host: to, r, rows: table.rows.map((x) => x.cells), retried: given });
            if (r.code !== null && r.code <= 1) to.results = given;
            break;
          }
          case 'plan': {
            const runner = hosts[step.runner % hosts.length]!;
            const plan = join(h.work, `plan-${k + 1}.json`);
            what = `step ${k + 1} plan on host ${h.i}, run --plan on host ${runner.i}`;
            const p = await main(h, ['plan', basename(h.file), '--out', plan, '--prepared-by', 'Dan', '--allow-partial', ...service]);
            out.commands++;
            if (STACK.test(p.stdout + p.stderr)) violations.add(`(d) ${what}: plan: ${p.stderr.slice(0, 600)}`);
            if (p.code !== 0 && p.code !== 1) {
              out.notes.push(`${what}: plan exit ${p.code}: ${p.stderr.trim().split('\n').at(-1)?.slice(0, 200)}`);
              break;
            }
            for (const [name, kp] of Object.entries(keys)) await approveAs(plan, name, kp.privatePem);
            const made = parseJson(await readFile(plan, 'utf8'));
            const planBodies = new Set(((made?.rows ?? []) as { body: object }[]).map((x) => bodyDigest(x.body)));
            const r = await main(runner, ['run', '--plan', plan, '--require-approvals', '2', '--approvers', approvers, ...common]);
            add({ what, host: runner, r, rows: await rowsOf(h.file), planBodies });
            break;
          }
          case 'fail': {
            const live = serviceRecords(sb).filter(
              (p) => p.made && refOfKey.has(p.made.key) && ['PENDING', 'PROCESSING', 'ADDITIONAL_INFO_REQUIRED'].includes(p.status),
            );
            const p = live[step.pick % Math.max(1, live.length)];
            if (p) await setStatus(sb, p.id, 'FAILED').catch((e: unknown) => out.notes.push(`FAILED refused: ${String(e)}`));
            const from = h.results ? h : hosts.find((x) => x.results);
            if (!from?.results) {
              out.notes.push(`${what}: ${p ? `payout ${p.id} FAILED, ` : ''}no results to retry`);
              break;
            }
            let given = from.results;
            if (from !== h) {
              given = join(h.work, `from-host${from.i}-step${k + 1}.${basename(from.results)}`);
              await copyFile(from.results, given);
            }
            what = `step ${k + 1} ${p ? `payout ${p.id} FAILED, ` : ''}retry --resend-failed of ${basename(given)} on host ${h.i}`;
            resendAsked = true;
            out.resends++;
            const r = await main(h, ['retry', given, '--resend-failed', ...common]);
            add({ what, host: h, r, rows: (await readResults(given)).rows.map((x) => x.cells), retried: given });
            break;
          }
          case 'status': {
            if (!h.results) {
              out.notes.push(`${what}: no results yet`);
              break;
            }
            what = `step ${k + 1} status of ${basename(h.results)} on host ${h.i}`;
            const r = await main(h, ['status', h.results, ...service]);
            add({ what, host: h, r });
            break;
          }
          case 'import': {
            // (the first host on a file ledger from the one drawn)
            const j = hosts.map((_, d) => hosts[(h.i + d) % hosts.length]!).find((x) => !x.team);
            if (!j) {
              out.notes.push(`${what}: every host on the team ledger already`);
              break;
            }
            ledger ??= await (cluster ??= await startCluster()).newDatabase();
            const state = j.env.PAYOUT_BATCH_STATE_DIR!;
            what = `step ${k + 1} import of host ${j.i}'s state folder`;
            if (step.pre === 'kill') {
              const r = await proc(j, ['run', basename(j.file), ...common], step.kill);
              out.kills += r.signal ? 1 : 0;
              const how = r.signal ? `SIGKILLed at initiate ${seen}` : `a process, not killed: exit ${r.code}`;
              add({ what: `${what}: its run before (${how})`, host: j, r, ...(r.signal ? {} : { rows: await rowsOf(j.file) }) });
            } else if (!existsSync(join(state, 'ledgers'))) {
              // (a host that never ran has nothing to import: exit 2, seen; it runs first)
              const r = await main(j, ['run', basename(j.file), ...common]);
              add({ what: `${what}: its first run before`, host: j, r, rows: await rowsOf(j.file) });
            }
            const other = step.pre === 'during' ? hosts.find((x) => x.team) : undefined;
            if (step.pre === 'during')
              what += other ? ` during a run on host ${other.i}` : ' (no other host on the team ledger to run at once)';
            j.env = { ...j.env, PAYOUT_BATCH_LEDGER_URL: ledger };
            const args = ['ledger', 'import', '--from-state-dir', state, ...service, ...(step.json ? ['--json'] : [])];
            const importing = async () => {
              await new Promise((r) => setTimeout(r, other ? step.delay : 0));
              return proc(j, args);
            };
            const [first, run] = await Promise.all([importing(), other && proc(other, ['run', basename(other.file), ...common])]);
            if (run && other) add({ what: `${what} (the run on host ${other.i})`, host: other, r: run, rows: await rowsOf(other.file) });
            const runs = [first, ...(step.twice ? [await proc(j, args)] : [])];
            const refs = new Set<string>();
            for (const [n, r] of runs.entries()) {
              const w = `${what}${n ? ' (again)' : ''}`;
              add({ what: w, host: j, r, made: false });
              out.imports++;
              const said = judgeImport(r, state, step.json);
              if (said.violation) violations.add(`(e) ${w}: ${said.violation}: ${(r.stdout + r.stderr).slice(0, 800)}`);
              if (r.code === 3) out.importsRefused++;
              for (const ref of said.refs) refs.add(ref);
              if (n && runs[0]!.code === 0 && r.code !== 0)
                violations.add(`(e) ${w}: exit ${r.code} run twice: ${(r.stdout + r.stderr).slice(0, 800)}`);
            }
            // (from now on the team ledger's, whatever the import said)
            j.team = true;
            imported = { host: j.i, refs };
            break;
          }
        }
      } finally {
        onRequest = () => {};
        sb.setFaults({});
        for (let i = 0; i < 300 && sb.inFlight() > 0; i++) await new Promise((r) => setTimeout(r, 10));
        await back();
      }
      out.steps++;
      // the step's payouts and their hosts
      const scopes = creatorScopes(sb);
      const made = serviceRecords(sb).filter((p) => !before.has(p.id) && !p.made?.key.startsWith('fuzz-drain-'));
      for (const p of made) {
        out.made++;
        const scope = scopes.get(p.id);
        madeBy.set(
          p.id,
          ran
            .filter((x) => x.made !== false)
            .map((x) => x.as)
            .filter((x) => scopeOf(x) === undefined || scopeOf(x) === scope),
        );
      }
      // the payouts an import put in the team ledger: its host's, before it, of a reference an imported batch sent
      if (imported)
        for (const p of serviceRecords(sb)) {
          const ref = p.made && refOfKey.get(p.made.key);
          if (ref && imported.refs.has(ref) && madeBy.get(p.id)?.some((x) => x.i === imported.host && !x.team)) held.add(p.id);
        }
      for (const x of ran) {
        out.commands++;
        const { r } = x;
        // (an import's say is its output)
        const said = x.made === false ? r.stdout.trim() || r.stderr.trim() : r.stderr.trim();
        out.notes.push(`${x.what}: ${r.signal ?? `exit ${r.code}`}: ${said.split('\n').slice(-2).join(' | ').slice(0, 300)}`);
        // (d)
        if (STACK.test(r.stdout + r.stderr)) violations.add(`(d) ${x.what}: ${(r.stderr || r.stdout).slice(0, 800)}`);
        if (step.t === 'status' && made.length) violations.add(`(d) ${x.what}: status created ${made.map((p) => p.id).join(', ')}`);
        if (r.signal || !x.rows) continue;
        // (c)
        const json = parseJson(r.stdout.trim().split('\n').at(-1) ?? '') ?? parseJson(r.stdout);
        if (r.code === 0 || r.code === 1 || r.code === 5) {
          // (a retry with nothing new to say writes none: the file it was given stays its results)
          const written = typeof json?.results === 'string' ? json.results : json ? x.retried : undefined;
          if (!written) violations.add(`(c) ${x.what}: exit ${r.code} and no results named: ${r.stdout.slice(0, 300)}`);
          else {
            const after = (await readResults(written)).rows;
            if (
              !sameCells(
                x.rows,
                after.map((a) => a.cells),
              )
            )
              violations.add(`(c) ${x.what}: ${x.rows.length} rows given, ${after.length} in ${basename(written)}; cells differ`);
            x.host.results = written;
          }
        } else {
          out.refused++;
          if (!r.stderr.trim() && !r.stdout.trim()) violations.add(`(c) ${x.what}: exit ${r.code} saying nothing`);
        }
      }
      // (a) a later attempt's key only once the one before it was spent: at the service, under the same API key (or
      // business) a refusal bound to it, or under any a payout of it FAILED or REJECTED (a resend after its refund)
      const slots = new Map(sb.snapshot().idempotency.map((e) => [e.slot, e]));
      const statusOf = new Map(serviceRecords(sb).map((p) => [p.id, p.status]));
      for (const p of made) {
        const ref = p.made && refOfKey.get(p.made.key);
        const attempt = Number(p.made?.key.split('-').at(-1));
        if (!ref || !(attempt > 1)) continue;
        const previous = idempotencyKey(ref, attempt - 1);
        const refused = !!slots.get(`${scopes.get(p.id)}\u0000${previous}`)?.refusal;
        const failed = [...slots].some(
          ([slot, e]) =>
            slot.endsWith(`\u0000${previous}`) && e.recordId && ['FAILED', 'REJECTED'].includes(statusOf.get(e.recordId) ?? ''),
        );
        if (!refused && !failed)
          violations.add(
            `(a) ${what}: payout ${p.id} of ${ref} under attempt ${attempt}, its key ${previous} neither refused nor failed at the service`,
          );
      }
      // (b) each initiate under the API key of a host that ran the step (the drain's own is the primary key's)
      const keysOfStep = new Set([...ran.map((x) => x.host.key), ...(drained ? [KEY] : [])]);
      for (const e of sb.requestLog().slice(logAt))
        if (e.route === 'initiate' && !keysOfStep.has(e.apiKey))
          violations.add(`(b) ${what}: an initiate under an API key no host of the step holds (sha256 ${sha(e.apiKey).slice(0, 12)})`);
      const planBodies = ran.find((x) => x.planBodies)?.planBodies;
      for (const p of made) {
        if (!p.made) {
          violations.add(`(b) ${what}: payout ${p.id} without an idempotency record`);
          continue;
        }
        if (!everGiven.some((g) => matches(g, p.made!.body)))
          violations.add(`(b) ${what}: payout ${p.id} (key ${p.made.key}) ${JSON.stringify(p.made.body)} matches no row of any file given`);
        if (planBodies && !planBodies.has(bodyDigest(p.made.body)))
          violations.add(`(b) ${what}: payout ${p.id} (key ${p.made.key}) not a body of the approved plan`);
      }
      // (a)
      const byRef = new Map<string, typeof made>();
      for (const p of serviceRecords(sb)) {
        if (p.made?.key.startsWith('fuzz-drain-')) continue;
        const ref = p.made && refOfKey.get(p.made.key);
        if (!ref) violations.add(`(a) payout ${p.id} under key ${p.made?.key} of no reference a file named`);
        else byRef.set(ref, [...(byRef.get(ref) ?? []), p]);
      }
      for (const [ref, ps] of byRef) {
        if (ps.length < 2) continue;
        const show = () =>
          ps.map(
            (p) =>
              `${p.id} ${p.status} ${p.made?.key}${held.has(p.id) ? ' (imported)' : ''} by host(s) ${
                madeBy
                  .get(p.id)
                  ?.map((x) => x.i)
                  .join('+') ?? '?'
              }`,
          );
        // each payout after the first, in the order the service made them, needs an excuse: a resend (a later attempt)
        // after a FAILED or REJECTED one once --resend-failed was asked, or the documented limit: an earlier payout
        // under another API key (the variant reading) made from a host sharing no ledger with this one's, unless this
        // one's host is on the team ledger and that payout is one an import put there
        let refunded = 0;
        for (const [j, p] of ps.entries()) {
          const earlier = ps.slice(0, j);
          refunded += earlier.length && ['FAILED', 'REJECTED'].includes(ps[j - 1]!.status) ? 1 : 0;
          if (!j) continue;
          const attempt = Number(p.made!.key.split('-').at(-1));
          if (resendAsked && attempt > 1 && refunded > 0) {
            refunded--;
            continue;
          }
          const byMine = madeBy.get(p.id) ?? [];
          const limit =
            sc.variant &&
            earlier.some(
              (q) =>
                scopes.get(q.id) !== scopes.get(p.id) &&
                (madeBy.get(q.id) ?? []).some((a) => byMine.some((b) => a.key !== b.key && !shared(a, b) && !(b.team && held.has(q.id)))),
            );
          if (limit) {
            if (!limitRefs.has(`${ref} ${p.id}`))
              out.notes.push(`the documented limit: ${ref} paid again under the other API key (attempt ${attempt}): ${show().join(', ')}`);
            limitRefs.add(`${ref} ${p.id}`);
            if (attempt > 1) laterAttempts.add(p.id);
          } else if (!unexcused.has(p.id)) {
            unexcused.add(p.id);
            violations.add(`(a) ${ref} paid ${ps.length} times, payout ${p.id} not excused: ${show().join(', ')}`);
          }
        }
      }
    }
    out.limit = limitRefs.size;
    out.limitLater = laterAttempts.size;
  } catch (e) {
    violations.add(threw('d', e));
  } finally {
    await sb.close();
    await leave(root, KEEP);
  }
  out.violations = [...violations];
  return out;
}

/**
 * What an import said: a refusal (exit 3) names each batch it left out and why, no stack trace; the references of
 * the batches it says the team ledger now holds (all of the folder's on exit 0; else those imported or already there,
 * by --json, or those the text does not name as left out).
 */
function judgeImport(r: CliRun, state: string, json: boolean): { violation?: string; refs: Set<string> } {
  const refs = new Set<string>();
  if (r.signal) return { violation: `ended by ${r.signal}`, refs };
  if (STACK.test(r.stdout + r.stderr)) return { violation: 'a stack trace', refs };
  if (r.code === 2 && !existsSync(join(state, 'ledgers')) && /holds no file ledger/.test(r.stderr)) return { refs };
  if (r.code !== 0 && r.code !== 3) return { violation: `exit ${r.code}`, refs };
  const { journals } = readFileLedgers(state, []);
  let kept: (batchId: string) => boolean = () => true;
  if (json) {
    type Batch = { batchId: string };
    const said = parseJson(r.stdout) as
      { imported?: Batch[]; alreadyThere?: Batch[]; differing?: Batch[]; conflicts?: { batch: Batch }[] } | undefined;
    if (!said?.imported || !said.alreadyThere || !said.differing || !said.conflicts) return { violation: 'no JSON', refs };
    const ids = new Set([...said.imported, ...said.alreadyThere].map((b) => b.batchId));
    const out = [...said.conflicts.map((c) => c.batch.batchId), ...said.differing.map((b) => b.batchId)];
    if (r.code === 3 && !out.length) return { violation: 'refused, naming no batch', refs };
    if (r.code === 0 && out.length) return { violation: 'exit 0 with batches left out', refs };
    kept = (id) => ids.has(id);
  } else if (r.code === 3) {
    if (/^refused: /m.test(r.stderr)) return { refs };
    const named = [
      ...r.stdout.matchAll(
        /batch ([0-9a-f]{16}) \(.*?(?:\) and, in the ledger, by (?:batch [0-9a-f]{16} \(.*, (?:\w+|being sent)\)|a run of that same batch, .*)| is in the ledger with other lines)$/gm,
      ),
    ];
    if (!named.length || !/whose batches were not imported/.test(r.stdout)) return { violation: 'refused, naming no batch and why', refs };
    kept = (id) => !named.some((m) => id.startsWith(m[1]!));
  }
  for (const j of journals)
    if (kept(j.batchId))
      for (const row of foldJournal(j.lines.map((l) => JSON.parse(l) as JournalLine)).rows.values())
        if (row.phase !== 'none' && row.phase !== 'rejected') refs.add(row.ref);
  return { refs };
}

/** Drains the wallet to less than a row and its fee (its key fuzz-drain-*); returns its credit back. */
function drain(sb: LocalSandbox, currency: Cur, key: string): () => Promise<unknown> {
  const done = drainWallet(sb, KEY, currency, key).catch(() => undefined);
  return async () => creditBack(sb, await done);
}

const scenarios = GIVEN ? [GIVEN] : fc.sample(scenarioArb, { seed: SEED, numRuns: RUNS });
const t0 = performance.now();
const totals = counts();
try {
  const failures = await runScenarios(scenarios, { only: ONLY, given: !!GIVEN, verbose: VERBOSE }, runScenario, totals);
  console.log(
    `\nseed ${SEED}, ${ONLY === undefined && !GIVEN ? RUNS : 1} scenarios, ${totals.steps} steps, ${totals.commands} commands ` +
      `(${totals.refused} refused whole, ${totals.kills} SIGKILLs, ${totals.resends} --resend-failed, ` +
      `${totals.imports} imports of which ${totals.importsRefused} refused), ${totals.made} payouts created, ` +
      `${totals.limit} payouts made again under the other API key from a host sharing no ledger (the documented limit; ${totals.limitLater} of a later attempt; ${totals.exposed} scenarios exposed to it), ` +
      `${failures} scenarios with a violation, ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
  process.exitCode = failures ? 1 : 0;
} finally {
  cluster?.destroy();
  await leave(INSTALLED, false);
}

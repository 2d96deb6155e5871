// Fuzz: an account's approval policy (src/approvals/REFERENCE.md) across 1 to 3 hosts (an installation, so a host
// folder of policies, each; a file ledger each, one PostgreSQL team ledger, or mixed), set, loosened, removed by
// proposals signed by enough or too few, the wrong or look-alike approvers; judged by the sandbox's own records against
// the policy history this script applied (its own model), never by the tool's journal.
//   npx tsx test/chaos/policy-fuzz.ts [--seed S] [--runs N] [--verbose] [--only I] [--scenario JSON] [--keep]
//
// Each scenario (fast-check, from the seed): 2 to 4 approvers (Alice, Bob, Carol, Erin; the maker Dan's key listed as
// "Dave" sometimes), a policy set at the start or not, then 4 to 12 steps, every command a process of the host's
// installation: a policy change (set, --above, remove) proposed on a host (a team host: in the ledger, or without it
// on the host), signed by a draw of approvals written into its approvals file (listed, the maker, an unlisted one, a
// look-alike name, a listed name under another's key, the maker's key), applied on that host or another; `plan --out`
// of a new small batch (maker-signed or not), approved at once and run --plan on a host, or approved by a later step;
// `run --plan` (with or without --require-approvals); plain `run FILE` of a new small batch (GBP, EUR sometimes: a
// currency --above names none for; --allow-partial sometimes); two plain runs at once on two hosts or one;
// `retry --resend-failed` of a results file after a payout FAILED; a `watch DIR --once` tick given a batch with or
// without its plan, its configuration with or without requireApprovals; runs with another state folder (--state-dir,
// HOME, XDG_STATE_HOME), a team host's run without its ledger, SIGKILLs at the 1st or 2nd initiate. Checked after each:
//   (a) each payout the step made came from a command that, under the policy in force (the model's: the host's, else
//       the team ledger's for a host on it), had the approvals it requires of its plan (listed name under its listed
//       key, distinct, not the maker by name nor key, the plan maker-signed), or needed none: no policy, or under
//       --above the unapproved total today in the policy's store (host folder or team ledger) and the whole batch
//       within it, in currencies it names. A policy change applied with fewer valid signatures than the policy in force
//       requires is a violation, and so is a host policy set at once without the team ledger the host has on record.
//       Counted apart, as documented: payouts from a host with no policy of its own nor a team one on record (the
//       policy is the host's), a first host policy set beside a team ledger's not on record there;
//   (b) a run --plan's or a watch's payout is a body of that plan, a plain run's matches a row of its file;
//   (c) one payout per reference (but a resend after a FAILED one once --resend-failed was asked);
//   (d) a command refused (exit 3) sent not one request (the sandbox's log), and said why; under a policy with --above,
//       refused after the preflight's reads (GETs only): counted apart (the file's amounts alone passing the allowance
//       are refused before any request; a run that another run's payouts put over it, at its last check, after them);
//   (e) no "unexpected error" nor stack trace.
// Exits 1 when any check fails, printing the scenario: `--scenario JSON --only I` replays it.
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { addApproval, approvalsPathFor, newKeyPair, type NewKeyPair } from '../../src/approvals/approvals-file.ts';
import { loadProposal, proposalPayload } from '../../src/approvals/policy-change.ts';
import { signPlan } from '../../src/approvals/sign.ts';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { bodyDigest } from '../../src/engine/plan-file.ts';
import { Dec } from '../../src/money.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { approveAs, cleanEnv, generateCsv, KEY, runCli, workDir, type CliRun } from '../engine/helpers.ts';
import { setStatus } from '../ops/helpers.ts';
import { install, type Installation } from '../approvals/install.ts';
import { startCluster, type Cluster } from '../pg/cluster.ts';
import { fuzzFlags, leave, matches, parseJson, runScenarios, serviceRecords, threw, twicePaid } from './fuzz-judge.ts';

const { given: GIVEN, seed: SEED, runs: RUNS, verbose: VERBOSE, only: ONLY, keep: KEEP } = fuzzFlags<Scenario>();

// Three installations as built when the campaign started, each its own host folder (emptied for each scenario).
const INSTALLS = mkdtempSync(join(tmpdir(), 'pb-policy-fuzz-cli-'));
const HOSTS: Installation[] = [0, 1, 2].map((i) => install(join(INSTALLS, `host${i}`)));

const NAMES = ['Alice', 'Bob', 'Carol', 'Erin'] as const;
const LOOKALIKE: Record<string, string> = { Alice: 'Alíce', Bob: 'B0b', Carol: 'Caro1', Erin: 'Erín' };
/** How one approval is signed: `own` a listed name with its key; `maker` Dan; `unlisted` Mallory; `lookalike` a listed name's look-alike under Mallory's key; `otherKey` a listed name under the next one's key; `makerKey` a listed name under Dan's key; `dave` Dave under Dan's key (listed when the scenario lists it). */
type How = 'own' | 'maker' | 'unlisted' | 'lookalike' | 'otherKey' | 'makerKey' | 'dave';
interface Sig {
  who: number;
  how: How;
}
interface Rules {
  required: number;
  /** Indexes into the approvers (0..3); 4: Dave (Dan's key). */
  list: number[];
  above?: number;
}
type Env = 'same' | 'state' | 'home' | 'xdg' | 'noLedger';
type Step =
  | { t: 'policy'; host: number; applyOn: number; rules: Rules | null; sigs: Sig[]; env: 'same' | 'noLedger' }
  | { t: 'plan'; host: number; signed: boolean; rows: number; eur: boolean; sigs: Sig[]; runOn: number | null }
  | { t: 'approve'; sigs: Sig[] }
  | { t: 'runPlan'; host: number; flag: boolean; env: Env; kill: 0 | 1 | 2 }
  | { t: 'run'; host: number; rows: number; eur: boolean; env: Env; kill: 0 | 1 | 2; flag: boolean; again: boolean }
  | { t: 'retry'; host: number; fail: boolean }
  | { t: 'watch'; host: number; withPlan: boolean; requireApprovals: boolean }
  | { t: 'both'; host: number; other: number; rows: number; rows2: number };
interface Scenario {
  layout: 'files' | 'team' | 'mixed';
  hosts: number;
  approvers: number;
  daveListed: boolean;
  initial: (Rules & { host: number }) | null;
  steps: Step[];
}

const sigArb = fc.record({
  who: fc.nat(3),
  how: fc.constantFrom<How>(
    'own',
    'own',
    'own',
    'own',
    'own',
    'own',
    'own',
    'own',
    'maker',
    'unlisted',
    'lookalike',
    'otherKey',
    'makerKey',
    'dave',
  ),
});
const sigsArb = fc.uniqueArray(sigArb, { minLength: 0, maxLength: 3, selector: (x) => x.who });
const rulesArb: fc.Arbitrary<Rules> = fc
  .record({
    required: fc.integer({ min: 1, max: 3 }),
    pick: fc.subarray([0, 1, 2, 3, 4]),
    above: fc.option(fc.constantFrom(60, 120, 300), { nil: undefined }),
  })
  .map(({ required, pick, above }) => {
    const list = pick.length ? pick : [0];
    return { required: Math.min(required, list.length), list, ...(above ? { above } : {}) };
  });
const hostArb = fc.nat(2);
const envArb = fc.constantFrom<Env>('same', 'same', 'same', 'state', 'home', 'xdg', 'noLedger', 'noLedger');
const killArb = fc.constantFrom<0 | 1 | 2>(0, 0, 0, 1, 2);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant('policy' as const),
      host: hostArb,
      applyOn: hostArb,
      rules: fc.option(rulesArb, { nil: null, freq: 4 }),
      sigs: sigsArb,
      env: fc.constantFrom<'same' | 'noLedger'>('same', 'same', 'same', 'noLedger'),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('plan' as const),
      host: hostArb,
      signed: fc.constantFrom(true, true, true, false),
      rows: fc.integer({ min: 1, max: 3 }),
      eur: fc.constantFrom(false, false, false, true),
      sigs: sigsArb,
      runOn: fc.option(hostArb, { nil: null }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('approve' as const),
      sigs: fc.uniqueArray(sigArb, { minLength: 1, maxLength: 3, selector: (x) => x.who }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ t: fc.constant('runPlan' as const), host: hostArb, flag: fc.boolean(), env: envArb, kill: killArb }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('run' as const),
      host: hostArb,
      rows: fc.integer({ min: 1, max: 3 }),
      eur: fc.constantFrom(false, false, false, true),
      env: envArb,
      kill: killArb,
      flag: fc.constantFrom(false, false, true),
      again: fc.constantFrom(false, false, true),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('retry' as const), host: hostArb, fail: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('both' as const),
      host: hostArb,
      other: hostArb,
      rows: fc.integer({ min: 1, max: 3 }),
      rows2: fc.integer({ min: 1, max: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('watch' as const), host: hostArb, withPlan: fc.boolean(), requireApprovals: fc.boolean() }),
  },
);
const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  layout: fc.constantFrom<Scenario['layout']>('files', 'team', 'mixed'),
  hosts: fc.integer({ min: 1, max: 3 }),
  approvers: fc.integer({ min: 2, max: 4 }),
  daveListed: fc.constantFrom(false, false, true),
  initial: fc.option(
    fc.record({
      host: hostArb,
      required: fc.constantFrom(1, 2, 2),
      list: fc.constant([0, 1, 2, 3]),
      above: fc.option(fc.constantFrom(60, 120, 300), { nil: undefined }),
    }),
    { nil: null, freq: 5 },
  ),
  steps: fc.array(stepArb, { minLength: 4, maxLength: 12 }),
});

const STACK = /unexpected error|\n\s+at .+:\d+:\d+\)?/i;
type Row = Record<string, string>;

/** A policy as the model holds it: the approvers by name and public key. */
interface Model {
  required: number;
  approvers: { name: string; key: string }[];
  above?: number;
}
/** A host's policy store: its folder's (`host:I`), or the team ledger's (`team`). */
type Store = string;
/** A host: an installation (so a host folder of policies), a home, a state and a working folder; on the team ledger or not. */
interface Host {
  i: number;
  team: boolean;
  home: string;
  work: string;
  inst: Installation;
  results: string[];
  /** The batch file this host last ran. */
  last?: { file: string; rows: Row[] };
}
/** A command a step ran whose payouts are judged. */
interface Judged {
  what: string;
  r: CliRun;
  env: Env;
  on: Host;
  plan?: PlanMade;
  rows?: Row[];
  retry?: boolean;
  watch?: boolean;
}
interface PlanMade {
  path: string;
  file: string;
  signed: boolean;
  sigs: { name: string; key: string }[];
  bodies: Set<string>;
  rows: Row[];
}

let cluster: Cluster | undefined;

interface Outcome {
  violations: string[];
  notes: string[];
  steps: number;
  commands: number;
  refused: number;
  made: number;
  kills: number;
  applied: number;
  applyRefused: number;
  /** Payouts sent from a host with no policy while another host or the team ledger had one (the policy is the host's). */
  documented: number;
  /** Of the judged payouts: sent under an approved plan, under --above's allowance. */
  approved: number;
  allowance: number;
  /** Policy changes the model would apply that the tool refused (not a violation: a refusal; the model follows the tool). */
  stricter: number;
  /** Refusals under a policy with --above after the preflight's reads (GETs, no payout): the engine's guard decides. */
  readsBeforeAbove: number;
  /** A first host policy set at once on a team host without its ledger, the team's not on record there (documented: it then binds that host). */
  hostOverTeam: number;
}

/** A scenario's counts, each added to the campaign's totals. */
const figures = () => ({
  steps: 0,
  commands: 0,
  refused: 0,
  made: 0,
  kills: 0,
  applied: 0,
  applyRefused: 0,
  documented: 0,
  approved: 0,
  allowance: 0,
  stricter: 0,
  readsBeforeAbove: 0,
  hostOverTeam: 0,
});

async function runScenario(sc: Scenario, n: number): Promise<Outcome> {
  const out: Outcome = { violations: [], notes: [], ...figures() };
  const violations = new Set<string>();
  const root = await workDir('pb-policy-fuzz-');
  let onRequest = (_route: string) => {};
  const sb: LocalSandbox = await startSandbox({
    rateLimitPerSecond: null,
    monthlyQuota: null,
    randomSeed: SEED + n,
    onRequest: (e) => onRequest(e.route),
  });
  try {
    const ledger = sc.layout === 'files' ? undefined : await (cluster ??= await startCluster()).newDatabase();
    const service = ['--base-url', sb.url];
    // people: the approvers, the maker Dan, Mallory (nobody lists her)
    const people = NAMES.slice(0, sc.approvers).map((name) => ({ name, kp: newKeyPair() }));
    const dan = newKeyPair();
    const mallory = newKeyPair();
    const keyFiles = join(root, 'keys');
    await mkdir(keyFiles);
    await writeFile(join(keyFiles, 'dan.pem'), dan.privatePem, { mode: 0o600 });
    const listed = (i: number) =>
      i >= sc.approvers
        ? sc.daveListed
          ? { name: 'Dave', key: dan.publicKey }
          : undefined
        : { name: people[i]!.name, key: people[i]!.kp.publicKey };
    const modelOf = (r: Rules): Model | undefined => {
      const approvers = [...new Set(r.list.map((i) => Math.min(i, sc.approvers)))].flatMap((i) => listed(i) ?? []);
      return approvers.length
        ? { required: Math.min(r.required, approvers.length), approvers, ...(r.above ? { above: r.above } : {}) }
        : undefined;
    };
    let lists = 0;
    const listFile = async (m: Model) => {
      const f = join(root, `approvers-${++lists}.json`);
      await writeFile(f, JSON.stringify(m.approvers.map((a) => ({ name: a.name, publicKey: a.key }))));
      return f;
    };
    const allList = await listFile({ required: 1, approvers: people.map((p) => ({ name: p.name, key: p.kp.publicKey })) });
    const signerOf = (s: Sig): { name: string; kp: NewKeyPair } => {
      const p = people[s.who % people.length]!;
      const next = people[(s.who + 1) % people.length]!;
      return {
        own: { name: p.name, kp: p.kp },
        maker: { name: 'Dan', kp: dan },
        unlisted: { name: 'Mallory', kp: mallory },
        lookalike: { name: LOOKALIKE[p.name]!, kp: mallory },
        otherKey: { name: p.name, kp: next.kp },
        makerKey: { name: p.name, kp: dan },
        dave: { name: 'Dave', kp: dan },
      }[s.how];
    };
    /** The oracle's count: distinct listed names under their listed keys; for a plan, not the maker by name nor key, and only a maker-signed plan. */
    const valid = (m: Model, sigs: { name: string; key: string }[], plan?: { signed: boolean }): string[] => {
      if (plan && !plan.signed) return [];
      const names = new Set<string>();
      const keys = new Set<string>();
      for (const s of sigs) {
        const a = m.approvers.find((x) => x.name === s.name && x.key === s.key);
        if (!a || names.has(a.name) || keys.has(a.key)) continue;
        if (plan && (s.name === 'Dan' || s.key === dan.publicKey)) continue;
        names.add(a.name);
        keys.add(a.key);
      }
      return [...names];
    };

    // hosts: each an installation (its host folder emptied), a home and a state folder
    const hosts: Host[] = Array.from({ length: sc.hosts }, (_, i) => {
      const team = !!ledger && (sc.layout === 'team' || i % 2 === 0);
      const home = join(root, `host${i}`);
      return { i, team, home, work: join(home, 'work'), inst: HOSTS[i]!, results: [] };
    });
    for (const h of hosts) {
      await rm(h.inst.hostFolder, { recursive: true, force: true });
      await mkdir(join(h.work, 'watch', 'inbox'), { recursive: true });
    }
    const envOf = (h: Host, e: Env) => {
      const env = cleanEnv({
        HOME: h.home,
        PAYOUT_API_KEY: KEY,
        PAYOUT_BATCH_RATE: '1000',
        ...(h.team && ledger && e !== 'noLedger' ? { PAYOUT_BATCH_LEDGER_URL: ledger } : {}),
      });
      env.PAYOUT_BATCH_STATE_DIR = join(h.home, 'state');
      if (e === 'home' || e === 'xdg') delete env.PAYOUT_BATCH_STATE_DIR;
      if (e === 'home') env.HOME = join(h.home, 'home2');
      if (e === 'xdg') env.XDG_STATE_HOME = join(h.home, 'xdg');
      return env;
    };
    const cli = (h: Host, args: string[], e: Env = 'same', kill = 0) => {
      let seen = 0;
      return runCli(e === 'state' ? [...args, '--state-dir', join(h.home, 'state2')] : args, {
        cwd: h.work,
        env: envOf(h, e),
        bin: h.inst.bin,
        timeoutMs: 120_000,
        onSpawn: kill
          ? (c) =>
              (onRequest = (route) => {
                if (route === 'initiate' && ++seen === kill) c.kill('SIGKILL');
              })
          : undefined,
      });
    };

    // the model: each store's policy, which hosts have the team ledger on record, the day's unapproved sends per store
    const policies = new Map<Store, Model | undefined>();
    const onRecord = new Set<number>();
    const unapproved = new Map<Store, Map<string, { currency: string; amount: Dec }>>();
    let day = new Date().toISOString().slice(0, 10);
    const storeOf = (h: Host, e: Env = 'same'): Store => (h.team && e !== 'noLedger' ? 'team' : `host:${h.i}`);
    /** The policy in force for a command on host h: its folder's, else the team ledger's (on it, or refused without it once on record). */
    const inForce = (h: Host, e: Env): { p?: Model; store?: Store; refuse?: boolean } => {
      const own = policies.get(`host:${h.i}`);
      if (own) return { p: own, store: `host:${h.i}` };
      if (h.team && e === 'noLedger' && onRecord.has(h.i)) return { refuse: true };
      if (h.team && e !== 'noLedger') return { p: policies.get('team'), store: 'team' };
      return {};
    };
    const learn = (h: Host, e: Env) => {
      if (h.team && e !== 'noLedger' && policies.get('team')) onRecord.add(h.i);
    };
    const anyPolicy = () => [...policies.values()].some(Boolean);
    const setPolicy = (s: Store, m: Model | undefined) => {
      policies.set(s, m);
    };

    let batches = 0;
    let amountAt = 0;
    /** A new batch file of `rows` GBP rows (the last EUR with `eur`), amounts of their own (a same payee and amount is a probable duplicate). */
    const newBatch = async (dir: string, rows: number, eur: boolean): Promise<{ file: string; rows: Row[] }> => {
      const k = ++batches;
      const gbp = parse<Row>(
        generateCsv({
          rows,
          currencies: ['GBP'],
          prefix: `PF${n}B${k}`,
          amount: () => `${21 + (amountAt++ % 30)}.${String(k).padStart(2, '0')}`,
        }),
        { columns: true },
      );
      if (eur) {
        const [e] = parse<Row>(
          generateCsv({
            rows: 1,
            currencies: ['EUR'],
            prefix: `PF${n}B${k}E`,
            amount: () => `${31 + (amountAt++ % 30)}.${String(k).padStart(2, '0')}`,
          }),
          { columns: true },
        );
        gbp[gbp.length - 1] = e!;
      }
      const file = join(dir, `batch-${k}.csv`);
      const header = Object.keys(gbp[0]!);
      await writeFile(file, [header.join(','), ...gbp.map((r) => header.map((c) => r[c] ?? '').join(','))].join('\n') + '\n');
      return { file, rows: gbp };
    };
    const refs = new Set<string>();
    const refOfKey = new Map<string, string>();
    const known = (rows: Row[]) => {
      for (const r of rows) {
        refs.add(r.reference!);
        for (let a = 1; a <= 8; a++) refOfKey.set(idempotencyKey(r.reference!, a), r.reference!);
      }
    };
    let resendAsked = false;
    const plans: PlanMade[] = [];
    /** Each approval into the plan's approvals file as `approve` would write it (the same name replaces its earlier one). */
    const signPlanAs = async (plan: PlanMade, sigs: Sig[]) => {
      for (const s of sigs.map(signerOf)) {
        await approveAs(plan.path, s.name, s.kp.privatePem);
        plan.sigs = [...plan.sigs.filter((x) => x.name !== s.name), { name: s.name, key: s.kp.publicKey }];
      }
    };

    // the policy at the start
    if (sc.initial) {
      const h = hosts[sc.initial.host % hosts.length]!;
      const m = modelOf(sc.initial)!;
      const r = await cli(h, [
        'policy',
        'set',
        '--require-approvals',
        String(m.required),
        '--approvers',
        await listFile(m),
        ...(m.above ? ['--above', `GBP:${m.above}`] : []),
        ...service,
      ]);
      out.commands++;
      if (r.code !== 0) violations.add(`(e) the first policy set on host ${h.i}: exit ${r.code}: ${r.stderr.slice(0, 400)}`);
      else {
        setPolicy(storeOf(h), m);
        learn(h, 'same');
      }
      out.notes.push(
        `start: policy on host ${h.i} (${storeOf(h)}): ${JSON.stringify(m.approvers.map((a) => a.name))} ${m.required}${m.above ? ` above GBP ${m.above}` : ''}: exit ${r.code}`,
      );
    }

    /** The checks of one command's payouts (`requests`: its requests in the sandbox's log, when they can be told apart). */
    const judge = (j: Judged, made: ReturnType<typeof serviceRecords>, requests?: ReturnType<LocalSandbox['requestLog']>) => {
      out.commands++;
      const { r, what } = j;
      if (r.signal) out.kills++;
      out.notes.push(
        `${what}: ${r.signal ?? `exit ${r.code}`}, ${made.length} payouts: ${r.stderr.trim().split('\n').slice(-1).join(' | ').slice(0, 300)}`,
      );
      // (e)
      if (STACK.test(r.stdout + r.stderr)) violations.add(`(e) ${what}: ${(r.stderr || r.stdout).slice(0, 800)}`);
      // (d)
      const runner = j.on;
      const force = inForce(runner, j.env);
      if (r.code === 3) {
        out.refused++;
        // (two at once: their requests cannot be told apart in the log, unless both were refused)
        requests ??= [];
        const initiates = requests.filter((e) => e.route === 'initiate').length;
        // (a policy with --above is judged by the engine's guard, after the preflight's reads: counted apart, reported)
        if (requests.length && force.p?.above && requests.every((e) => e.method === 'GET')) out.readsBeforeAbove++;
        else if (requests.length)
          violations.add(
            `(d) ${what}: exit 3 after ${requests.length} requests (${initiates} initiates): ${[...new Set(requests.map((e) => e.route))].join(', ')}`,
          );
        if (!(r.stderr + r.stdout).trim()) violations.add(`(d) ${what}: exit 3 saying nothing`);
      }
      if (!j.watch) learn(runner, j.env); // (a watch's ledger is its configuration's: not counted as reading the team's)
      if (!made.length) return;
      out.made += made.length;
      // (b)
      for (const p of made) {
        if (!p.made) violations.add(`(b) ${what}: payout ${p.id} without an idempotency record`);
        else if (j.plan && !j.plan.bodies.has(bodyDigest(p.made.body)))
          violations.add(`(b) ${what}: payout ${p.id} not a body of the plan`);
        else if (j.rows && !j.rows.some((row) => matches(row, p.made!.body)))
          violations.add(`(b) ${what}: payout ${p.id} matches no row of its file`);
      }
      // (a)
      if (force.refuse) {
        violations.add(`(a) ${what}: ${made.length} payouts from a team host without its ledger, the team's policy on record here`);
        return;
      }
      const p = force.p;
      if (!p) {
        if (anyPolicy()) out.documented += made.length;
        return;
      }
      const counted = j.plan && !j.retry ? valid(p, j.plan.sigs, j.plan) : [];
      if (counted.length >= p.required) {
        out.approved += made.length;
        return;
      }
      const why = `the policy in force (${force.store}: ${p.required} of ${p.approvers.map((a) => a.name).join(',')}${p.above ? `, above GBP ${p.above}` : ''}) and ${counted.length} valid approvals (${counted.join(',') || 'none'})`;
      if (!p.above) {
        violations.add(`(a) ${what}: ${made.length} payouts (${made.map((x) => x.id).join(', ')}) under ${why}`);
        return;
      }
      // under --above: the store's count today, the whole batch, only GBP (the currency it names)
      const count = unapproved.get(force.store!) ?? new Map<string, { currency: string; amount: Dec }>();
      unapproved.set(force.store!, count);
      const sentToday = () => [...count.values()].filter((x) => x.currency === 'GBP').reduce((d, x) => d.plus(x.amount), new Dec(0));
      const given = (j.rows ?? []).filter((row) => !count.has(row.reference!));
      const fresh = given.filter((row) => row.sourceCurrency === 'GBP').reduce((d, row) => d.plus(new Dec(row.sourceAmount!)), new Dec(0));
      const other = made.filter((x) => x.made && x.made.body.sourceCurrency !== 'GBP');
      if (other.length) violations.add(`(a) ${what}: ${other.length} payouts in a currency --above names none for, under ${why}`);
      else if (!j.retry && j.rows?.some((row) => row.sourceCurrency !== 'GBP'))
        violations.add(`(a) ${what}: ${made.length} payouts of a batch with a row in a currency --above names none for, under ${why}`);
      if (j.rows && !j.retry && sentToday().plus(fresh).gt(p.above))
        violations.add(
          `(a) ${what}: ${made.length} payouts of a batch of GBP ${fresh.toFixed()} with GBP ${sentToday().toFixed()} sent without approval today, under ${why}`,
        );
      for (const x of made)
        if (x.made)
          count.set(refOfKey.get(x.made.key) ?? x.id, {
            currency: String(x.made.body.sourceCurrency),
            amount: new Dec(String(x.made.body.sourceAmount)),
          });
      if (sentToday().gt(p.above))
        violations.add(`(a) ${what}: GBP ${sentToday().toFixed()} sent without approval today in ${force.store}, above GBP ${p.above}`);
      out.allowance += made.length;
    };

    for (const [k, step] of sc.steps.entries()) {
      const now = new Date().toISOString().slice(0, 10);
      if (now !== day) {
        day = now;
        unapproved.clear(); // (a new UTC day: the allowances start again)
        out.notes.push(`step ${k + 1}: a new UTC day`);
      }
      const h = 'host' in step ? hosts[step.host % hosts.length]! : hosts[0]!;
      const before = new Set(serviceRecords(sb).map((p) => p.id));
      /** Where the judged command's requests start in the sandbox's log. */
      let logAt = sb.requestLog().length;
      let what = `step ${k + 1} ${step.t} on host ${h.i}`;
      /** The command whose payouts this step judges: its policy, its plan, its file's rows. */
      /** The commands whose payouts this step judges: each its host, environment, plan, file's rows. */
      const judged: Judged[] = [];
      try {
        switch (step.t) {
          case 'policy': {
            const store = storeOf(h, step.env);
            const current = policies.get(store);
            const next = step.rules && modelOf(step.rules);
            if (step.rules && !next) break;
            const proposal = join(h.work, `policy-change-${k + 1}.json`);
            const args = next
              ? [
                  'policy',
                  'set',
                  '--require-approvals',
                  String(next.required),
                  '--approvers',
                  await listFile(next),
                  ...(next.above ? ['--above', `GBP:${next.above}`] : []),
                ]
              : ['policy', 'remove'];
            const r = await cli(h, [...args, '--out', proposal, ...service], step.env);
            out.commands++;
            what += `: ${next ? `set ${next.approvers.map((a) => a.name).join(',')} ${next.required}${next.above ? ` above GBP ${next.above}` : ''}` : 'remove'}`;
            if (STACK.test(r.stdout + r.stderr)) violations.add(`(e) ${what}: ${r.stderr.slice(0, 600)}`);
            if (!current) {
              // the first one is set at once (a remove of none: nothing)
              if (r.code === 0 && next) {
                // (a host policy binds a host before the team ledger's: set at once without the ledger, only where the host has none on record)
                if (h.team && step.env === 'noLedger' && onRecord.has(h.i))
                  violations.add(`(a) ${what}: a host policy set at once without the team ledger this host has on record`);
                else if (h.team && step.env === 'noLedger' && policies.get('team')) out.hostOverTeam++;
                setPolicy(store, next);
                learn(h, step.env);
              }
              out.notes.push(`${what}: first on ${store}: exit ${r.code} ${r.stderr.trim().split('\n').at(-1)?.slice(0, 200) ?? ''}`);
              break;
            }
            if (r.code !== 0 || !existsSync(proposal)) {
              out.notes.push(`${what}: no proposal: exit ${r.code} ${r.stderr.trim().split('\n').at(-1)?.slice(0, 200) ?? ''}`);
              break;
            }
            const loaded = loadProposal(proposal);
            const sigs = step.sigs.map(signerOf);
            for (const s of sigs)
              await addApproval(approvalsPathFor(proposal), signPlan(proposalPayload(loaded), s.name, s.kp.privatePem, 'key.pem'));
            const on = hosts[step.applyOn % hosts.length]!;
            // (a proposal names its kind of store: the team ledger's needs a host on it; a host's is the applying host's)
            const target = store === 'team' ? (on.team && step.env !== 'noLedger' ? 'team' : undefined) : `host:${on.i}`;
            const inTarget = target === undefined ? undefined : policies.get(target);
            const a = await cli(on, ['policy', 'apply', proposal, ...service], step.env);
            out.commands++;
            what += ` on ${store}, signed by ${sigs.map((s) => `${s.name}/${s.kp === dan ? 'dan' : s.kp === mallory ? 'mallory' : (people.find((p) => p.kp === s.kp)?.name ?? '?')}`).join(' ') || 'nobody'}, applied on host ${on.i} (${target})`;
            const counted = inTarget
              ? valid(
                  inTarget,
                  sigs.map((s) => ({ name: s.name, key: s.kp.publicKey })),
                )
              : [];
            const enough = !!inTarget && counted.length >= inTarget.required;
            out.notes.push(
              `${what}: exit ${a.code}; the model counts ${counted.join(',') || 'none'} of ${inTarget?.required ?? '-'}: ${a.stderr.trim().split('\n').at(-1)?.slice(0, 200) ?? ''}`,
            );
            if (STACK.test(a.stdout + a.stderr)) violations.add(`(e) ${what}: ${a.stderr.slice(0, 600)}`);
            if (a.code === 0) {
              out.applied++;
              if (!enough)
                violations.add(
                  `(a) ${what}: applied with ${counted.length} valid signatures of the ${inTarget?.required ?? 0} the policy in force needs`,
                );
              if (target) setPolicy(target, next ?? undefined);
              learn(on, step.env);
            } else {
              out.applyRefused++;
              if (enough && target === store) out.stricter++;
            }
            break;
          }
          case 'plan': {
            const { file, rows } = await newBatch(h.work, step.rows, step.eur);
            known(rows);
            const path = file.replace(/\.csv$/, '.plan.json');
            const maker = step.signed ? ['--as', 'Dan', '--approver-key', join(keyFiles, 'dan.pem')] : ['--prepared-by', 'Dan'];
            const r = await cli(h, ['plan', basename(file), '--out', path, ...maker, ...service]);
            out.commands++;
            learn(h, 'same');
            if (STACK.test(r.stdout + r.stderr)) violations.add(`(e) ${what}: ${r.stderr.slice(0, 600)}`);
            const made = r.code === 0 && existsSync(path) ? parseJson(await readFile(path, 'utf8')) : undefined;
            out.notes.push(
              `${what}: ${basename(path)} (${rows.length} rows, ${step.signed ? 'maker-signed' : 'not signed'}): exit ${r.code} ${r.code ? r.stderr.trim().split('\n').at(-1)?.slice(0, 200) : ''}`,
            );
            if (!made) break;
            plans.push({
              path,
              file,
              signed: step.signed,
              sigs: [],
              rows,
              bodies: new Set(((made.rows ?? []) as { body: object }[]).map((x) => bodyDigest(x.body))),
            });
            const plan = plans.at(-1)!;
            // approved at once by the step's approvers, and run --plan on a host when the step says so
            await signPlanAs(plan, step.sigs);
            if (step.runOn === null) break;
            const on = hosts[step.runOn % hosts.length]!;
            what += `, approved by ${plan.sigs.map((x) => x.name).join(',') || 'nobody'}, run --plan on host ${on.i}`;
            logAt = sb.requestLog().length;
            judged.push({
              what,
              r: await cli(on, ['run', '--plan', plan.path, '--yes', '--json', ...service]),
              env: 'same',
              plan,
              rows,
              on,
            });
            break;
          }
          case 'approve': {
            const plan = plans.at(-1);
            if (!plan) break;
            const sigs = step.sigs.map(signerOf);
            await signPlanAs(plan, step.sigs);
            out.notes.push(
              `step ${k + 1} ${basename(plan.path)} approved by ${sigs.map((s) => `${s.name}/${s.kp === dan ? 'dan' : s.kp === mallory ? 'mallory' : (people.find((p) => p.kp === s.kp)?.name ?? '?')}`).join(' ')}`,
            );
            break;
          }
          case 'runPlan': {
            const plan = plans.at(-1);
            if (!plan) break;
            const flag = step.flag ? ['--require-approvals', '1', '--approvers', allList] : [];
            what += ` ${basename(plan.path)} (${step.env}${step.flag ? ', --require-approvals 1' : ''}${step.kill ? `, killed at initiate ${step.kill}` : ''})`;
            const r = await cli(h, ['run', '--plan', plan.path, '--yes', '--json', ...flag, ...service], step.env, step.kill);
            judged.push({ what, r, env: step.env, plan, rows: plan.rows, on: h });
            break;
          }
          case 'run': {
            // (again: the host's last batch run again, as after a kill, maybe from another state folder)
            const { file, rows } = step.again && h.last ? h.last : await newBatch(h.work, step.rows, step.eur);
            h.last = { file, rows };
            known(rows);
            const flag = step.flag ? ['--allow-partial'] : [];
            what += ` ${basename(file)} (${rows.length} rows; ${step.env}${step.flag ? ', --allow-partial' : ''}${step.kill ? `, killed at initiate ${step.kill}` : ''})`;
            const r = await cli(h, ['run', basename(file), '--yes', '--json', ...flag, ...service], step.env, step.kill);
            judged.push({ what, r, env: step.env, rows, on: h });
            const results = parseJson(r.stdout.trim().split('\n').at(-1) ?? '')?.results;
            if (typeof results === 'string') h.results.push(results);
            break;
          }
          case 'retry': {
            const results = hosts.flatMap((x) => x.results).at(-1);
            if (!results) break;
            if (step.fail) {
              const live = serviceRecords(sb).filter((p) => p.made && refOfKey.has(p.made.key) && p.status === 'PENDING');
              if (live[0]) await setStatus(sb, live[0].id, 'FAILED').catch(() => undefined);
            }
            const given = join(h.work, `retry-${k + 1}-${basename(results)}`);
            await copyFile(results, given);
            resendAsked = true;
            what += ` ${basename(given)}${step.fail ? ' (a payout FAILED first)' : ''}`;
            const r = await cli(h, ['retry', given, '--resend-failed', '--yes', '--json', ...service]);
            judged.push({ what, r, env: 'same', retry: true, on: h });
            break;
          }
          case 'both': {
            // two hosts' runs at once (or one host's twice): the day's count is taken under the ledger's lock, so both cannot pass
            const o = hosts[step.other % hosts.length]!;
            const a = await newBatch(h.work, step.rows, false);
            const b = await newBatch(o.work, step.rows2, false);
            known([...a.rows, ...b.rows]);
            const [ra, rb] = await Promise.all([
              cli(h, ['run', basename(a.file), '--yes', '--json', ...service]),
              cli(o, ['run', basename(b.file), '--yes', '--json', ...service]),
            ]);
            what += ` and host ${o.i} at once`;
            judged.push({ what: `${what} (host ${h.i} ${basename(a.file)})`, r: ra, env: 'same', rows: a.rows, on: h });
            judged.push({ what: `${what} (host ${o.i} ${basename(b.file)})`, r: rb, env: 'same', rows: b.rows, on: o });
            break;
          }
          case 'watch': {
            const dir = join(h.work, 'watch');
            const config = {
              environment: 'sandbox',
              baseUrl: sb.url,
              settleSeconds: 0,
              ...(step.requireApprovals ? { requireApprovals: 1, approvers: allList } : {}),
            };
            await writeFile(join(dir, 'payout-batch.json'), JSON.stringify(config));
            const plan = step.withPlan ? plans.at(-1) : undefined;
            let rows: Row[];
            if (plan) {
              for (const f of [plan.file, plan.path, approvalsPathFor(plan.path)])
                if (existsSync(f)) await copyFile(f, join(dir, 'inbox', basename(f)));
              rows = plan.rows;
            } else {
              const b = await newBatch(join(dir, 'inbox'), 2, false);
              known(b.rows);
              rows = b.rows;
            }
            what += ` (${plan ? basename(plan.path) : 'a batch alone'}${step.requireApprovals ? ', requireApprovals 1' : ''})`;
            const r = await cli(h, ['watch', dir, '--once']);
            judged.push({ what, r, env: 'same', plan, rows, on: h, watch: true });
            break;
          }
        }
      } finally {
        onRequest = () => {};
        for (let i = 0; i < 300 && sb.inFlight() > 0; i++) await new Promise((r) => setTimeout(r, 10));
      }
      out.steps++;
      const made = serviceRecords(sb).filter((p) => !before.has(p.id));
      const requests = sb.requestLog().slice(logAt);
      if (made.length && !judged.length) violations.add(`(a) ${what}: ${made.length} payouts from a step that runs nothing`);
      /** Each payout once: of the command whose file names its reference (a retry's: what is left). */
      const claimed = new Set<string>();
      const mine = (j: Judged) => {
        const ps = made.filter(
          (p) => !claimed.has(p.id) && (!j.rows || (p.made && j.rows.some((row) => row.reference === refOfKey.get(p.made!.key)))),
        );
        for (const p of ps) claimed.add(p.id);
        return ps;
      };
      for (const j of judged) judge(j, mine(j), judged.length > 1 ? undefined : requests);
      if (claimed.size < made.length)
        violations.add(`(b) ${what}: ${made.length - claimed.size} payouts of no row the step's commands were given`);
    }
    // (c)
    for (const v of twicePaid(serviceRecords(sb), refs, { resendAsked })) violations.add(`(c) ${v}`);
  } catch (e) {
    violations.add(threw('e', e));
  } finally {
    await sb.close();
    await leave(root, KEEP);
  }
  out.violations = [...violations];
  return out;
}

const scenarios = GIVEN ? [GIVEN] : fc.sample(scenarioArb, { seed: SEED, numRuns: RUNS });
const t0 = performance.now();
const totals = figures();
try {
  const failures = await runScenarios(scenarios, { only: ONLY, given: !!GIVEN, verbose: VERBOSE }, runScenario, totals);
  console.log(
    `\nseed ${SEED}, ${ONLY === undefined && !GIVEN ? RUNS : 1} scenarios, ${totals.steps} steps, ${totals.commands} commands (${totals.refused} refused, exit 3; ${totals.kills} SIGKILLs), ` +
      `${totals.readsBeforeAbove} of them under --above after the preflight's reads, ` +
      `${totals.applied} policy changes applied, ${totals.applyRefused} refused (${totals.stricter} the model would apply), ${totals.made} payouts: ` +
      `${totals.approved} of approved plans, ${totals.allowance} under --above's allowance, ${totals.documented} from a host without a policy while another store had one (documented), ` +
      `${totals.hostOverTeam} host policies set at once beside a team ledger's not on record there (documented), ` +
      `${failures} scenarios with a violation, ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
  process.exitCode = failures ? 1 : 0;
} finally {
  cluster?.destroy();
  await leave(INSTALLS, false);
}

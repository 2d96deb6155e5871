// Issue 40, an approval policy that holds, tried as a hurried or dishonest operator would, with
// real processes against a sandbox over HTTP: payouts are counted at the sandbox. Every run, watch
// and terminal is a process of an installation of its own (approvals/install.ts); the steps that
// set a scene up or change its policy run main() in this process, under that installation's host
// folder (package.json "payoutBatch.hostFolder", mocked here); a team ledger's password reaches
// them in their $PAYOUT_BATCH_LEDGER_URL (pg reads PGPASSWORD from the process's environment).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newKeyPair, type NewKeyPair } from '../../src/approvals/approvals-file.ts';
import { defaultSeed, startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { approveAs, cleanEnv, initiates, runCli, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';
import { install } from './install.ts';
import { onTerminal } from '../cli/pty.ts';
import { until } from '../ops/helpers.ts';
import { testDatabase, withoutPassword, withPostgres } from '../pg/database.ts';

/** The host folder of policies main() reads in this process: the scene's installation's (empty: the package's own). */
const host = vi.hoisted(() => ({ folder: '' }));
vi.mock('../../src/package-root.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/package-root.ts')>();
  return { ...real, packageJson: () => ({ ...real.packageJson(), ...(host.folder && { payoutBatch: { hostFolder: host.folder } }) }) };
});

const dirs = tempDirs('pb-policy-holds-');
let sb: LocalSandbox;
beforeAll(async () => {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null, monthlyQuota: null });
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

/**
 * A folder with a batch, the CLI run in it (of an installation of its own, whose host folder of
 * policies no other test shares), and approver keys written as `approver-key new` writes them.
 */
let scenes = 0;
async function scene(rows = 2, at: LocalSandbox = sb) {
  const dir = await dirs.make();
  const prefix = `HOLD${++scenes}`; // (one account for every scene: each pays references of its own)
  const inst = install(await dirs.make());
  await writeBatch(dir, 'payroll.csv', { rows, currencies: ['USD'], prefix });
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const service = ['--base-url', at.url, '--rate', '100'];
  const cli = (...args: string[]) => runCli(args, { cwd: dir, env, bin: inst.bin });
  /** What main() in this process sees besides `env`: a team ledger's URL, password and all. */
  const mainEnv: Record<string, string> = {};
  /** The same command by main() in this process, under this installation's host folder of policies. */
  const inProcess = (...args: string[]) => {
    host.folder = inst.hostFolder;
    return runMain(args, { cwd: dir, env: { ...env, ...mainEnv } });
  };
  const keys = new Map<string, NewKeyPair>();
  /** NAME.pem and NAME.approver.pub.json in the folder. */
  const person = (name: string) => {
    const k = newKeyPair();
    keys.set(name, k);
    writeFileSync(join(dir, `${name}.pem`), k.privatePem, { mode: 0o600 });
    writeFileSync(join(dir, `${name}.approver.pub.json`), JSON.stringify({ name, publicKey: k.publicKey }) + '\n');
    return k;
  };
  /** `approve`, the key checked against `list` (null: the account's policy in force on the host), in this process. */
  const approve = (plan: string, name: string, keyName = name, list: string | null = 'approvers.json') =>
    inProcess('approve', plan, '--as', name, '--key-file', `${keyName}.pem`, ...(list ? ['--approvers', list] : []), '--yes');
  /** `run --plan PLAN --require-approvals N --approvers approvers.json`, as a flag asks (no policy). */
  const runPlan = (plan: string, n: number) =>
    cli('run', '--plan', plan, '--require-approvals', String(n), '--approvers', 'approvers.json', '--yes', ...service);
  /** The policy of two approvals of Alice and Bob (and `rules`), the first of the account: set at once. */
  const policy = async (...rules: string[]) => {
    for (const n of ['Alice', 'Bob']) person(n);
    expect((await inProcess('approvers', 'add', 'Alice.approver.pub.json', 'Bob.approver.pub.json', '--out', 'approvers.json')).code).toBe(
      0,
    );
    const set = await inProcess('policy', 'set', '--require-approvals', '2', '--approvers', 'approvers.json', ...rules, ...service);
    expect(set.code, set.stderr).toBe(0);
  };
  /** A batch of one USD row per amount, references of its own. */
  const batch = (name: string, ...amounts: string[]) =>
    writeBatch(dir, name, {
      rows: amounts.length,
      currencies: ['USD'],
      prefix: `${prefix}${name.replace(/\W/g, '')}`,
      amount: (i) => amounts[i]!,
    });
  return { dir, env, mainEnv, inst, service, cli, inProcess, person, approve, runPlan, keys, policy, batch };
}

it('defects 1 and 2: no state folder, variable, home or watch folder skips the policy', async () => {
  const { dir, env, inst, service, cli, policy } = await scene();
  await policy();
  const before = initiates(sb).length;
  const { PAYOUT_BATCH_STATE_DIR: _, ...noState } = env;
  const ways: [string, string[], Record<string, string>][] = [
    ['--state-dir other', ['--state-dir', 'other'], env],
    ['PAYOUT_BATCH_STATE_DIR=other', [], { ...env, PAYOUT_BATCH_STATE_DIR: join(dir, 'other-env') }],
    ['XDG_STATE_HOME=other', [], { ...noState, XDG_STATE_HOME: join(dir, 'other-xdg') }],
    ['HOME=other', [], { ...noState, HOME: join(dir, 'other-home') }],
    // the account's other key (spec §5: keep two active keys, rotate them): the same account
    ['the second API key', [], { ...env, PAYOUT_API_KEY: 'sk_sandbox_acme_secondary' }],
  ];
  for (const [way, flags, e] of ways) {
    const r = await runCli(['run', 'payroll.csv', '--yes', ...flags, ...service], { cwd: dir, env: e, bin: inst.bin });
    expect(r.code, way).toBe(3);
    expect(r.stderr, way).toContain("this account's approval policy needs 2 approvals of Alice, Bob");
  }
  // a watch folder for the same user: its ledger is DIR/.state, its configuration names no approvals
  const watch = join(dir, 'watch');
  mkdirSync(join(watch, 'inbox'), { recursive: true });
  writeFileSync(join(watch, 'payout-batch.json'), JSON.stringify({ environment: 'sandbox', baseUrl: sb.url, settleSeconds: 0 }));
  await writeBatch(join(watch, 'inbox'), 'payroll.csv', { rows: 2, currencies: ['USD'], prefix: 'WATCH' });
  writeFileSync(join(watch, 'inbox', 'payroll.csv.ready'), '');
  const w = await cli('watch', watch, '--once');
  expect(w.stdout + w.stderr).toContain("this account's approval policy needs 2 approvals of Alice, Bob");
  expect(readdirSync(join(watch, 'failed'))).toHaveLength(1);
  expect(initiates(sb)).toHaveLength(before);
});

it("a watch configuration naming approvers of its own cannot turn the account's policy off", async () => {
  const { dir, service, cli, inProcess, person, policy } = await scene();
  await policy();
  const before = initiates(sb).length;
  const mallory = person('Mallory');
  person('Dan');
  const watch = join(dir, 'watch');
  mkdirSync(join(watch, 'inbox'), { recursive: true });
  writeFileSync(join(watch, 'mallory.json'), JSON.stringify([{ name: 'Mallory', publicKey: mallory.publicKey }]));
  writeFileSync(
    join(watch, 'payout-batch.json'),
    JSON.stringify({ environment: 'sandbox', baseUrl: sb.url, settleSeconds: 0, requireApprovals: 1, approvers: 'mallory.json' }),
  );
  // Dan's plan, signed by Dan, approved by Mallory: enough for the configuration, not for the account
  const plan = join(dir, 'payroll.plan.json');
  const made = await inProcess(
    'plan',
    join(dir, 'payroll.csv'),
    '--out',
    plan,
    '--no-quote',
    '--as',
    'Dan',
    '--approver-key',
    join(dir, 'Dan.pem'),
    ...service,
  );
  expect(made.code, made.stderr).toBe(0);
  await approveAs(plan, 'Mallory', mallory.privatePem);
  for (const f of ['payroll.plan.json', 'payroll.plan.json.approvals.json', 'payroll.csv'])
    writeFileSync(join(watch, 'inbox', f), readFileSync(join(dir, f)));
  writeFileSync(join(watch, 'inbox', 'payroll.csv.ready'), '');
  const w = await cli('watch', watch, '--once');
  expect(w.stdout + w.stderr).toContain("this account's approval policy needs 2 approvals of Alice, Bob");
  expect(readdirSync(join(watch, 'failed'))).toHaveLength(1);
  expect(initiates(sb)).toHaveLength(before);
});

it('defect 3: the runner cannot loosen or remove the policy alone; its approvers can change it', async () => {
  const { service, cli, inProcess, person, approve, policy } = await scene();
  await policy();
  person('Runner');
  expect((await inProcess('approvers', 'add', 'Runner.approver.pub.json', '--out', 'own.json')).code).toBe(0);
  const before = initiates(sb).length;

  const loosen = await inProcess(
    'policy',
    'set',
    '--require-approvals',
    '1',
    '--approvers',
    'own.json',
    '--out',
    'loosen.json',
    ...service,
  );
  expect(loosen.code, loosen.stderr).toBe(0);
  expect(loosen.stdout).toContain('not in force');
  const alone = await inProcess('policy', 'apply', 'loosen.json');
  expect(alone.code).toBe(3);
  expect(alone.stderr).toContain('0 of the 2 approvals the policy in force needs');
  // the runner signs it: under the policy's list, refused; under their own, signed and not counted
  expect((await approve('loosen.json', 'Runner', 'Runner', null)).code).toBe(2);
  const ownList = await inProcess(
    'approve',
    'loosen.json',
    '--as',
    'Runner',
    '--key-file',
    'Runner.pem',
    '--approvers',
    'own.json',
    '--yes',
  );
  expect(ownList.code, ownList.stderr).toBe(0);
  const signedAlone = await inProcess('policy', 'apply', 'loosen.json');
  expect(signedAlone.code).toBe(3);
  expect(signedAlone.stderr).toContain('Runner: not in the approvers list');
  const removal = await inProcess('policy', 'remove', '--out', 'remove.json', ...service);
  expect(removal.code, removal.stderr).toBe(0);
  expect((await inProcess('policy', 'apply', 'remove.json')).code).toBe(3);
  const run = await cli('run', 'payroll.csv', '--yes', ...service);
  expect(run.code).toBe(3);
  expect(run.stderr).toContain("this account's approval policy needs 2 approvals of Alice, Bob");
  expect(initiates(sb)).toHaveLength(before);

  // Alice and Bob sign the change (the policy's own list, found on the host): in force, shown with its signers
  for (const n of ['Alice', 'Bob']) expect((await approve('loosen.json', n, n, null)).code).toBe(0);
  const applied = await inProcess('policy', 'apply', 'loosen.json');
  expect(applied.code, applied.stderr).toBe(0);
  const shown = await inProcess('policy', 'show', ...service);
  expect(shown.stdout).toContain('1 approval of Runner (version 2');
  expect(shown.stdout).toMatch(/version 2, .*signed by Alice, Bob: 1 approval of Runner/);
  // the removal was proposed against version 1: stale, refused
  const stale = await inProcess('policy', 'apply', 'remove.json');
  expect(stale.code).toBe(3);
  expect(stale.stderr).toContain('changes version 1 of the policy, and version 2 is in force');
});

it("the maker signs: an unsigned plan is not approved under a policy, and the maker's key counts for nobody", async () => {
  const { dir, service, cli, inProcess, keys, policy } = await scene();
  await policy();
  const before = initiates(sb).length;
  // (the plans and approvals made in this process: what is checked is the runs')
  const plan = async (out: string, ...maker: string[]) =>
    expect((await inProcess('plan', join(dir, 'payroll.csv'), '--out', join(dir, out), '--no-quote', ...maker, ...service)).code).toBe(0);
  const approved = async (out: string) => {
    for (const n of ['Alice', 'Bob']) await approveAs(join(dir, out), n, keys.get(n)!.privatePem);
  };
  // unsigned by its maker, approved by both: refused
  await plan('unsigned.plan.json', '--prepared-by', 'Dan');
  await approved('unsigned.plan.json');
  const unsigned = await cli('run', '--plan', 'unsigned.plan.json', '--yes', ...service);
  expect(unsigned.code).toBe(3);
  expect(unsigned.stderr).toContain('the plan is not signed by its maker');
  // the maker signs with the key listed for Bob (they hold it): Bob's approval does not count
  await plan('bob.plan.json', '--as', 'Dan', '--approver-key', join(dir, 'Bob.pem'));
  expect(JSON.parse(readFileSync(join(dir, 'bob.plan.json.approvals.json'), 'utf8'))).toMatchObject([{ name: 'Dan' }]);
  await approved('bob.plan.json');
  const makerKey = await cli('run', '--plan', 'bob.plan.json', '--yes', ...service);
  expect(makerKey.code).toBe(3);
  expect(makerKey.stderr).toMatch(
    /1 valid approval of 2 required \(Alice\).*Bob \(signed with key \w+, which the plan's maker signed it with\)/,
  );
  expect(initiates(sb)).toHaveLength(before);
  // a maker the policy lists signs with the key it lists for them: Alice with Bob's key is refused, no plan written
  const asAlice = await inProcess(
    'plan',
    'payroll.csv',
    '--out',
    'alice.plan.json',
    '--as',
    'Alice',
    '--approver-key',
    'Bob.pem',
    ...service,
  );
  expect(asAlice.code).toBe(2);
  expect(asAlice.stderr).toMatch(/--as Alice: the key file holds key \w+, and the account's approval policy gives Alice key \w+/);
  expect(existsSync(join(dir, 'alice.plan.json'))).toBe(false);
});

it('a policy changed while the run waits at its confirmation is read again before the first payout: nothing is sent', async () => {
  const { dir, env, inst, service, inProcess, person, approve, keys, policy } = await scene();
  await policy();
  person('Dan');
  const made = await inProcess('plan', join(dir, 'payroll.csv'), '--out', join(dir, 'ok.plan.json'), '--no-quote', '--as', 'Dan', '--approver-key', join(dir, 'Dan.pem'), ...service); // prettier-ignore
  expect(made.code, made.stderr).toBe(0);
  for (const n of ['Alice', 'Bob']) await approveAs(join(dir, 'ok.plan.json'), n, keys.get(n)!.privatePem);
  person('Carol');
  const three = ['Alice', 'Bob', 'Carol'].map((n) => `${n}.approver.pub.json`);
  expect((await inProcess('approvers', 'add', ...three, '--out', 'three.json')).code).toBe(0);
  const before = initiates(sb).length;
  // at the question, Alice and Bob raise the policy to 3 approvals: the plan they approved under 2 is not enough
  const raise = async () => {
    const set = await inProcess(
      'policy',
      'set',
      '--require-approvals',
      '3',
      '--approvers',
      'three.json',
      '--out',
      'raise.json',
      ...service,
    );
    expect(set.code, set.stderr).toBe(0);
    for (const n of ['Alice', 'Bob']) expect((await approve('raise.json', n, n, null)).code).toBe(0);
    const applied = await inProcess('policy', 'apply', 'raise.json');
    expect(applied.code, applied.stderr).toBe(0);
    return 'y\r';
  };
  const t = await onTerminal(['run', '--plan', 'ok.plan.json', ...service], { env, cwd: dir, bin: inst.bin, answer: raise });
  expect(t.atQuestion).toContain('Send 2 payouts');
  expect(t.code, t.output).toBe(3);
  expect(t.output).toMatch(/approval policy .*changed/);
  expect(initiates(sb)).toHaveLength(before);
});

it("an account's first policy, set while a run waits at its confirmation, holds that run: nothing is sent", async () => {
  const { dir, env, inst, service, policy } = await scene();
  const before = initiates(sb).length;
  const first = async () => {
    await policy();
    return 'y\r';
  };
  const t = await onTerminal(['run', 'payroll.csv', ...service], { env, cwd: dir, bin: inst.bin, answer: first });
  expect(t.atQuestion).toContain('Send 2 payouts');
  expect(t.code, t.output).toBe(3);
  expect(t.output).toMatch(/approval policy changed since this run read it \(none, now version 1: 2 approvals of Alice, Bob\)/);
  expect(initiates(sb)).toHaveLength(before);
});

it('defect 6: names are compared as people would: Kim is Kirn, Alíce, "Alice." and "Al ice" are Alice', async () => {
  const { dir, service, inProcess, person, runPlan } = await scene();
  for (const n of ['Kim', 'Kirn', 'Alice', 'Alíce', 'Alice.', 'Al ice', 'Bob']) person(n);
  // (no policy here: the lists, the plan and its approval made in this process, the run by the installation)

  // a list is refused when two of its names collide, both names shown, nothing written
  const kimKirn = await inProcess('approvers', 'add', 'Kim.approver.pub.json', 'Kirn.approver.pub.json', '--out', 'kk.json');
  expect(kimKirn.code).toBe(2);
  expect(kimKirn.stderr).toMatch(/Kirn.*Kim|Kim.*Kirn/);
  expect(() => readFileSync(join(dir, 'kk.json'))).toThrow();
  for (const twin of ['Alíce', 'Alice.', 'Al ice']) {
    const r = await inProcess('approvers', 'add', 'Alice.approver.pub.json', `${twin}.approver.pub.json`, '--out', 'aa.json');
    expect(r.code, twin).toBe(2);
    expect(r.stderr).toContain(twin);
    expect(r.stderr).toContain('Alice');
  }

  // a plan made by Kim, approved only by Kirn, does not run
  const list = await inProcess('approvers', 'add', 'Kirn.approver.pub.json', 'Bob.approver.pub.json', '--out', 'approvers.json');
  expect(list.code, list.stderr).toBe(0);
  const plan = join(dir, 'payroll.plan.json');
  const planned = await inProcess('plan', join(dir, 'payroll.csv'), '--out', plan, '--prepared-by', 'Kim', ...service);
  expect(planned.code, planned.stderr).toBe(0);
  const approved = await inProcess('approve', plan, '--as', 'Kirn', '--key-file', 'Kirn.pem', '--approvers', 'approvers.json', '--yes');
  expect(approved.code, approved.stderr).toBe(0);
  const before = initiates(sb).length;
  const run = await runPlan('payroll.plan.json', 1);
  expect(run.code).toBe(3);
  expect(run.stderr).toContain('Kirn (maker of the plan cannot approve it)');
  expect(initiates(sb)).toHaveLength(before);
});

it("defect 7: a name is its key: Alice cannot sign with Bob's key, and such a signature never blocks Bob's", async () => {
  const { dir, service, inProcess, person, runPlan, keys } = await scene();
  for (const n of ['Alice', 'Bob']) person(n);
  // (no policy here: the list, the plan and the approvals made in this process, the run by the installation)
  const plan = join(dir, 'payroll.plan.json');
  const approve = (name: string, keyName: string) =>
    inProcess('approve', plan, '--as', name, '--key-file', `${keyName}.pem`, '--approvers', 'approvers.json', '--yes');
  expect((await inProcess('approvers', 'add', 'Alice.approver.pub.json', 'Bob.approver.pub.json', '--out', 'approvers.json')).code).toBe(0);
  const planned = await inProcess('plan', join(dir, 'payroll.csv'), '--out', plan, '--prepared-by', 'Dan', ...service);
  expect(planned.code, planned.stderr).toBe(0);

  const asAlice = await approve('Alice', 'Bob');
  expect(asAlice.code).toBe(2);
  expect(asAlice.stderr).toContain('nothing was written');
  expect(existsSync(join(dir, 'payroll.plan.json.approvals.json'))).toBe(false);
  // such a signature in the file all the same (written by hand, or by an older version of the tool)
  await approveAs(join(dir, 'payroll.plan.json'), 'Alice', keys.get('Bob')!.privatePem);

  const byBob = await approve('Bob', 'Bob');
  expect(byBob.code, byBob.stderr).toBe(0);
  const before = initiates(sb).length;
  const run = await runPlan('payroll.plan.json', 1);
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain('1 valid approval of 1 required (Bob)');
  expect(initiates(sb).length - before).toBe(2);
});

it('defect 4: --above counts what is sent without approval per account and UTC day, across batches and state folders', async () => {
  const { cli, inProcess, service, policy, batch } = await scene();
  await policy('--above', 'USD:150');
  await batch('one.csv', '100.01');
  await batch('two.csv', '100.02');
  const fresh = await inProcess('plan', 'one.csv', ...service);
  expect(fresh.stdout).toContain('Approval policy: left today (UTC) to send without approval: USD 150.00 (of USD 150.00).');
  const before = initiates(sb).length;
  const first = await cli('run', 'one.csv', '--yes', ...service);
  expect(first.code, first.stderr).toBe(0);
  expect(initiates(sb)).toHaveLength(before + 1);
  expect((await inProcess('plan', 'two.csv', ...service)).stdout).toContain('without approval: USD 49.99 (of USD 150.00)');
  // the second file alone is under the amount: refused whole, in this state folder and in another
  for (const flags of [[], ['--state-dir', 'other']]) {
    const second = await cli('run', 'two.csv', '--yes', ...flags, ...service);
    expect(second.code).toBe(3);
    expect(second.stderr).toContain('sent without approval today, UTC: USD 100.01');
  }
  expect(initiates(sb)).toHaveLength(before + 1);
});

it('defect 5: --allow-partial never lets a part through that the whole would not', async () => {
  const seed = defaultSeed();
  for (const w of seed.businesses.flatMap((b) => b.wallets)) if (w.currency === 'USD') w.balance = '150.00'; // (one row at a time fits)
  const poor = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null, monthlyQuota: null, seed });
  try {
    const { cli, service, policy, batch } = await scene(2, poor);
    await policy('--above', 'USD:150');
    await batch('three.csv', '100.02', '100.02', '100.02');
    const partial = await cli('run', 'three.csv', '--allow-partial', '--yes', ...service);
    expect(partial.code).toBe(3);
    expect(partial.stderr).toContain(
      "this account's approval policy needs 2 approvals of Alice, Bob for a batch sending more than USD 150.00",
    );
    expect(initiates(poor)).toHaveLength(0);
  } finally {
    await poor.close();
  }
});

it("--above: a run killed after the day's count took its payouts is resumed, its payouts counted once", async () => {
  const slow = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null, monthlyQuota: null });
  try {
    const { cli, inProcess, dir, env, inst, service, policy, batch } = await scene(2, slow);
    await policy('--above', 'USD:150');
    await batch('four.csv', '60.00', '60.00');
    // (the initiates held unanswered: the run is killed once it sent them, their outcome unknown)
    slow.setFaults({ latencyMs: [5_000, 5_000], errorBeforeEffect: 1, routes: ['initiate'] });
    const killed = await runCli(['run', 'four.csv', '--yes', ...service], {
      cwd: dir,
      env,
      bin: inst.bin,
      onSpawn: (child) => {
        const poll = setInterval(() => initiates(slow).length >= 2 && child.kill('SIGKILL'), 5);
        child.on('exit', () => clearInterval(poll));
      },
    });
    expect(killed.signal).toBe('SIGKILL');
    await until(() => slow.inFlight() === 0, 30_000, 'the killed run to be answered');
    slow.setFaults({});
    const resumed = await cli('run', 'four.csv', '--yes', ...service);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('2 whose outcome must be settled first');
    expect(await inProcess('plan', 'four.csv', ...service).then((r) => r.stdout)).toContain('without approval: USD 30.00 (of USD 150.00)');
  } finally {
    await slow.close();
  }
});

describe.runIf(withPostgres)('a team ledger', () => {
  it('two hosts on one team ledger see one policy and one daily allowance; a run without the ledger is refused', async () => {
    const { url: ledger, PGPASSWORD } = withoutPassword(await testDatabase());
    const shared = await dirs.make();
    for (const [name, amount] of [
      ['one.csv', '100.01'],
      ['two.csv', '100.02'],
    ] as const)
      await writeBatch(shared, name, { rows: 1, currencies: ['USD'], prefix: `TEAM${name[0]}`, amount: () => amount });
    writeFileSync(join(shared, 'approvers.json'), JSON.stringify([{ name: 'Carol', publicKey: newKeyPair().publicKey }]));
    /** A host: an installation of its own (its host folder), its own HOME and state folder. */
    const host = async (name: string) => {
      const inst = install(await dirs.make());
      const env = cleanEnv({ HOME: join(shared, `.home-${name}`), PAYOUT_BATCH_STATE_DIR: join(shared, `.state-${name}`), PGPASSWORD });
      return (...args: string[]) => runCli([...args, '--base-url', sb.url, '--rate', '100'], { cwd: shared, env, bin: inst.bin });
    };
    const [a, b] = [await host('a'), await host('b')];
    const set = await a(
      'policy',
      'set',
      '--require-approvals',
      '1',
      '--approvers',
      'approvers.json',
      '--above',
      'USD:150',
      '--ledger',
      ledger,
    );
    expect(set.code, set.stderr).toBe(0);
    expect((await b('plan', 'one.csv', '--ledger', ledger)).stdout).toContain('without approval: USD 150.00 (of USD 150.00)');
    const before = initiates(sb).length;
    const first = await a('run', 'one.csv', '--yes', '--ledger', ledger);
    expect(first.code, first.stderr).toBe(0);
    const second = await b('run', 'two.csv', '--yes', '--ledger', ledger);
    expect(second.code).toBe(3);
    expect(second.stderr).toMatch(
      /approval policy needs 1 approval of Carol for a batch sending more than USD 150\.00.*\(sent without approval today, UTC: USD 100\.01\)/,
    );
    // without the ledger, on either host (b learned of it when it used it): refused, with the command to use
    for (const cli of [a, b]) {
      const alone = await cli('run', 'two.csv', '--yes');
      expect(alone.code).toBe(3);
      expect(alone.stderr).toMatch(
        /this account's approval policy is kept in the team ledger postgres:\/\/\S+: run with it \(`--ledger postgres:/,
      );
    }
    expect(initiates(sb)).toHaveLength(before + 1);
  });

  it('a run with another team ledger than the one the policy is kept in is refused, as one without a ledger is', async () => {
    const full = await testDatabase();
    const [kept, other] = [withoutPassword(full), withoutPassword(await testDatabase())];
    const { env, mainEnv, cli, service, policy, batch } = await scene();
    env.PGPASSWORD = kept.PGPASSWORD;
    mainEnv.PAYOUT_BATCH_LEDGER_URL = full;
    await policy('--ledger', kept.url);
    await batch('elsewhere.csv', '1.00');
    const before = initiates(sb).length;
    const run = await cli('run', 'elsewhere.csv', '--yes', '--ledger', other.url, ...service);
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toMatch(/this account's approval policy is kept in the team ledger postgres:\/\/\S+: run with it/);
    expect(initiates(sb)).toHaveLength(before);
  });

  it('the ledger a policy is kept in is the same ledger with its password in the URL ($PAYOUT_BATCH_LEDGER_URL) or in PGPASSWORD', async () => {
    const kept = await testDatabase();
    const bare = withoutPassword(kept);
    const { dir, env, inst, service, policy, batch } = await scene();
    env.PAYOUT_BATCH_LEDGER_URL = kept;
    await policy('--above', 'USD:150');
    delete env.PAYOUT_BATCH_LEDGER_URL;
    await batch('moved.csv', '1.00');
    const before = initiates(sb).length;
    // as every refusal of a ledger's URL with its password advises
    const args = ['run', 'moved.csv', '--yes', '--ledger', bare.url, ...service];
    const moved = await runCli(args, { cwd: dir, env: { ...env, PGPASSWORD: bare.PGPASSWORD }, bin: inst.bin });
    expect(moved.code, moved.stderr).toBe(0);
    // a host's record of an earlier version, the password as ***: the same ledger still
    for (const f of readdirSync(inst.hostFolder).filter((n) => n.endsWith('.ledger.json'))) {
      const path = join(inst.hostFolder, f);
      writeFileSync(path, readFileSync(path, 'utf8').replace('//payout@', '//payout:***@'));
    }
    await batch('again.csv', '2.00');
    const again = await runCli(['run', 'again.csv', '--yes', ...service], {
      cwd: dir,
      env: { ...env, PAYOUT_BATCH_LEDGER_URL: kept },
      bin: inst.bin,
    });
    expect(again.code, again.stderr).toBe(0);
    expect(initiates(sb)).toHaveLength(before + 2);
  });

  it("a host policy's --above counts what went without approval today whichever team ledger a run names, or none", async () => {
    const { url: ledger, PGPASSWORD } = withoutPassword(await testDatabase());
    const { env, cli, service, policy, batch } = await scene();
    env.PGPASSWORD = PGPASSWORD;
    await policy('--above', 'USD:150');
    await batch('one.csv', '100.01');
    await batch('two.csv', '100.02');
    const before = initiates(sb).length;
    const first = await cli('run', 'one.csv', '--yes', ...service);
    expect(first.code, first.stderr).toBe(0);
    // (a ledger that keeps no policy of the account: the host's is in force, and so is its count)
    const second = await cli('run', 'two.csv', '--yes', '--ledger', ledger, ...service);
    expect(second.code, second.stderr).toBe(3);
    expect(second.stderr).toContain('sent without approval today, UTC: USD 100.01');
    expect(initiates(sb)).toHaveLength(before + 1);
  });

  it("a team ledger's first policy, set on a host with a policy of its own, says that the host's still binds its runs", async () => {
    const { url: ledger, PGPASSWORD } = withoutPassword(await testDatabase());
    const { env, cli, service, policy, batch } = await scene();
    env.PGPASSWORD = PGPASSWORD;
    await policy();
    const set = await cli(
      'policy',
      'set',
      '--require-approvals',
      '1',
      '--approvers',
      'approvers.json',
      '--above',
      'USD:1000000',
      '--ledger',
      ledger,
      ...service,
    );
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain(
      'except on a host with a policy of its own: this one has one (2 approvals of Alice, Bob), which binds its runs',
    );
    await batch('small.csv', '5.00');
    const before = initiates(sb).length;
    const run = await cli('run', 'small.csv', '--yes', '--ledger', ledger, ...service);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("this account's approval policy needs 2 approvals of Alice, Bob");
    expect(initiates(sb)).toHaveLength(before);
  });

  it("a policy set without the account's team ledger, on the host or in another ledger, is refused, not set at once over it", async () => {
    const full = await testDatabase();
    const [kept, other] = [withoutPassword(full), withoutPassword(await testDatabase())];
    const { env, mainEnv, cli, inProcess, person, service, policy, batch } = await scene();
    env.PGPASSWORD = kept.PGPASSWORD;
    mainEnv.PAYOUT_BATCH_LEDGER_URL = full;
    await policy('--ledger', kept.url);
    person('Mallory');
    expect((await inProcess('approvers', 'add', 'Mallory.approver.pub.json', '--out', 'mine.json')).code).toBe(0);
    await batch('loose.csv', '5.00');
    const before = initiates(sb).length;
    for (const [way, ledger] of [
      ['on the host', []],
      ['in another ledger', ['--ledger', other.url]],
    ] as const) {
      const loose = await cli(
        'policy',
        'set',
        '--require-approvals',
        '1',
        '--approvers',
        'mine.json',
        '--above',
        'USD:1000000',
        ...ledger,
        ...service,
      );
      expect(loose.code, `${way}: ${loose.stderr}`).toBe(3);
      expect(loose.stderr).toMatch(/this account's approval policy is kept in the team ledger postgres:\/\/\S+: run with it/);
      const run = await cli('run', 'loose.csv', '--yes', '--ledger', ledger[1] ?? kept.url, ...service);
      expect(run.code, way).toBe(3);
    }
    expect(initiates(sb)).toHaveLength(before);
  });
});

// (Last in the file: its 31 s wait for the approvals to expire idles this worker. This file and the
// screening flow, the suite's two longest, start together, and the flow waits on a clearance's expiry
// first, while this file runs its other tests: two workers idle at once left a core unused for 25 s.)
it('approvals that expire while the run waits at its confirmation no longer count: nothing is sent', async () => {
  const { dir, env, inst, service, inProcess, person, keys, policy } = await scene();
  await policy('--approvals-expire-after', '1m');
  person('Dan');
  const made = await inProcess('plan', join(dir, 'payroll.csv'), '--out', join(dir, 'ok.plan.json'), '--no-quote', '--as', 'Dan', '--approver-key', join(dir, 'Dan.pem'), ...service); // prettier-ignore
  expect(made.code, made.stderr).toBe(0);
  // signed 30 seconds ago (30 for the run to reach its question on a busy machine): counted when the run starts, expired by the time it is answered
  const signedAt = Date.now() - 30_000;
  vi.useFakeTimers({ toFake: ['Date'], now: signedAt });
  try {
    for (const n of ['Alice', 'Bob']) await approveAs(join(dir, 'ok.plan.json'), n, keys.get(n)!.privatePem);
  } finally {
    vi.useRealTimers();
  }
  const before = initiates(sb).length;
  const expired = async () => {
    await until(() => Date.now() > signedAt + 61_000, 45_000, 'the approvals to expire');
    return 'y\r';
  };
  const t = await onTerminal(['run', '--plan', 'ok.plan.json', ...service], { env, cwd: dir, bin: inst.bin, answer: expired });
  expect(t.atQuestion).toContain('Send 2 payouts');
  expect(t.code, t.output).toBe(3);
  expect(t.output).toContain("the account's policy counts approvals of the last 1m only");
  expect(initiates(sb)).toHaveLength(before);
});

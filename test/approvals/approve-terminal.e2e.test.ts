// An approver sees what they sign and is asked (issue 31, item 4), and the approvers list is built
// from what `approver-key new` writes: `approve` on a pseudo-terminal shows the plan and signs
// nothing on "n"; not a terminal without --yes is refused, and so is one without an approvers list
// to check the key against (of a plan; of a policy proposal where no policy is in force, and of a
// clearance, alike); `approvers add` makes a list, and a `cat` of the public key files is accepted
// as one, by `run --plan --require-approvals`. main() in this process reads the host folder of
// policies a test names (packageJson() mocked), else the package's own.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, onTestFinished, vi } from 'vitest';
import { newKeyPair } from '../../src/approvals/approvals-file.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { ROOT, approveAs, cleanEnv, initiates, runCli, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';

/** The host folder of policies main() reads in this process (empty: the package's own). */
const host = vi.hoisted(() => ({ folder: '' }));
vi.mock('../../src/package-root.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/package-root.ts')>();
  return { ...real, packageJson: () => ({ ...real.packageJson(), ...(host.folder && { payoutBatch: { hostFolder: host.folder } }) }) };
});

const dirs = tempDirs('pb-approve-tty-');
let sb: LocalSandbox;
let dir: string;
let env: Record<string, string>;
const cli = (...args: string[]) => runCli(args, { cwd: dir, env });
const approvals = () => join(dir, 'payroll.plan.json.approvals.json');

beforeAll(async () => {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: 100, monthlyQuota: null });
  dir = await dirs.make();
  env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  await writeBatch(dir, 'payroll.csv', { rows: 3, prefix: 'APR', currencies: ['USD'] });
  // the scene, set in this process (the bin's main()): the plan and the approvers' keys
  const inProcess = (...args: string[]) => runMain(args, { cwd: dir, env });
  const planned = await inProcess(
    'plan',
    join(dir, 'payroll.csv'),
    '--out',
    join(dir, 'payroll.plan.json'),
    '--prepared-by',
    'Dan',
    '--base-url',
    sb.url,
    '--rate',
    '100',
  );
  expect(planned.code, planned.stderr).toBe(0);
  for (const name of ['Alice', 'Bob']) expect((await inProcess('approver-key', 'new', '--as', name, '--out', 'keys')).code).toBe(0);
  // the list `approve` checks Alice's key against (a name is its key)
  env.PAYOUT_BATCH_APPROVERS = join(dir, 'keys/Alice.approver.pub.json');
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

/** `payout-batch approve ...` on a pseudo-terminal (util-linux `script`), typing `answer` at [y/N]. */
async function onTerminal(args: string[], answer: string): Promise<{ code: number | null; screen: string }> {
  const cmd = [process.execPath, join(ROOT, 'dist/bin.js'), ...args].map((a) => `'${a}'`).join(' ');
  const child = spawn('script', ['-qfec', cmd, '/dev/null'], { cwd: dir, env: { ...env, TERM: 'xterm' }, stdio: 'pipe' });
  let screen = '';
  const onData = (d: Buffer) => {
    const asked = screen.includes('[y/N]');
    screen += d.toString('utf8');
    if (!asked && screen.includes('[y/N]')) child.stdin.write(answer);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, screen };
}

it('approve shows the plan and asks on a terminal: "n" signs nothing; not a terminal needs --yes; -y signs', async () => {
  const alice = ['approve', 'payroll.plan.json', '--as', 'Alice', '--key-file', 'keys/Alice.approver-key.pem'];
  // no list to check Alice's key against: a usage error, nothing signed
  const { PAYOUT_BATCH_APPROVERS: _list, ...noList } = env;
  const unlisted = await runMain([...alice, '--yes'], { cwd: dir, env: noList });
  expect(unlisted.code).toBe(2);
  expect(unlisted.stderr).toContain('name the approvers list that gives your name its key: --approvers FILE (or $PAYOUT_BATCH_APPROVERS)');
  expect(existsSync(approvals())).toBe(false);
  const declined = await onTerminal(alice, 'n\n');
  expect(declined.code, declined.screen).toBe(3);
  // what is signed, before the question: the service and account, totals, maker, payees, what is already paid
  const shown = declined.screen.slice(0, declined.screen.indexOf('[y/N]'));
  expect(shown).toMatch(new RegExp(`3 payouts \\(USD [\\d,]+\\.\\d\\d\\) in custom \\(${sb.url}\\), account `));
  expect(shown).toContain('prepared by Dan');
  expect(shown).toMatch(/APR-0001 \| .+ \| \S*\d{4} \| \w+ \| USD [\d,]+\.\d\d/);
  expect(shown).toContain('already paid: nothing');
  expect(declined.screen).toContain('Sign this plan as Alice? [y/N]');
  expect(declined.screen).toContain('nothing was signed');
  expect(existsSync(approvals())).toBe(false);

  const piped = await cli(...alice);
  expect(piped.code).toBe(3);
  expect(piped.stdout).toContain('3 payouts (USD');
  expect(piped.stderr).toContain('pass --yes (-y) to sign it; nothing was signed');
  expect(existsSync(approvals())).toBe(false);

  const signed = await cli('approve', 'payroll.plan.json', '--as', 'Alice', '--key-file', 'keys/Alice.approver-key.pem', '-y');
  expect(signed.code, signed.stderr).toBe(0);
  expect(signed.stdout).toContain('Approved payroll.plan.json as Alice');
  await approveAs(join(dir, 'payroll.plan.json'), 'Bob', readFileSync(join(dir, 'keys/Bob.approver-key.pem'), 'utf8'));
  expect(JSON.parse(readFileSync(approvals(), 'utf8')).map((a: { name: string }) => a.name)).toEqual(['Alice', 'Bob']);
});

/** main() in this process with no approvers list, under the host folder of policies `dir/<machine>`. */
const on =
  (machine: string) =>
  (...args: string[]) => {
    host.folder = join(dir, machine);
    const { PAYOUT_BATCH_APPROVERS: _list, ...noList } = env;
    return runMain(args, { cwd: dir, env: noList });
  };

/** Besides a plan, what `approve` signs, made as its makers make it: its path in `dir`. */
const made = {
  /** `policy set` at the office, where a policy is in force: a proposal of a change. */
  proposal: async () => {
    const set = ['policy', 'set', '--approvers', 'keys/Alice.approver.pub.json', '--require-approvals', '1', '--base-url', sb.url];
    expect((await on('office')(...set)).code).toBe(0);
    const proposed = await on('office')(...set, '--approvals-expire-after', '7d');
    expect(proposed.stdout, proposed.stderr).toContain('Proposal written to policy-change.json, not in force');
    return 'policy-change.json';
  },
  /** `screen --clear` of a hit of the sample list. */
  clearance: async () => {
    copyFileSync(join(ROOT, 'samples/payroll-2025-01.csv'), join(dir, 'sample-payroll.csv'));
    const list = join(ROOT, 'samples/sanctions/sdn.csv');
    const clear = ['--clear', 'PAYROLL-2025-01-021', '--entry', 'ofac-sdn:90004', '--reason', 'another company of that name'];
    const cleared = await on('laptop')('screen', 'sample-payroll.csv', '--sanctions-list', list, ...clear);
    expect(cleared.code, cleared.stderr).toBe(0);
    const [file] = readdirSync(join(dir, 'clearances')).filter((f) => f.endsWith('.clearance.json'));
    return join('clearances', file!);
  },
};

it.each([
  [
    'a policy proposal',
    'proposal',
    'name the approvers list of the policy in force: --approvers FILE (or $PAYOUT_BATCH_APPROVERS); nothing was written',
  ],
  [
    'a sanctions clearance',
    'clearance',
    'name the approvers list that gives your name its key: --approvers FILE (or $PAYOUT_BATCH_APPROVERS); nothing was written',
  ],
] as const)('approve of %s with no approvers list to check the key against: a usage error, nothing signed', async (_, what, said) => {
  onTestFinished(() => void (host.folder = ''));
  const file = await made[what]();
  // on an approver's own machine, where no policy of the account is in force
  const r = await on('laptop')('approve', file, '--as', 'Alice', '--key-file', 'keys/Alice.approver-key.pem', '--yes');
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(said);
  expect(existsSync(join(dir, `${file}.approvals.json`))).toBe(false);
});

it('approvers add builds the list once per approver, refuses a look-alike; a cat of the key files is a list run accepts', async () => {
  const added = await cli('approvers', 'add', 'keys/Alice.approver.pub.json', 'keys/Bob.approver.pub.json', '--out', 'approvers.json');
  expect(added.code, added.stderr).toBe(0);
  expect(added.stdout).toContain('approvers.json: 2 approvers (Alice ');
  // (the next two in this process: the bin's main())
  const again = await runMain(['approvers', 'add', 'keys/Alice.approver.pub.json', '--out', 'approvers.json'], { cwd: dir, env });
  expect(again.code, again.stderr).toBe(0);
  expect(again.stdout).toContain('already listed Alice');
  const list = JSON.parse(readFileSync(join(dir, 'approvers.json'), 'utf8')) as { name: string }[];
  expect(list.map((a) => a.name)).toEqual(['Alice', 'Bob']);

  // all-Cyrillic "Воb" looks like Bob: refused, the list unchanged
  writeFileSync(join(dir, 'twin.json'), JSON.stringify({ name: 'Вов', publicKey: newKeyPair().publicKey }));
  const twin = await runMain(['approvers', 'add', 'twin.json', '--out', 'approvers.json'], { cwd: dir, env });
  expect(twin.code).toBe(2);
  expect(twin.stderr).toMatch(/repeats the name of Bob.*nothing was written/);
  expect(JSON.parse(readFileSync(join(dir, 'approvers.json'), 'utf8'))).toEqual(list);

  // `cat *.approver.pub.json > approvers.json`, as an approver would write it
  const cat = ['Alice', 'Bob'].map((n) => readFileSync(join(dir, `keys/${n}.approver.pub.json`), 'utf8')).join('');
  writeFileSync(join(dir, 'cat-approvers.json'), cat);
  const before = initiates(sb).length;
  const run = await cli(
    'run',
    '--plan',
    'payroll.plan.json',
    '--require-approvals',
    '2',
    '--approvers',
    'cat-approvers.json',
    '--yes',
    '--base-url',
    sb.url,
    '--rate',
    '100',
  );
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain('2 valid approvals of 2 required (Alice, Bob)');
  expect(initiates(sb).length - before).toBe(3);
});

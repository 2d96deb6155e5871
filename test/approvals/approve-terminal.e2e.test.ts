// An approver sees what they sign and is asked (issue 31, item 4), and the approvers list is built
// from what `approver-key new` writes: `approve` on a pseudo-terminal shows the plan and signs
// nothing on "n"; not a terminal without --yes is refused, and so is one without an approvers list
// to check the key against; `approvers add` makes a list, and a `cat` of the public key files is
// accepted as one, by `run --plan --require-approvals`.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newKeyPair } from '../../src/approvals/approvals-file.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { ROOT, approveAs, cleanEnv, initiates, runCli, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';

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

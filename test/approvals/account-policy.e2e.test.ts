// An account's approval policy over the real CLI and a sandbox over HTTP: once `policy set`, a run
// against the account needs the approvals without any flag saying so, refused runs make not one
// initiate, `--above` lets small batches go, and every change, signed, is kept with the policy.
// Runs, retries and watches are processes of an installation of its own (install.ts), and so is
// the `policy set` whose file is looked at; the steps that set a test up (plans, shows, a change
// signed and applied) run main() in this process, under that installation's host folder (mocked).
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { newKeyPair } from '../../src/approvals/approvals-file.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { readResults } from '../../src/results/read.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { setStatus } from '../ops/helpers.ts';
import { ROOT, approveAs, cleanEnv, initiates, runCli, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';
import { install, type Installation } from './install.ts';

/** The host folder of policies main() reads in this process: the test's installation's (empty: the package's own). */
const host = vi.hoisted(() => ({ folder: '' }));
vi.mock('../../src/package-root.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/package-root.ts')>();
  return { ...real, packageJson: () => ({ ...real.packageJson(), ...(host.folder && { payoutBatch: { hostFolder: host.folder } }) }) };
});
/** `payout-batch ...args` by main() in this process, in `cwd`, under the host folder of `inst`. */
const inProcessOf =
  (inst: Installation, cwd: string, env: Record<string, string>) =>
  (...args: string[]) => {
    host.folder = inst.hostFolder;
    return runMain(args, { cwd, env });
  };

const dirs = tempDirs('pb-policy-');
let sb: LocalSandbox;
beforeAll(async () => {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null, monthlyQuota: null });
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

it('a policy set once is needed by every run against the account, and no flag turns it off', async () => {
  const dir = await dirs.make();
  const inst = install(await dirs.make());
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const cli = (...args: string[]) => runCli([...args, '--base-url', sb.url, '--rate', '100'], { cwd: dir, env, bin: inst.bin });
  const inProcess = (...args: string[]) => inProcessOf(inst, dir, env)(...args, '--base-url', sb.url, '--rate', '100');
  const approveChange = (name: string, key: string) =>
    inProcessOf(inst, dir, env)('approve', 'policy-change.json', '--as', name, '--key-file', key, '--yes');
  await writeBatch(dir, 'payroll.csv', { rows: 3, currencies: ['USD'] });
  // (amounts of their own: the same payee and amount as payroll.csv's, paid minutes before, is a probable duplicate)
  await writeBatch(dir, 'small.csv', { rows: 2, currencies: ['USD'], prefix: 'SMALL', amount: (i) => `${50 + i}.00` });
  await writeBatch(dir, 'large.csv', { rows: 2, currencies: ['USD'], prefix: 'LARGE', amount: () => '60000.00' });
  const [alice, bob, dan] = [newKeyPair(), newKeyPair(), newKeyPair()];
  for (const [n, k] of Object.entries({ alice, bob, dan })) writeFileSync(join(dir, `${n}.pem`), k.privatePem, { mode: 0o600 });
  writeFileSync(
    join(dir, 'approvers.json'),
    JSON.stringify([
      { name: 'Alice', publicKey: alice.publicKey },
      { name: 'Bob', publicKey: bob.publicKey },
    ]),
  );
  const approve = (name: string, key: { privatePem: string }) => approveAs(join(dir, 'payroll.plan.json'), name, key.privatePem);

  expect((await inProcess('policy', 'show')).stdout).toContain('no approval policy');
  const set = await cli('policy', 'set', '--require-approvals', '2', '--approvers', 'approvers.json', '--approvals-expire-after', '7d');
  expect(set.code, set.stderr).toBe(0);
  // in the installation's host folder, one file per account and API key, that others may read but not write
  const [file] = readdirSync(inst.hostFolder).filter((f) => f.endsWith('.policy.json'));
  expect(statSync(join(inst.hostFolder, file!)).mode & 0o777).toBe(0o644);
  expect((await inProcess('policy', 'show')).stdout).toContain('2 approvals of Alice, Bob; approvals expire after 7d');

  // a plain run, and a plan with one approval and a flag asking for fewer: refused before any
  // initiate, with the policy's words (a plan with none: approvals.e2e.test.ts)
  const plain = await cli('run', 'payroll.csv', '--yes');
  expect(plain.code).toBe(3);
  expect(plain.stderr).toContain("refused: this account's approval policy needs 2 approvals of Alice, Bob");
  const planned = await inProcess('plan', 'payroll.csv', '--out', 'payroll.plan.json', '--as', 'Dan', '--approver-key', 'dan.pem');
  expect(planned.code, planned.stderr).toBe(0);
  await approve('Alice', alice);
  const fewer = await cli('run', '--plan', 'payroll.plan.json', '--yes', '--require-approvals', '1', '--approvers', 'approvers.json');
  expect(fewer.code).toBe(3);
  expect(fewer.stderr).toContain('1 valid approval of 2 required (Alice)');
  expect(initiates(sb)).toHaveLength(0);

  await approve('Bob', bob);
  const approved = await cli('run', '--plan', 'payroll.plan.json', '--yes');
  expect(approved.code, approved.stderr).toBe(0);
  expect(approved.stdout).toContain("Approvals under this account's policy: 2 valid approvals of 2 required (Alice, Bob)");
  expect(initiates(sb)).toHaveLength(3);
  // retry carries no plan: paying a failed row again needs the policy's approvals too
  const [first] = (await readResults(join(dir, 'payroll.results.csv'))).rows;
  await setStatus(sb, first!.result.payoutId!, 'FAILED');
  expect((await runMain(['status', join(dir, 'payroll.results.csv'), '--base-url', sb.url], { cwd: dir, env })).code).toBe(1);
  const retry = await cli('retry', 'payroll.results.csv', '--resend-failed', '--yes');
  expect(retry.code, retry.stderr).toBe(3);
  expect(retry.stderr).toContain("this account's approval policy needs 2 approvals of Alice, Bob");
  expect(initiates(sb)).toHaveLength(3);

  // above an amount only (a change: proposed, signed by both, applied): a small batch goes without approvals
  const above = await inProcess('policy', 'set', '--require-approvals', '2', '--approvers', 'approvers.json', '--above', 'USD:100000');
  expect(above.code, above.stderr).toBe(0);
  for (const [name, key] of [
    ['Alice', 'alice.pem'],
    ['Bob', 'bob.pem'],
  ])
    expect((await approveChange(name!, key!)).code).toBe(0);
  const applied = await inProcess('policy', 'apply', 'policy-change.json');
  expect(applied.code, applied.stderr).toBe(0);
  const small = await cli('run', 'small.csv', '--yes');
  expect(small.code, small.stderr).toBe(0);
  expect(initiates(sb)).toHaveLength(5);
  // (refused on the file's own amounts: not one request, the preflight's reads included)
  const logAtLarge = sb.requestLog().length;
  const large = await cli('run', 'large.csv', '--yes');
  expect(large.code).toBe(3);
  expect(
    sb
      .requestLog()
      .slice(logAtLarge)
      .map((r) => `${r.method} ${r.path}`),
  ).toEqual([]);
  expect(large.stderr).toContain(
    "this account's approval policy needs 2 approvals of Alice, Bob for a batch sending more than USD 100,000.00",
  );
  expect(initiates(sb)).toHaveLength(5);
  // every version, who set it and who signed the change
  const shown = (await inProcess('policy', 'show')).stdout;
  expect(shown).toMatch(/version 1, \S+ by \S+: 2 approvals of Alice, Bob; approvals expire after 7d/);
  expect(shown).toMatch(
    /version 2, \S+ by \S+, signed by Alice, Bob: 2 approvals of Alice, Bob for a batch sending more than USD 100,000.00/,
  );

  // a policy file others could have written is not trusted: nothing is sent
  chmodSync(join(inst.hostFolder, file!), 0o666);
  const unsafe = await cli('run', 'small.csv', '--yes');
  expect(unsafe.code).toBe(3);
  expect(unsafe.stderr).toContain('writable by others');
  expect(initiates(sb)).toHaveLength(5);
});

it('a watch folder against an account with a policy runs no file the policy has not approved', async () => {
  const dir = await dirs.make();
  const inst = install(await dirs.make());
  const alice = newKeyPair();
  writeFileSync(join(dir, 'approvers.json'), JSON.stringify([{ name: 'Alice', publicKey: alice.publicKey }]));
  writeFileSync(join(dir, 'payout-batch.json'), JSON.stringify({ environment: 'sandbox', baseUrl: sb.url, settleSeconds: 0 }));
  mkdirSync(join(dir, 'inbox'));
  const env = cleanEnv({});
  // the account's policy on this host: the watch, whose ledger is DIR/.state, sees it all the same
  const set = await inProcessOf(inst, dir, env)(
    'policy',
    'set',
    '--require-approvals',
    '1',
    '--approvers',
    'approvers.json',
    '--base-url',
    sb.url,
  );
  expect(set.code, set.stderr).toBe(0);
  await writeBatch(join(dir, 'inbox'), 'payroll.csv', { rows: 2, currencies: ['USD'] });
  writeFileSync(join(dir, 'inbox', 'payroll.csv.ready'), '');
  const sent = initiates(sb).length;
  const logAt = sb.requestLog().length;
  const w = await runCli(['watch', dir, '--once'], { cwd: dir, env, bin: inst.bin });
  expect(w.code).toBe(3);
  expect(w.stdout + w.stderr).toContain("this account's approval policy needs 1 approval of Alice");
  // refused before its preflight, as `run` is: not one request, not even a read of the wallets
  expect(
    sb
      .requestLog()
      .slice(logAt)
      .map((e) => e.route),
  ).toEqual([]);
  // what a watch needs: the plan and its approvals dropped with the file (no `run --plan`, which a watch never runs)
  expect(w.stdout + w.stderr).toMatch(
    /drop payroll\.plan\.json \(`payout-batch plan .*payroll\.csv --out payroll\.plan\.json.*into the inbox/,
  );
  expect(w.stdout + w.stderr).not.toContain('run --plan PLAN');
  expect(readdirSync(join(dir, 'failed'))).toHaveLength(1);
  expect(initiates(sb)).toHaveLength(sent);
});

/** A watch folder (its configuration `config`) against an account whose policy is 1 approval of Alice, and Dan's maker-signed plan of payroll.csv in staging/. */
async function watchUnderPolicy(prefix: string, config: Record<string, unknown> = {}, policyFlags: string[] = []) {
  const dir = await dirs.make();
  const inst = install(await dirs.make());
  const [alice, bob, dan] = [newKeyPair(), newKeyPair(), newKeyPair()];
  writeFileSync(join(dir, 'dan.pem'), dan.privatePem, { mode: 0o600 });
  writeFileSync(join(dir, 'approvers.json'), JSON.stringify([{ name: 'Alice', publicKey: alice.publicKey }]));
  writeFileSync(join(dir, 'bob-only.json'), JSON.stringify([{ name: 'Bob', publicKey: bob.publicKey }]));
  const configure = (c: Record<string, unknown>) =>
    writeFileSync(join(dir, 'payout-batch.json'), JSON.stringify({ environment: 'sandbox', baseUrl: sb.url, settleSeconds: 0, ...c }));
  configure(config);
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const cli = (...args: string[]) => runCli(args, { cwd: dir, env, bin: inst.bin });
  const inProcess = inProcessOf(inst, dir, env);
  const set = await inProcess(
    'policy',
    'set',
    '--require-approvals',
    '1',
    '--approvers',
    'approvers.json',
    ...policyFlags,
    '--base-url',
    sb.url,
  );
  expect(set.code, set.stderr).toBe(0);
  mkdirSync(join(dir, 'inbox'));
  mkdirSync(join(dir, 'staging'));
  await writeBatch(join(dir, 'staging'), 'payroll.csv', { rows: 2, currencies: ['USD'], prefix, amount: (i) => `${70 + i}.00` });
  const plan = join(dir, 'staging', 'payroll.plan.json');
  const planned = await inProcess(
    'plan',
    'staging/payroll.csv',
    '--out',
    plan,
    '--as',
    'Dan',
    '--approver-key',
    'dan.pem',
    '--base-url',
    sb.url,
  );
  expect(planned.code, planned.stderr).toBe(0);
  /** The plan, its approvals and the batch, as they are in staging/ now, into the inbox. */
  const drop = () => {
    for (const n of ['payroll.plan.json', 'payroll.plan.json.approvals.json', 'payroll.csv'])
      copyFileSync(join(dir, 'staging', n), join(dir, 'inbox', n));
  };
  return { dir, drop, configure, watch: () => cli('watch', dir, '--once'), approve: (name: string, key: { privatePem: string }) => approveAs(plan, name, key.privatePem), alice, bob }; // prettier-ignore
}

it("a watch whose configuration asks no approvals pays a file once with the plan the account's policy approved, dropped beside it", async () => {
  const w = await watchUnderPolicy('WPLAN');
  await w.approve('Alice', w.alice);
  w.drop();
  const sent = initiates(sb).length;
  const paid = await w.watch();
  expect(paid.code, paid.stdout + paid.stderr).toBe(0);
  expect(initiates(sb)).toHaveLength(sent + 2);
  // the plan and its approvals went with their batch, never claimed as batches of their own
  expect(readdirSync(join(w.dir, 'failed'))).toEqual([]);
  const [claim] = readdirSync(join(w.dir, 'done'));
  expect(readdirSync(join(w.dir, 'done', claim!))).toEqual(
    expect.arrayContaining(['payroll.csv', 'payroll.plan.json', 'payroll.plan.json.approvals.json']),
  );
  expect(JSON.parse(readFileSync(join(w.dir, 'done', claim!, 'payroll.summary.json'), 'utf8'))).toMatchObject({
    approvedBy: ['Alice'],
    summary: { created: 2 },
  });
  // dropped again: not paid twice
  w.drop();
  const again = await w.watch();
  expect(again.stdout + again.stderr).toContain('already processed');
  expect(readdirSync(join(w.dir, 'failed'))).toHaveLength(1);
  expect(initiates(sb)).toHaveLength(sent + 2);
});

it("a plan the account's policy has not approved is refused whole by a watch, even one whose own approvers approved it", async () => {
  const w = await watchUnderPolicy('WNOPL');
  await w.approve('Bob', w.bob);
  const sent = initiates(sb).length;
  w.drop();
  const refused = await w.watch();
  expect(refused.code).toBe(3);
  expect(refused.stdout + refused.stderr).toContain("this account's approval policy needs 1 approval of Alice");
  expect(refused.stdout + refused.stderr).toContain('Bob: not in the approvers list');
  expect(readdirSync(join(w.dir, 'failed'))).toHaveLength(1);
  // its own list (Bob's) and count do not take the place of the policy's
  w.configure({ requireApprovals: 1, approvers: 'bob-only.json' });
  w.drop();
  const logAt = sb.requestLog().length;
  const own = await w.watch();
  expect(own.code).toBe(3);
  expect(own.stdout + own.stderr).toContain("this account's approval policy needs 1 approval of Alice");
  expect(readdirSync(join(w.dir, 'failed'))).toHaveLength(2);
  // refused before its preflight, as without the configuration's check: not one request
  expect(sb.requestLog().slice(logAt)).toEqual([]);
  expect(initiates(sb)).toHaveLength(sent);
});

it('under a policy with --above, a watch pays a plan short of approvals within the allowance, as run --plan does', async () => {
  const w = await watchUnderPolicy('WABOVE', {}, ['--above', 'USD:100000']);
  await w.approve('Bob', w.bob);
  w.drop();
  const sent = initiates(sb).length;
  const paid = await w.watch();
  expect(paid.code, paid.stdout + paid.stderr).toBe(0);
  expect(initiates(sb)).toHaveLength(sent + 2);
  const [claim] = readdirSync(join(w.dir, 'done'));
  const summary = JSON.parse(readFileSync(join(w.dir, 'done', claim!, 'payroll.summary.json'), 'utf8'));
  expect(summary).toMatchObject({ summary: { created: 2 } });
  expect(summary.approvedBy).toBeUndefined();
});

// A container's uid often has no entry in the user database, where os.userInfo() throws. What
// records a person (a policy's setter, a clearance's author, a plan's maker) then takes $USER, as
// `plan --out` did; `policy set` and `screen --clear` ended in an unexpected error. The CLI runs
// here in a user namespace (util-linux unshare) as uid 4242, which /etc/passwd does not name.

/** node with these arguments as uid 4242, which has no entry: its userInfo() throws. */
const asUnnamedUid = (nodeArgs: string[], cwd: string, env: Record<string, string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const unshare = ['--user', '--map-user=4242', '--map-group=4242', process.execPath, ...nodeArgs];
    execFile('unshare', unshare, { cwd, env }, (e, stdout, stderr) => resolve({ code: e ? Number(e.code ?? 1) : 0, stdout, stderr }));
  });

it('policy set and screen --clear record $USER, not an unexpected error', async () => {
  const dir = await dirs.make();
  const inst = install(await dirs.make());
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state'), USER: 'treasurer' });
  const cli = (...args: string[]) => asUnnamedUid([inst.bin, ...args], dir, env);
  // (that the namespace's uid really has no entry)
  const probe = await asUnnamedUid(['-e', "try { require('os').userInfo() } catch { process.exit(7) }"], dir, env);
  expect(probe.code, probe.stderr).toBe(7);

  writeFileSync(join(dir, 'approvers.json'), JSON.stringify([{ name: 'Alice', publicKey: newKeyPair().publicKey }]));
  const set = await cli('policy', 'set', '--require-approvals', '1', '--approvers', 'approvers.json', '--base-url', sb.url);
  expect(set.code, set.stderr).toBe(0);
  const [policy] = readdirSync(inst.hostFolder).filter((f) => f.endsWith('.policy.json'));
  expect(JSON.parse(readFileSync(join(inst.hostFolder, policy!), 'utf8')).setBy).toBe(`treasurer@${hostname()}`);

  copyFileSync(join(ROOT, 'samples/payroll-2025-01.csv'), join(dir, 'payroll.csv'));
  const list = join(ROOT, 'samples/sanctions/sdn.csv');
  const clear = ['--clear', 'PAYROLL-2025-01-021', '--entry', 'ofac-sdn:90004', '--reason', 'another company of that name'];
  const cleared = await cli('screen', 'payroll.csv', '--sanctions-list', list, ...clear);
  expect(cleared.code, cleared.stderr).toBe(0);
  const [clearance] = readdirSync(join(dir, 'clearances')).filter((f) => f.endsWith('.clearance.json'));
  expect(JSON.parse(readFileSync(join(dir, 'clearances', clearance!), 'utf8')).madeBy).toBe('treasurer');
});

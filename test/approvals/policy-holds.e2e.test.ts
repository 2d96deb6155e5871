// Issue 40, an approval policy that holds, tried as a hurried or dishonest operator would, with
// real processes against a sandbox over HTTP: payouts are counted at the sandbox.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newKeyPair, type NewKeyPair } from '../../src/approvals/keys.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/index.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { approveAs, cleanEnv, initiates, runCli, tempDirs, writeBatch } from '../engine/helpers.ts';

const dirs = tempDirs('pb-policy-holds-');
let sb: LocalSandbox;
beforeAll(async () => {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null, monthlyQuota: null });
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

/** A folder with a batch, the CLI run in it, and approver keys written as `approver-key new` writes them. */
async function scene(rows = 2) {
  const dir = await dirs.make();
  await writeBatch(dir, 'payroll.csv', { rows, currencies: ['USD'] });
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const service = ['--base-url', sb.url, '--rate', '100'];
  const cli = (...args: string[]) => runCli(args, { cwd: dir, env });
  const keys = new Map<string, NewKeyPair>();
  /** NAME.pem and NAME.approver.pub.json in the folder. */
  const person = (name: string) => {
    const k = newKeyPair();
    keys.set(name, k);
    writeFileSync(join(dir, `${name}.pem`), k.privatePem, { mode: 0o600 });
    writeFileSync(join(dir, `${name}.approver.pub.json`), JSON.stringify({ name, publicKey: k.publicKey }) + '\n');
    return k;
  };
  const approve = (plan: string, name: string, keyName = name) =>
    cli('approve', plan, '--as', name, '--key-file', `${keyName}.pem`, '--approvers', 'approvers.json', '--yes');
  return { dir, env, service, cli, person, approve, keys };
}

it('defect 6: names are compared as people would: Kim is Kirn, Alíce, "Alice." and "Al ice" are Alice', async () => {
  const { dir, service, cli, person, approve } = await scene();
  for (const n of ['Kim', 'Kirn', 'Alice', 'Alíce', 'Alice.', 'Al ice', 'Bob']) person(n);

  // a list is refused when two of its names collide, both names shown, nothing written
  const kimKirn = await cli('approvers', 'add', 'Kim.approver.pub.json', 'Kirn.approver.pub.json', '--out', 'kk.json');
  expect(kimKirn.code).toBe(2);
  expect(kimKirn.stderr).toMatch(/Kirn.*Kim|Kim.*Kirn/);
  expect(() => readFileSync(join(dir, 'kk.json'))).toThrow();
  for (const twin of ['Alíce', 'Alice.', 'Al ice']) {
    const r = await cli('approvers', 'add', 'Alice.approver.pub.json', `${twin}.approver.pub.json`, '--out', 'aa.json');
    expect(r.code, twin).toBe(2);
    expect(r.stderr).toContain(twin);
    expect(r.stderr).toContain('Alice');
  }

  // a plan made by Kim, approved only by Kirn, does not run
  const list = await cli('approvers', 'add', 'Kirn.approver.pub.json', 'Bob.approver.pub.json', '--out', 'approvers.json');
  expect(list.code, list.stderr).toBe(0);
  const planned = await cli('plan', 'payroll.csv', '--out', 'payroll.plan.json', '--prepared-by', 'Kim', ...service);
  expect(planned.code, planned.stderr).toBe(0);
  expect((await approve('payroll.plan.json', 'Kirn')).code).toBe(0);
  const before = initiates(sb).length;
  const run = await cli(
    'run',
    '--plan',
    'payroll.plan.json',
    '--require-approvals',
    '1',
    '--approvers',
    'approvers.json',
    '--yes',
    ...service,
  );
  expect(run.code).toBe(3);
  expect(run.stderr).toContain('Kirn (maker of the plan cannot approve it)');
  expect(initiates(sb)).toHaveLength(before);
});

it("defect 7: a name is its key: Alice cannot sign with Bob's key, and such a signature never blocks Bob's", async () => {
  const { dir, service, cli, person, approve, keys } = await scene();
  for (const n of ['Alice', 'Bob']) person(n);
  expect((await cli('approvers', 'add', 'Alice.approver.pub.json', 'Bob.approver.pub.json', '--out', 'approvers.json')).code).toBe(0);
  const planned = await cli('plan', 'payroll.csv', '--out', 'payroll.plan.json', '--prepared-by', 'Dan', ...service);
  expect(planned.code, planned.stderr).toBe(0);

  const asAlice = await approve('payroll.plan.json', 'Alice', 'Bob');
  expect(asAlice.code).toBe(2);
  expect(asAlice.stderr).toContain('nothing was written');
  expect(existsSync(join(dir, 'payroll.plan.json.approvals.json'))).toBe(false);
  // such a signature in the file all the same (written by hand, or by an older version of the tool)
  await approveAs(join(dir, 'payroll.plan.json'), 'Alice', keys.get('Bob')!.privatePem);

  const byBob = await approve('payroll.plan.json', 'Bob');
  expect(byBob.code, byBob.stderr).toBe(0);
  const before = initiates(sb).length;
  const run = await cli(
    'run',
    '--plan',
    'payroll.plan.json',
    '--require-approvals',
    '1',
    '--approvers',
    'approvers.json',
    '--yes',
    ...service,
  );
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain('1 valid approval of 1 required (Bob)');
  expect(initiates(sb).length - before).toBe(2);
});

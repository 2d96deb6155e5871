// Four eyes over the real CLI and a sandbox over HTTP: a plan is refused without approvals and
// with its maker's, and runs once two distinct listed approvers signed it; a refused run makes
// not one request. The run that pays is a process; the refusals, not about one, run main() here.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { newKeyPair } from '../../src/approvals/approvals-file.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { allPayouts, approveAs, cleanEnv, initiates, runCli, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';

const dirs = tempDirs('pb-approvals-');
let sb: LocalSandbox | undefined;
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

it("refused without approvals and with the maker's, run with two distinct listed approvers", async () => {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
  const dir = await dirs.make();
  await writeBatch(dir, 'payroll.csv', { rows: 3 });
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const cli = (...args: string[]) => runCli(args, { cwd: dir, env });
  /** The same by main() in this process: the plan and the maker's approval set the runs up. */
  const inProcess = (...args: string[]) => runMain(args, { cwd: dir, env });
  const service = ['--base-url', sb.url, '--rate', '100'];

  // Alice's key through the command; Bob's and the maker's made here (the same function).
  const made = await cli('approver-key', 'new', '--as', 'Alice', '--out', 'keys');
  expect(made.code, made.stderr).toBe(0);
  const alicePem = readFileSync(join(dir, 'keys/Alice.approver-key.pem'), 'utf8');
  expect(statSync(join(dir, 'keys/Alice.approver-key.pem')).mode & 0o777).toBe(0o600);
  expect(made.stdout + made.stderr).not.toContain(alicePem.split('\n')[1]);
  const aliceEntry = JSON.parse(readFileSync(join(dir, 'keys/Alice.approver.pub.json'), 'utf8'));
  const bob = newKeyPair();
  const dan = newKeyPair();
  writeFileSync(join(dir, 'bob.pem'), bob.privatePem, { mode: 0o600 });
  writeFileSync(join(dir, 'dan.pem'), dan.privatePem, { mode: 0o600 });
  // Dan is a listed approver too: his approval is refused as the plan's maker, not as unknown.
  writeFileSync(
    join(dir, 'approvers.json'),
    JSON.stringify([aliceEntry, { name: 'Bob', publicKey: bob.publicKey }, { name: 'Dan', publicKey: dan.publicKey }]),
  );

  const planned = await inProcess('plan', 'payroll.csv', '--out', 'payroll.plan.json', '--prepared-by', 'Dan', ...service);
  expect(planned.code, planned.stderr).toBe(0);
  expect(JSON.parse(readFileSync(join(dir, 'payroll.plan.json'), 'utf8')).preparedBy).toBe('Dan');
  const afterPlan = sb.requestLog().length;
  const gate = ['--plan', 'payroll.plan.json', '--require-approvals', '2', '--approvers', 'approvers.json', '--yes', ...service];

  const none = await inProcess('run', ...gate);
  expect(none.code).toBe(3);
  expect(none.stderr).toContain('refused: 0 valid approvals of 2 required: no approvals. Nothing was sent.');

  const byMaker = await inProcess(
    'approve',
    'payroll.plan.json',
    '--as',
    'Dan',
    '--key-file',
    'dan.pem',
    '--approvers',
    'approvers.json',
    '--yes',
  );
  expect(byMaker.code, byMaker.stderr).toBe(0);
  expect(byMaker.stdout).toMatch(/3 payouts \(.*\) in custom/);
  const makerOnly = await inProcess('run', ...gate);
  expect(makerOnly.code).toBe(3);
  expect(makerOnly.stderr).toContain('0 valid approvals of 2 required: Dan (maker of the plan cannot approve it)');
  expect(sb.requestLog()).toHaveLength(afterPlan); // not one request for a refused run

  // (the two approvals stored as the command stores them, the report made in this process: the
  // bin's main(); approve-terminal.e2e.test.ts runs `approve` as a process)
  await approveAs(join(dir, 'payroll.plan.json'), 'Alice', alicePem);
  await approveAs(join(dir, 'payroll.plan.json'), 'Bob', bob.privatePem);
  // The plan's report shows who approved, and which approvals count.
  const report = await runMain(['report', join(dir, 'payroll.plan.json'), '--approvers', join(dir, 'approvers.json')], { cwd: dir, env });
  expect(report.code, report.stderr).toBe(0);
  const html = readFileSync(join(dir, 'payroll.plan.html'), 'utf8');
  expect(html).toMatch(/data-approver="Alice"[^>]*data-valid="true"/);
  expect(html).toMatch(/data-approver="Bob"[^>]*data-valid="true"/);
  expect(html).toMatch(/data-approver="Dan"[^>]*data-valid="false"/);

  const approved = await cli('run', ...gate);
  expect(approved.code, approved.stderr).toBe(0);
  expect(approved.stdout).toContain(
    'Approvals: 2 valid approvals of 2 required (Alice, Bob); not counted: Dan (maker of the plan cannot approve it).',
  );
  expect(initiates(sb)).toHaveLength(3);
  expect(await allPayouts(sb)).toHaveLength(3);
});

it('plan --out naming the batch file itself is refused: the batch is never overwritten by its plan', async () => {
  const dir = await dirs.make();
  const batch = await writeBatch(dir, 'payroll.csv', { rows: 1 });
  const before = readFileSync(batch, 'utf8');
  // (in this process: files by absolute path)
  const r = await runMain(['plan', batch, '--out', batch, '--env', 'local'], { cwd: dir, env: cleanEnv() });
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toContain(`--out ${batch}: that is the batch file itself`);
  expect(readFileSync(batch, 'utf8')).toBe(before);
});

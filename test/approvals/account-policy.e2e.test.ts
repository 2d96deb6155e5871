// An account's approval policy over the real CLI and a sandbox over HTTP: once `policy set`, a run
// against the account needs the approvals without any flag saying so, refused runs make not one
// initiate, `--above` lets small batches go, and every change is logged in the ledger.
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newKeyPair } from '../../src/approvals/keys.ts';
import { policyPath } from '../../src/approvals/account-policy.ts';
import { ledgerDirFor } from '../../src/ledger/file.ts';
import { accountOf } from '../../src/ledger/ledger.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/index.ts';
import { readResults } from '../../src/results/read.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { setStatus } from '../ops/helpers.ts';
import { approveAs, cleanEnv, cliIn, initiates, runCli, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';

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
  const { cli, state } = cliIn(dir, sb.url);
  await writeBatch(dir, 'payroll.csv', { rows: 3, currencies: ['USD'] });
  await writeBatch(dir, 'small.csv', { rows: 2, currencies: ['USD'], prefix: 'SMALL' });
  await writeBatch(dir, 'large.csv', { rows: 2, currencies: ['USD'], prefix: 'LARGE', amount: () => '60000.00' });
  const [alice, bob] = [newKeyPair(), newKeyPair()];
  writeFileSync(
    join(dir, 'approvers.json'),
    JSON.stringify([
      { name: 'Alice', publicKey: alice.publicKey },
      { name: 'Bob', publicKey: bob.publicKey },
    ]),
  );
  const ledgerDir = ledgerDirFor(state, accountOf(sb.url));
  // the steps that set the scene in this process (the bin's main(), files named by absolute paths;
  // the approve command's signing); the runs the policy must refuse or let go are real processes
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: state });
  const inProcess = (...args: string[]) => runMain([...args, '--base-url', sb.url], { cwd: dir, env });
  const approve = (name: string, key: { privatePem: string }) => approveAs(join(dir, 'payroll.plan.json'), name, key.privatePem);

  expect((await inProcess('policy', 'show')).stdout).toContain('no approval policy');
  const set = await inProcess(
    'policy',
    'set',
    '--require-approvals',
    '2',
    '--approvers',
    'approvers.json',
    '--approvals-expire-after',
    '7d',
  );
  expect(set.code, set.stderr).toBe(0);
  expect(statSync(policyPath(ledgerDir)).mode & 0o777).toBe(0o600);
  expect((await inProcess('policy', 'show')).stdout).toContain('2 approvals of Alice, Bob; approvals expire after 7d');

  // a plain run, and a plan with one approval and a flag asking for fewer: refused before any
  // initiate, with the policy's words (a plan with none: approvals.e2e.test.ts)
  const plain = await cli('run', 'payroll.csv', '--yes');
  expect(plain.code).toBe(3);
  expect(plain.stderr).toContain("refused: this account's approval policy needs 2 approvals of Alice, Bob");
  const planned = await inProcess('plan', join(dir, 'payroll.csv'), '--out', join(dir, 'payroll.plan.json'), '--prepared-by', 'Dan');
  expect(planned.code, planned.stderr).toBe(0);
  await approve('Alice', alice);
  const fewer = await cli('run', '--plan', 'payroll.plan.json', '--yes', '--require-approvals', '1', '--approvers', 'approvers.json');
  expect(fewer.code).toBe(3);
  expect(fewer.stderr).toContain('1 valid approval of 2 required (Alice)');
  expect(initiates(sb)).toHaveLength(0);

  await approve('Bob', bob);
  const approved = await cli('run', '--plan', 'payroll.plan.json', '--yes');
  expect(approved.code, approved.stderr).toBe(0);
  expect(approved.stdout).toContain("Approvals under this account's policy: 2 valid approvals of 2 required (Alice, Bob).");
  expect(initiates(sb)).toHaveLength(3);
  // retry carries no plan: paying a failed row again needs the policy's approvals too
  const [first] = (await readResults(join(dir, 'payroll.results.csv'))).rows;
  await setStatus(sb, first!.result.payoutId!, 'FAILED');
  expect((await inProcess('status', join(dir, 'payroll.results.csv'))).code).toBe(1);
  const retry = await cli('retry', 'payroll.results.csv', '--resend-failed', '--yes');
  expect(retry.code, retry.stderr).toBe(3);
  expect(retry.stderr).toContain("this account's approval policy needs 2 approvals of Alice, Bob");
  expect(initiates(sb)).toHaveLength(3);

  // above an amount only: a small batch goes without approvals; the change is logged with the one before
  const above = await inProcess('policy', 'set', '--require-approvals', '2', '--approvers', 'approvers.json', '--above', 'USD:100000');
  expect(above.code, above.stderr).toBe(0);
  const small = await cli('run', 'small.csv', '--yes');
  expect(small.code, small.stderr).toBe(0);
  expect(initiates(sb)).toHaveLength(5);
  const large = await cli('run', 'large.csv', '--yes');
  expect(large.code).toBe(3);
  expect(large.stderr).toContain(
    "this account's approval policy needs 2 approvals of Alice, Bob for a batch sending more than USD 100,000.00",
  );
  expect(initiates(sb)).toHaveLength(5);
  const log = readFileSync(join(ledgerDir, 'policy.log.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(log).toHaveLength(2);
  expect(log[1]).toMatchObject({ previous: log[0].policy });
  expect(log[1].policy).toContain('for a batch sending more than USD 100,000.00');

  // a policy file others could have written is not trusted: nothing is sent
  chmodSync(policyPath(ledgerDir), 0o666);
  const unsafe = await cli('run', 'small.csv', '--yes');
  expect(unsafe.code).toBe(3);
  expect(unsafe.stderr).toContain('writable by others');
  expect(initiates(sb)).toHaveLength(5);
});

it('a watch folder against an account with a policy runs no file the policy has not approved', async () => {
  const dir = await dirs.make();
  const alice = newKeyPair();
  writeFileSync(join(dir, 'approvers.json'), JSON.stringify([{ name: 'Alice', publicKey: alice.publicKey }]));
  writeFileSync(join(dir, 'payout-batch.json'), JSON.stringify({ environment: 'sandbox', baseUrl: sb.url, settleSeconds: 0 }));
  mkdirSync(join(dir, 'inbox'));
  const env = cleanEnv({});
  // the watch's ledger is DIR/.state: the policy is set there, for the account the watch sends to
  const set = await runMain(
    ['policy', 'set', '--require-approvals', '1', '--approvers', 'approvers.json', '--base-url', sb.url, '--state-dir', '.state'],
    { cwd: dir, env },
  );
  expect(set.code, set.stderr).toBe(0);
  await writeBatch(join(dir, 'inbox'), 'payroll.csv', { rows: 2, currencies: ['USD'] });
  writeFileSync(join(dir, 'inbox', 'payroll.csv.ready'), '');
  const sent = initiates(sb).length;
  const w = await runCli(['watch', dir, '--once'], { cwd: dir, env });
  expect(w.stdout + w.stderr).toContain("this account's approval policy needs 1 approval of Alice");
  expect(readdirSync(join(dir, 'failed'))).toHaveLength(1);
  expect(initiates(sb)).toHaveLength(sent);
});

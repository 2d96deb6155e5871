// An account's approval policy over the real CLI and a sandbox over HTTP: once `policy set`, a run
// against the account needs the approvals without any flag saying so, refused runs make not one
// initiate, `--above` lets small batches go, and every change is logged in the ledger.
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { newKeyPair } from '../../src/approvals/keys.ts';
import { policyPath } from '../../src/approvals/account-policy.ts';
import { accountOf, ledgerDirFor } from '../../src/engine/ledger.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/index.ts';
import { readResults } from '../../src/results/read.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { setStatus } from '../ops/helpers.ts';
import { cleanEnv, cliIn, initiates, runCli, tempDirs, writeBatch } from '../engine/helpers.ts';

const dirs = tempDirs('pb-policy-');
let sb: LocalSandbox | undefined;
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

it('a policy set once is needed by every run against the account, and no flag turns it off', async () => {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
  const dir = await dirs.make();
  const { cli, state } = cliIn(dir, sb.url);
  await writeBatch(dir, 'payroll.csv', { rows: 3, currencies: ['USD'] });
  await writeBatch(dir, 'small.csv', { rows: 2, currencies: ['USD'], prefix: 'SMALL' });
  await writeBatch(dir, 'large.csv', { rows: 2, currencies: ['USD'], prefix: 'LARGE', amount: () => '60000.00' });
  const [alice, bob] = [newKeyPair(), newKeyPair()];
  writeFileSync(join(dir, 'alice.pem'), alice.privatePem, { mode: 0o600 });
  writeFileSync(join(dir, 'bob.pem'), bob.privatePem, { mode: 0o600 });
  writeFileSync(
    join(dir, 'approvers.json'),
    JSON.stringify([
      { name: 'Alice', publicKey: alice.publicKey },
      { name: 'Bob', publicKey: bob.publicKey },
    ]),
  );
  const ledgerDir = ledgerDirFor(state, accountOf(sb.url));
  const approve = (name: string) =>
    runCli(['approve', 'payroll.plan.json', '--as', name, '--key-file', `${name.toLowerCase()}.pem`, '--yes'], {
      cwd: dir,
      env: cleanEnv({}),
    });

  expect((await cli('policy', 'show')).stdout).toContain('no approval policy');
  const set = await cli('policy', 'set', '--require-approvals', '2', '--approvers', 'approvers.json', '--approvals-expire-after', '7d');
  expect(set.code, set.stderr).toBe(0);
  expect(statSync(policyPath(ledgerDir)).mode & 0o777).toBe(0o600);
  expect((await cli('policy', 'show')).stdout).toContain('2 approvals of Alice, Bob; approvals expire after 7d');

  // a plain run, and a plan without approvals: refused before any initiate, with the policy's words
  const plain = await cli('run', 'payroll.csv', '--yes');
  expect(plain.code).toBe(3);
  expect(plain.stderr).toContain("refused: this account's approval policy needs 2 approvals of Alice, Bob");
  const planned = await cli('plan', 'payroll.csv', '--out', 'payroll.plan.json', '--prepared-by', 'Dan');
  expect(planned.code, planned.stderr).toBe(0);
  const unapproved = await cli('run', '--plan', 'payroll.plan.json', '--yes');
  expect(unapproved.code).toBe(3);
  expect(unapproved.stderr).toContain('0 valid approvals of 2 required: no approvals. Nothing was sent.');
  expect((await approve('Alice')).code).toBe(0);
  // a flag asking for fewer does not loosen it
  const fewer = await cli('run', '--plan', 'payroll.plan.json', '--yes', '--require-approvals', '1', '--approvers', 'approvers.json');
  expect(fewer.code).toBe(3);
  expect(fewer.stderr).toContain('1 valid approval of 2 required (Alice)');
  expect(initiates(sb)).toHaveLength(0);

  expect((await approve('Bob')).code).toBe(0);
  const approved = await cli('run', '--plan', 'payroll.plan.json', '--yes');
  expect(approved.code, approved.stderr).toBe(0);
  expect(approved.stdout).toContain("Approvals under this account's policy: 2 valid approvals of 2 required (Alice, Bob).");
  expect(initiates(sb)).toHaveLength(3);
  // retry carries no plan: paying a failed row again needs the policy's approvals too
  const [first] = (await readResults(join(dir, 'payroll.results.csv'))).rows;
  await setStatus(sb, first!.result.payoutId!, 'FAILED');
  expect((await cli('status', 'payroll.results.csv')).code).toBe(1);
  const retry = await cli('retry', 'payroll.results.csv', '--resend-failed', '--yes');
  expect(retry.code, retry.stderr).toBe(3);
  expect(retry.stderr).toContain("this account's approval policy needs 2 approvals of Alice, Bob");
  expect(initiates(sb)).toHaveLength(3);

  // above an amount only: a small batch goes without approvals; the change is logged with the one before
  const above = await cli('policy', 'set', '--require-approvals', '2', '--approvers', 'approvers.json', '--above', 'USD:100000');
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
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
  const dir = await dirs.make();
  const alice = newKeyPair();
  writeFileSync(join(dir, 'approvers.json'), JSON.stringify([{ name: 'Alice', publicKey: alice.publicKey }]));
  writeFileSync(join(dir, 'payout-batch.json'), JSON.stringify({ environment: 'sandbox', baseUrl: sb.url, settleSeconds: 0 }));
  mkdirSync(join(dir, 'inbox'));
  const env = cleanEnv({});
  // the watch's ledger is DIR/.state: the policy is set there, for the account the watch sends to
  const set = await runCli(
    ['policy', 'set', '--require-approvals', '1', '--approvers', 'approvers.json', '--base-url', sb.url, '--state-dir', '.state'],
    { cwd: dir, env },
  );
  expect(set.code, set.stderr).toBe(0);
  await writeBatch(join(dir, 'inbox'), 'payroll.csv', { rows: 2, currencies: ['USD'] });
  writeFileSync(join(dir, 'inbox', 'payroll.csv.ready'), '');
  const w = await runCli(['watch', dir, '--once'], { cwd: dir, env });
  expect(w.stdout + w.stderr).toContain("this account's approval policy needs 1 approval of Alice");
  expect(readdirSync(join(dir, 'failed'))).toHaveLength(1);
  expect(initiates(sb)).toHaveLength(0);
});

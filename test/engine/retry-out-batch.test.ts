// `retry --out` naming the batch file, or the results file it reads, is refused before anything is sent, as `run
// --results` is. A `--resend-failed` that finds no failed row says how to learn which are.
import { readFileSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, cleanEnv, connectionTo, paidBatch, setStatus, startSb } from '../ops/helpers.ts';
import { runMain } from './helpers.ts';

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

it('retry --resend-failed --out BATCH_FILE: refused (exit 2), nothing sent, the batch file as it was', async () => {
  sb = await startSb();
  const { dir, file, results, ids } = await paidBatch(sb, { rows: 2 });
  await setStatus(sb, ids[0]!, 'FAILED');
  await refreshStatus({ client: connectionTo(sb).client, resultsFile: results });
  const before = readFileSync(file, 'utf8');
  const r = await runMain(['retry', results, '--resend-failed', '--out', file, '--base-url', sb.url, '--yes'], {
    cwd: dir,
    env: cleanEnv(),
  });
  expect(r.code, r.stdout).toBe(2);
  expect(r.stderr).toContain(`--out ${file}: that is the batch file; name another results file`);
  expect(readFileSync(file, 'utf8')).toBe(before);
  expect(await allPayouts(sb)).toHaveLength(2);
});

it('retry --out RESULTS (the file it reads): refused naming --out and the results file, not "--results … the batch file"', async () => {
  sb = await startSb();
  const { dir, results, ids } = await paidBatch(sb, { rows: 2 });
  await setStatus(sb, ids[0]!, 'FAILED');
  await refreshStatus({ client: connectionTo(sb).client, resultsFile: results });
  const r = await runMain(['retry', results, '--resend-failed', '--out', results, '--base-url', sb.url, '--yes'], {
    cwd: dir,
    env: cleanEnv(),
  });
  expect(r.code, r.stdout).toBe(2);
  expect(r.stderr).toContain(`--out ${results}: that is the results file this retry reads`);
  expect(r.stderr).not.toContain('--results');
  expect(await allPayouts(sb)).toHaveLength(2);
});

it('retry --resend-failed before any status refresh: says no row is known failed and how to learn it, sends nothing', async () => {
  sb = await startSb();
  const { dir, results, ids } = await paidBatch(sb, { rows: 2 });
  await setStatus(sb, ids[0]!, 'FAILED'); // (the service knows; neither the journal nor the results file does yet)
  const r = await runMain(['retry', results, '--resend-failed', '--base-url', sb.url, '--yes'], { cwd: dir, env: cleanEnv() });
  expect(r.stdout).toContain('Sent again after a failed, refunded payout: 0 rows.');
  expect(r.stdout).toContain(`no row of ${results} is known FAILED or REJECTED yet: run payout-batch status ${results} first`);
  expect(await allPayouts(sb)).toHaveLength(2);
});

// A `retry --resend-failed` that dies after journalling a row's `resend` (its failed payout refunded and the row
// reopened), before or after its new attempt's `initiating`: the next retry finishes that resend, once, and says
// so; with --resend-failed or without (the person asked for it in the command that died; an initiate may be out).
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { readResults } from '../../src/results/read.ts';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, cleanEnv, connectionTo, ledgerJournals, paidBatch, setStatus, startSb, unattended } from '../ops/helpers.ts';
import { runMain, retryResults } from './helpers.ts';

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

/** An initiate that never reaches the service (the process died before it left). */
const noInitiates: typeof fetch = async (input, init) =>
  String(input instanceof Request ? input.url : input).endsWith('/initiate')
    ? Promise.reject(new TypeError('fetch failed'))
    : fetch(input, init);

/**
 * Two paid rows, the first FAILED and refunded at the service; a `retry --resend-failed` whose journal is cut back to
 * its `resend` line (`at`: 'resend') or the new attempt's `initiating` after it, its retry-N gone: it was killed there.
 */
async function killedResend(at: 'resend' | 'initiating') {
  sb = await startSb();
  const { dir, file, results, ids } = await paidBatch(sb, { rows: 2 });
  await setStatus(sb, ids[0]!, 'FAILED');
  await refreshStatus({ client: connectionTo(sb).client, resultsFile: results });
  const o = { ...unattended({ settleDelayMs: 1 }), resultsFile: results, here: dir, resendFailed: true };
  expect((await retryResults({ ...o, conn: connectionTo(sb, noInitiates) })).resent).toBe(1);
  const journal = ledgerJournals()[0]!;
  const lines = readFileSync(journal, 'utf8').split('\n').filter(Boolean);
  const resend = lines.findIndex((l) => JSON.parse(l).t === 'resend');
  const cut = at === 'resend' ? resend : lines.findIndex((l, i) => i > resend && JSON.parse(l).t === 'initiating');
  writeFileSync(journal, lines.slice(0, cut + 1).join('\n') + '\n');
  for (const f of readdirSync(dir)) if (f.includes('.retry-')) rmSync(join(dir, f));
  return { dir, file, results, failed: ids[0]!, o };
}

describe('retry after a killed retry --resend-failed', () => {
  for (const at of ['resend', 'initiating'] as const)
    it(`killed after its ${at} line: retry --resend-failed pays the row once and counts it as sent again`, async () => {
      const { o, failed } = await killedResend(at);
      const r = await retryResults({ ...o, conn: connectionTo(sb!) });
      expect(r.resent).toBe(1);
      expect(r.report).toMatchObject(at === 'resend' ? { rejected: 0, resending: 1 } : { toSettle: 1 });
      const row = (await readResults(r.resultsPath)).rows[0]!;
      expect(row.result).toMatchObject({ status: 'PENDING', earlierPayouts: expect.stringContaining(failed) });
      expect(await allPayouts(sb!)).toHaveLength(3);
    });

  it('a plain retry finishes the resend the killed one began, and says so in its resume line, plan and summary', async () => {
    const { dir, results } = await killedResend('resend');
    const r = await runMain(['retry', results, '--base-url', sb!.url, '--yes'], { cwd: dir, env: cleanEnv() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('refused by the service before');
    expect(r.stdout).toContain('1 reopened by a retry --resend-failed (failed, refunded), not sent again yet');
    expect(r.stdout).toMatch(/sent again +1 row whose payout failed and was refunded/);
    expect(r.stdout).toContain('Sent again after a failed, refunded payout: 1 row, finishing what a retry --resend-failed began.');
    expect(await allPayouts(sb!)).toHaveLength(3);
  });

  it('a run of the batch file meanwhile leaves the row as it is, and its results do not say it was sent again', async () => {
    const { file } = await killedResend('resend');
    const r = await runBatch({ file, conn: connectionTo(sb!), ...unattended({ settleDelayMs: 1 }) });
    const row = (await readResults(r.resultsPath)).rows[0]!.result;
    expect(row).toMatchObject({ status: 'FAILED_TO_SEND', errorCode: 'PAYOUT_FAILED' });
    expect(row.errorMessage).toMatch(/not sent again yet: payout-batch retry RESULTS sends it under attempt 2/);
    expect(await allPayouts(sb!)).toHaveLength(2);
  });
});

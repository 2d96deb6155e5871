// `reconcile --since` after the batch (a later month, the refund of a payout of this batch in it):
// the period narrows the debits that must be explained, never the batch's own movements, which
// the listing still reads however far back they are.

import { describe, expect, it } from 'vitest';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import { reconcile } from '../../src/follow-up/reconciliation.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { connectionTo, paidBatch, setStatus, startSb, unattended } from './helpers.ts';
import { retryResults } from '../engine/helpers.ts';

const post = async (sb: LocalSandbox, path: string, body: unknown) => {
  const r = await fetch(`${sb.url}/_sandbox/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(r.status, await r.text()).toBe(200);
};

describe('reconcile --since after the batch', () => {
  it("still finds the batch's own debits, past a full page of transactions older than the period", async () => {
    const sb = await startSb();
    try {
      // 101 debits: a full page (100, newest first) and one more
      const b = await paidBatch(sb, { rows: 101 });
      await post(sb, 'clock/advance', { ms: 86_400_000 });
      const since = new Date(Date.now() + 86_400_000 - 3_600_000).toISOString();
      const rc = await reconcile({ client: connectionTo(sb).client, resultsFile: b.results, since });
      expect(rc.report?.problems).toEqual([]);
      expect(rc.report?.counts).toMatchObject({ created: 101, tiedOut: 101 });
      expect(rc.kind).toBe('ok');
    } finally {
      await sb.close();
    }
  }, 60_000);
});

describe('reconcile of a row sent again', () => {
  it("finds the replaced payout's debit and refund, past a full page of transactions made before the resend", async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 1 });
      const conn = connectionTo(sb);
      await setStatus(sb, b.ids[0]!, 'FAILED', { reason: 'bank closed the account' });
      expect((await refreshStatus({ client: conn.client, resultsFile: b.results })).refundsFound).toHaveLength(1);
      // a busy account: a page of movements between the failure and the resend, days later
      const walletId = (await conn.client.listWallets()).data.find((w) => w.currency === 'GBP')!.walletId;
      for (let i = 0; i < 100; i++) await post(sb, `wallets/${walletId}/credit`, { amount: 1, reference: `TOPUP-${i}` });
      await post(sb, 'clock/advance', { ms: 3 * 86_400_000 });
      const retry = await retryResults({
        ...unattended({ settleDelayMs: 10 }),
        resultsFile: b.results,
        conn,
        resendFailed: true,
      });
      expect(retry.resent).toBe(1);

      const rc = await reconcile({ client: conn.client, resultsFile: retry.resultsPath });
      expect(rc.report?.problems).toEqual([]);
      expect(rc.report?.rows[0]!.earlier).toEqual([expect.objectContaining({ payoutId: b.ids[0], net: '0.00', ok: true })]);
    } finally {
      await sb.close();
    }
  }, 60_000);
});

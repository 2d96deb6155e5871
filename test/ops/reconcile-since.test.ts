// `reconcile --since` after the batch (a later month, the refund of a payout of this batch in it):
// the period narrows the debits that must be explained, never the batch's own movements, which
// the listing still reads however far back they are.
import { describe, expect, it } from 'vitest';
import { reconcile } from '../../src/follow-up/reconciliation.ts';
import { connectionTo, paidBatch, startSb } from './helpers.ts';

describe('reconcile --since after the batch', () => {
  it("still finds the batch's own debits, past a full page of transactions older than the period", async () => {
    const sb = await startSb();
    try {
      // 101 debits: a full page (100, newest first) and one more
      const b = await paidBatch(sb, { rows: 101 });
      const r = await fetch(`${sb.url}/_sandbox/clock/advance`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ms: 86_400_000 }),
      });
      expect(r.status).toBe(200);
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

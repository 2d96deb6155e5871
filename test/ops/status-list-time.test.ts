// A status the payout list brings carries the list item's time, or none: spec §2's list items hold no
// updatedAt, and the row never shows its new status with the time of the status before it.
import { describe, expect, it } from 'vitest';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import { readResults } from '../../src/results/results.ts';
import { connectionTo, paidBatch, setStatus, startSb } from './helpers.ts';

/** The service's fetch, its payout list items given `updatedAt` (a service saying more than §2). */
const listItemsAt =
  (updatedAt: string): typeof fetch =>
  async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const res = await fetch(url, init);
    if (!/\/payouts$/.test(url.pathname)) return res;
    const body = (await res.json()) as { data: Record<string, unknown>[] };
    body.data = body.data.map((p) => ({ ...p, updatedAt }));
    return new Response(JSON.stringify(body), { status: res.status, headers: res.headers });
  };

describe('status moved by the payout list', () => {
  it('leaves updatedAt empty where the list item gives none, never the previous status’s time', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 1 });
      const before = (await readResults(b.results)).rows[0]!.result;
      expect(before).toMatchObject({ status: 'PENDING', updatedAt: expect.any(String) });
      await setStatus(sb, b.ids[0]!, 'PROCESSING');

      const r = await refreshStatus({ client: connectionTo(sb).client, resultsFile: b.results });
      expect(r.requests.getPayout).toBe(0); // (the list answered)
      const after = (await readResults(b.results)).rows[0]!.result;
      expect(after.status).toBe('PROCESSING');
      expect(after.updatedAt).toBeUndefined();
    } finally {
      await sb.close();
    }
  });

  it('takes the list item’s updatedAt where it gives one', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 1 });
      await setStatus(sb, b.ids[0]!, 'PROCESSING');
      const at = '2031-02-03T04:05:06.000Z';

      await refreshStatus({ client: connectionTo(sb, listItemsAt(at)).client, resultsFile: b.results });
      expect((await readResults(b.results)).rows[0]!.result).toMatchObject({ status: 'PROCESSING', updatedAt: at });
    } finally {
      await sb.close();
    }
  });
});

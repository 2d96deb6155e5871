// A payout the journal already knows is under review (listen recorded it with no results file to
// write, or attach wrote another copy): `status` brings the row there from the ledger and needs no
// get-payout for it (spec §2: a list item carries no statusDetail; the ledger does).
import { describe, expect, it } from 'vitest';
import { applyStatus } from '../../src/follow-up/apply-status.ts';
import { refreshStatus, updateOf } from '../../src/follow-up/refresh-status.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import { readResults } from '../../src/results/results.ts';
import { connectionTo, paidBatch, setStatus, startSb } from './helpers.ts';

describe('status of a row waiting for us that the journal knows is under review', () => {
  it('takes the ledger’s state, with no get-payout', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 1 });
      const conn = connectionTo(sb);
      const o = { client: conn.client, resultsFile: b.results, ledgers: [ledgerOf(conn)] };
      await setStatus(sb, b.ids[0]!, 'ADDITIONAL_INFO_REQUIRED', { informationRequests: [{ title: 'Invoice', type: 'FILE' }] });
      await refreshStatus(o);
      expect((await readResults(b.results)).rows[0]!.result.status).toBe('ADDITIONAL_INFO_REQUIRED');
      await setStatus(sb, b.ids[0]!, 'PENDING', { statusDetail: 'ADDITIONAL_INFO_UNDER_REVIEW' });
      const now = await conn.client.getPayout(b.ids[0]!);
      expect(now.statusDetail).toBe('ADDITIONAL_INFO_UNDER_REVIEW');
      await applyStatus([], [updateOf(now)], { ledgers: o.ledgers }); // (to the journal only)

      const r = await refreshStatus(o);
      expect((await readResults(b.results)).rows[0]!.result).toMatchObject({
        status: 'PENDING',
        statusDetail: 'ADDITIONAL_INFO_UNDER_REVIEW',
      });
      expect(r.requests.getPayout).toBe(0);
    } finally {
      await sb.close();
    }
  });
});

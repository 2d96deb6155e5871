// A batch some of whose rows another batch of the account had already paid (ALREADY_PAID, with that
// batch's payout): their payouts and money stay the other batch's, in `status` as in the run.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { readResults } from '../../src/results/results.ts';
import { connectionTo, paidBatch, startSb, unattended, writeBatch } from './helpers.ts';

/** GEN-0001 and GEN-0002 paid by a first batch; then a file of GEN-0001..3 run from another state folder. */
async function paidAgain(sb: LocalSandbox) {
  const first = await paidBatch(sb, { rows: 2 });
  const conn = connectionTo(sb);
  const file = await writeBatch(first.dir, 'again.csv', { rows: 3, currencies: ['GBP'] });
  // (the service answers the same references' keys with the first batch's payouts)
  const stateDir = join(first.dir, 'other-state');
  const again = await runBatch({ file, conn, stateDir, ...unattended({ settleDelayMs: 10 }) });
  const statuses = async () => (await readResults(again.resultsPath)).rows.map((r) => r.result.status);
  expect(await statuses()).toEqual(['ALREADY_PAID', 'ALREADY_PAID', 'PENDING']);
  // `status again.results.csv --state-dir other-state`: that folder's ledger and the default one
  const o = { client: conn.client, resultsFile: again.resultsPath, ledgers: [ledgerOf(conn, { root: stateDir }), ledgerOf(conn)] };
  return { o, statuses };
}

describe('a batch with rows another batch paid', () => {
  it("status keeps them ALREADY_PAID and counts this batch's money only", async () => {
    const sb = await startSb();
    try {
      const { o, statuses } = await paidAgain(sb);
      const status = await refreshStatus(o);
      expect(await statuses()).toEqual(['ALREADY_PAID', 'ALREADY_PAID', 'PENDING']);
      expect(status.money).toEqual({ GBP: { payouts: 1, debited: '14.02', refunded: '0.00', net: '14.02' } });
    } finally {
      await sb.close();
    }
  });
});

// A batch with an invalid row funded by a swap that this ledger did not journal (another ledger of
// the account made it): reconcile names the swap by the rows that could be paid, as the run did, so
// the swap it finds is the one sent and both its legs tie out.
import { readFile, writeFile } from 'node:fs/promises';
import { expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { swapReference } from '../../src/engine/swap.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import { reconcile } from '../../src/follow-up/reconciliation.ts';
import { connectionTo, eurToGbpSwap, startSb, unattended, workDir, writeBatch } from './helpers.ts';

it("ties out the swap of a batch with an invalid row by the valid rows' references", async () => {
  const sb = await startSb();
  try {
    const conn = connectionTo(sb);
    const file = await writeBatch(await workDir('pb-ops-'), 'batch.csv', { rows: 3, currencies: ['GBP'] });
    // row 4 (GEN-0003): an amount that is no number, so the run never counts it among the GBP payments
    const csv = (await readFile(file, 'utf8')).split('\n');
    csv[3] = csv[3]!.replace(/,12\.02,/, ',twelve,');
    await writeFile(file, csv.join('\n'));
    const run = await runBatch({ file, conn, ...unattended({ settleDelayMs: 10 }) });
    expect(run.summary.byStatus).toEqual({ PENDING: 2, INVALID: 1 });
    const reference = swapReference(['GEN-0001', 'GEN-0002'], 'GBP');
    await conn.client.swap(JSON.stringify(await eurToGbpSwap(conn.client, reference)), { idempotencyKey: 'swap-other-ledger' });

    const rc = await reconcile({ client: conn.client, resultsFile: run.resultsPath, ledgers: [ledgerOf(conn)] });
    expect(rc.report?.swaps).toMatchObject([{ reference, debit: '-1000.00', credit: '851.80', ok: true }]);
  } finally {
    await sb.close();
  }
});

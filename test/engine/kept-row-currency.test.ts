// A created row a retry keeps as it is (retry --resend-failed of a failed, refunded row whose cells are no longer valid)
// counts in its payout's currency in the run's money totals, never under an empty currency.
import { afterEach, expect, it } from 'vitest';
import { keptOutcome } from '../../src/engine/pipeline.ts';
import { summarise } from '../../src/engine/outcome.ts';
import { readResults } from '../../src/results/read.ts';
import { writeResults } from '../../src/results/write.ts';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { connectionTo, paidBatch, setStatus, startSb, unattended } from '../ops/helpers.ts';
import { retryResults } from './helpers.ts';

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

it('retry --resend-failed of a refunded row edited into an invalid one: not sent, its payout in the GBP totals', async () => {
  sb = await startSb();
  const { dir, results, ids } = await paidBatch(sb, { rows: 2 });
  await setStatus(sb, ids[0]!, 'FAILED');
  await refreshStatus({ client: connectionTo(sb).client, resultsFile: results });
  const table = await readResults(results);
  table.rows[0]!.cells.sourceAmount = 'twelve';
  await writeResults(results, table);
  const r = await retryResults({
    ...unattended({ settleDelayMs: 1 }),
    conn: connectionTo(sb),
    resultsFile: results,
    here: dir,
    resendFailed: true,
  });
  expect(r.notResent.map((n) => n.payoutId)).toEqual([ids[0]]);
  expect(Object.keys(r.summary.money)).toEqual(['GBP']);
  expect(r.summary.money.GBP?.payouts).toBe(2);
});

it("a kept row's earlier payouts (its earlierPayouts cell) count in the money totals too", () => {
  const earlier = [{ payoutId: 'p1', status: 'FAILED', currency: 'GBP', amount: '10.00', fee: '2.00', refunded: '12.00' }];
  const kept = keptOutcome(
    { status: 'FAILED', payoutId: 'p2', totalDeductible: '12.00', fee: '2.00', refunded: '12.00', earlierPayouts: JSON.stringify(earlier) },
    'GBP',
  );
  expect(summarise([kept]).money.GBP).toMatchObject({ payouts: 2, debited: '24.00', refunded: '24.00', net: '0.00' });
});

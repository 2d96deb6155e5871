// A paid row copied in the results file (as it is, or edited) names one payout twice. reconcile ties
// that payout out once, on the row naming it first, and says the other row is a copy, as status
// does: never "no debit for this payout" on a row that was paid, nor a total expecting it twice.
import { afterEach, expect, it } from 'vitest';
import { reconcile } from '../../src/follow-up/reconciliation.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { tempDirs } from '../engine/helpers.ts';
import { connectionTo, copyFirstRow, paidBatch, startSb } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-reconcile-copied-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

it.each([
  ['as it is, below it', undefined, 'below'],
  ['its amount made 0, above it', '0', 'above'],
] as const)('a paid row copied %s: its payout tied out once, the copy named', async (_, amount, where) => {
  sb = await startSb();
  const conn = connectionTo(sb);
  const run = await paidBatch(sb, { dir: await dirs.make(), rows: 2, prefix: 'RK' });
  const paid = run.ids[0];
  await copyFirstRow(run.results, where, amount ? { sourceAmount: amount } : {});

  const report = (await reconcile({ client: conn.client, resultsFile: run.results, ledgers: [ledgerOf(conn)] })).report!;
  const [first, second] = where === 'below' ? [2, 4] : [2, 3];
  expect(report.problems).toEqual([`row ${second} RK-0001: payout ${paid} is row ${first}'s too: counted once`]);
  const gbp = report.totals.find((t) => t.currency === 'GBP')!;
  expect([gbp.ok, gbp.net, gbp.expectedNet]).toEqual([true, gbp.expectedNet, gbp.expectedNet]);
  expect(report.rows.filter((r) => r.created).map((r) => r.rowNumber)).toEqual(where === 'below' ? [2, 3] : [2, 4]);
});

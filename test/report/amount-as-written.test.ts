// The results report shows a row's amount and its group's sum exactly: an amount with more decimals
// than its currency has (an invalid row, "10.005" USD, "1500.5" JPY) is never shown rounded.
import { expect, it } from 'vitest';
import { resultsViewOf } from '../../src/report/model.ts';
import type { ResultsTable } from '../../src/results/results.ts';

it('shows amounts with more decimals than the currency has as they are, padded but never rounded', async () => {
  const row = (n: number, amount: string, currency: string) => ({
    rowNumber: n,
    cells: { reference: `R-${n}`, sourceAmount: amount, sourceCurrency: currency },
    result: { status: 'INVALID', errorCode: 'AMOUNT_PRECISION' },
  });
  const t: ResultsTable = {
    format: 'csv',
    inputColumns: ['reference', 'sourceAmount', 'sourceCurrency'],
    rows: [row(2, '10.005', 'USD'), row(3, '1500.5', 'JPY'), row(4, '7', 'USD')],
  };
  const view = await resultsViewOf(t, 'b.results.csv');
  expect(view.rows.map((r) => r.amount)).toEqual(['10.005', '1500.5', '7.00']);
  expect(view.groups.map((g) => [g.currency, g.amount])).toEqual([
    ['JPY', '1500.5'],
    ['USD', '17.005'],
  ]);
  expect(view.action.map((a) => a.amount)).toEqual(['10.005', '1500.5', '7.00']);
});

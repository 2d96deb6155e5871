// The results report's "Total deducted" per status group counts what the batch's payouts debited, as
// `status` and the run's summary do: never a quote of a row that was not sent, nor the payout of
// another batch that an ALREADY_PAID row names.
import { describe, expect, it } from 'vitest';
import { resultsViewOf } from '../../src/report/model.ts';
import type { ResultsTable } from '../../src/results/results.ts';

const row = (n: number, amount: string, result: ResultsTable['rows'][number]['result']) => ({
  rowNumber: n,
  cells: { reference: `R-${n}`, sourceAmount: amount, sourceCurrency: 'EUR' },
  result,
});

describe('the results report per status group', () => {
  it('counts in "Total deducted" only the payouts this batch created', async () => {
    const t: ResultsTable = {
      format: 'csv',
      inputColumns: ['reference', 'sourceAmount', 'sourceCurrency'],
      rows: [
        row(2, '10.00', { status: 'SUCCESSFUL', payoutId: 'p2', fee: '0.50', totalDeductible: '10.50' }),
        // refused by the service: its quote's total was never debited
        row(3, '20.00', { status: 'FAILED_TO_SEND', errorCode: 'INSUFFICIENT_FUNDS', fee: '1.00', totalDeductible: '21.00' }),
        // left out of the run after its plan quoted it
        row(4, '30.00', { status: 'NOT_SENT', fee: '1.00', totalDeductible: '31.00' }),
        // another batch's payout, paid before: not this batch's debit
        row(5, '40.00', { status: 'ALREADY_PAID', payoutId: 'p-old', fee: '1.00', totalDeductible: '41.00', refunded: '41.00' }),
      ],
    };
    const view = await resultsViewOf(t, 'b.results.csv');
    expect(view.groups).toEqual([
      { group: 'paid', currency: 'EUR', rows: 1, amount: '10.00', total: '10.50' },
      { group: 'notSent', currency: 'EUR', rows: 3, amount: '90.00' },
    ]);
  });
});

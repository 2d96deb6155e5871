// The one model of outcomes and money (src/engine/outcome.ts, src/engine/money-totals.ts): one
// grouping of statuses for the summary, `status` and the report; the earlierPayouts cell written
// and read back in one place; an amount that cannot be read said, never counted as 0.
import { describe, expect, it } from 'vitest';
import { earlierPayoutsCell, moneyEntryOfEarlier, moneyTotals, parseEarlierPayouts, readAmount } from '../../src/engine/money-totals.ts';
import { outcomeCounts, statusGroup, summarise, type RowOutcome } from '../../src/engine/outcome.ts';
import type { PayoutSnapshot } from '../../src/journal/lines.ts';
import { resultsViewOf } from '../../src/report/model.ts';

const failed: PayoutSnapshot = {
  id: 'p1',
  payoutRef: 'PO-1',
  status: 'FAILED',
  sourceAmount: 100.1,
  sourceCurrency: 'usd',
  transactionFees: '1.5',
  destinationCurrency: 'NGN',
  documents: 0,
  refunded: '101.60',
};

describe('status groups', () => {
  it('one grouping: in progress in the summary and in the report alike', async () => {
    expect(['SUCCESSFUL', 'PENDING', 'PROCESSING', 'ADDITIONAL_INFO_REQUIRED', 'FAILED', 'REJECTED'].map(statusGroup)).toEqual([
      'paid',
      'inProgress',
      'inProgress',
      'waiting',
      'failed',
      'failed',
    ]);
    expect(['INVALID', 'NOT_SENT', 'FAILED_TO_SEND', 'CONFLICT'].map(statusGroup)).toEqual(['notSent', 'notSent', 'notSent', 'notSent']);
    expect([undefined, 'UNKNOWN_OUTCOME', 'SOMETHING'].map(statusGroup)).toEqual(['unknown', 'unknown', 'unknown']);

    const statuses = ['PROCESSING', 'PENDING', 'INVALID', 'UNKNOWN_OUTCOME'];
    expect(outcomeCounts(statuses)).toEqual({ paid: 0, inProgress: 2, waiting: 0, failed: 0, notCreated: 2 });
    const outcomes: RowOutcome[] = statuses.map((status) => ({ status, documents: [] }));
    expect(summarise(outcomes).outcomes).toEqual(outcomeCounts(statuses));
    const view = await resultsViewOf(
      {
        format: 'csv',
        inputColumns: ['sourceAmount', 'sourceCurrency'],
        rows: statuses.map((status, i) => ({
          rowNumber: i + 2,
          cells: { sourceAmount: '1.00', sourceCurrency: 'EUR' },
          result: { status },
        })),
      },
      'b.results.csv',
    );
    expect(view.groups.map((g) => [g.group, g.rows])).toEqual([
      ['inProgress', 2],
      ['notSent', 1],
      ['unknown', 1],
    ]);
  });
});

describe('the earlierPayouts cell', () => {
  it('reads back what it wrote, exactly, and adds it to the totals', () => {
    const cell = earlierPayoutsCell([failed]);
    const { payouts, problem } = parseEarlierPayouts(cell);
    expect(problem).toBeUndefined();
    expect(payouts).toEqual([
      { payoutId: 'p1', payoutRef: 'PO-1', status: 'FAILED', currency: 'USD', amount: '100.10', fee: '1.50', refunded: '101.60' },
    ]);
    expect(moneyTotals(payouts.map(moneyEntryOfEarlier))).toEqual({
      USD: { payouts: 1, debited: '101.60', refunded: '101.60', net: '0.00' },
    });
  });

  it('a cell that is not ours gives no payouts and says why, never a 0', () => {
    expect(parseEarlierPayouts('')).toEqual({ payouts: [] });
    expect(parseEarlierPayouts('not json').problem).toMatch(/not JSON/);
    expect(parseEarlierPayouts('[{"payoutId":"p1","status":"FAILED","currency":"USD","amount":"ten"}]')).toEqual({
      payouts: [],
      problem: 'the earlierPayouts cell cannot be read (0.amount: not an amount): the payouts it names are not counted',
    });
    expect(parseEarlierPayouts('[{"status":"FAILED","currency":"USD","amount":"1.00"}]').problem).toMatch(/no payoutId or payoutRef/);
  });

  it('reads an amount as a workbook shows it, and nothing else', () => {
    expect(readAmount('1,234.50')?.toFixed()).toBe('1234.5');
    expect(readAmount(' -0.30 ')?.toFixed()).toBe('-0.3');
    for (const bad of ['', 'ten', '1.2.3', '1e3', '--1', '12,00', '1.234,50', '1,2345.00']) expect(readAmount(bad), bad).toBeUndefined();
  });
});

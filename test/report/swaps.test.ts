// The report's Swaps section (issue 28): a plan shows the swap it proposes (read defensively), a
// results report the batch's swaps, from the run, the workbook's Swaps sheet or the tie-out.
import { describe, expect, it } from 'vitest';
import type { SwapProposal } from '../../src/engine/swap.ts';
import { planHtml, resultsHtml } from '../../src/report/html.ts';
import { planViewOfPlan, resultsViewOf } from '../../src/report/model.ts';
import type { ResultsTable, SwapLine } from '../../src/results/results.ts';
import { planFixture } from '../engine/plan-fixture.ts';

const PROPOSAL: SwapProposal = {
  reference: 'PBS-0123456789abcdef01234567-USD',
  currency: 'USD',
  fromCurrency: 'EUR',
  sourceWalletId: 'w-eur',
  destinationWalletId: 'w-usd',
  swapAmount: '9215.00',
  amountToBeSent: '10000.00',
  pair: { baseCurrency: 'USD', quoteCurrency: 'EUR', rate: '0.9215' },
  shortfall: '9800.00',
  margin: '200.00',
  balances: [],
};
const SWAP: SwapLine = {
  currency: 'USD',
  reference: PROPOSAL.reference,
  id: 's-<b>1</b>',
  status: 'SUCCESSFUL',
  sourceAmount: '9215.00',
  sourceCurrency: 'EUR',
  destinationAmount: '10000.00',
  destinationCurrency: 'USD',
  exchangeRate: '1.0851871947',
};
const table = (swaps?: SwapLine[]): ResultsTable => ({
  format: 'xlsx',
  inputColumns: ['reference'],
  rows: [],
  ...(swaps ? { swaps } : {}),
});
const section = (doc: string) => /<table data-section="swaps">.*?<\/table>/s.exec(doc)?.[0];

describe('the Swaps section of the report', () => {
  it('shows the swap a plan proposes, and none when it proposes none', () => {
    const plan = { ...planFixture(), swaps: [PROPOSAL] };
    const doc = planHtml(planViewOfPlan(plan, { environment: 'local' }));
    const s = section(doc)!;
    expect(s).toContain(`<tr data-currency="USD" data-reference="${PROPOSAL.reference}">`);
    expect(s).toContain('<td data-field="status">PROPOSED</td>');
    expect(s).toContain('data-field="sourceAmount" data-value="9215.00" data-currency="EUR">9,215.00 EUR<');
    expect(s).toContain('data-field="destinationAmount" data-value="10000.00" data-currency="USD">10,000.00 USD<');
    expect(s).toContain('<td data-field="exchangeRate">USD/EUR 0.9215</td>');
    expect(section(planHtml(planViewOfPlan(planFixture(), { environment: 'local' })))).toBeUndefined();
  });

  it('shows the batch swaps of a results file, escaped: the run given, else the workbook, else the tie-out legs', async () => {
    const s = section(resultsHtml(await resultsViewOf(table(), 'b.results.xlsx', { swaps: [SWAP] })))!;
    expect(s).toContain('<td data-field="id" class="mono">s-&lt;b&gt;1&lt;/b&gt;</td>');
    expect(s).toContain('<td data-field="status">SUCCESSFUL</td>');
    expect(s).toContain('<td data-field="exchangeRate">1.0851871947</td>');
    expect((await resultsViewOf(table([SWAP]), 'b.results.xlsx')).swaps).toEqual([SWAP]);
    const tieOut = {
      ok: true,
      totals: [],
      problems: [],
      swaps: [
        {
          currency: 'USD',
          reference: SWAP.reference,
          id: 's1',
          status: 'PROCESSING',
          sourceCurrency: 'EUR',
          debit: '-9215.00',
          destinationCurrency: 'USD',
          credit: '10000.00',
          transactionIds: [],
          ok: true,
          problems: [],
        },
      ],
    };
    expect((await resultsViewOf(table(), 'b.results.csv', { tieOut })).swaps).toEqual([
      {
        currency: 'USD',
        reference: SWAP.reference,
        id: 's1',
        status: 'PROCESSING',
        sourceAmount: '9215.00',
        sourceCurrency: 'EUR',
        destinationAmount: '10000.00',
        destinationCurrency: 'USD',
      },
    ]);
    expect(section(resultsHtml(await resultsViewOf(table(), 'b.results.csv')))).toBeUndefined();
  });
});

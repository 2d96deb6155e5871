// The tie-out of a batch's swap (issue 28), pure: hand-made rows, transactions and swaps. The swap
// ties its debit in the source wallet and its credit in the destination wallet (spec §4.7, §6),
// counted apart from the payouts; a leg missing fails naming the swap; another's swap is explained.
import { describe, expect, it } from 'vitest';
import { Dec } from '../../src/money.ts';
import { reconciliationLines } from '../../src/follow-up/reconciliation.ts';
import { tieOut, type ReconRow, type ReconSwap, type ReconTx } from '../../src/follow-up/tie-out.ts';

const REF = 'PBS-0123456789abcdef01234567-USD';
const t = (m: number) => `2026-11-27T10:${String(m).padStart(2, '0')}:00.000Z`;
const row = (n: number, total: string): ReconRow => ({
  rowNumber: n + 1,
  reference: `REF-${n}`,
  status: 'PENDING',
  payoutId: `p${n}`,
  payoutRef: `PO-${n}`,
  currency: 'USD',
  totalDeductible: total,
});
const tx = (id: string, amount: string, currency: string, reference: string, m: number): ReconTx => ({
  id,
  amount: new Dec(amount),
  currency,
  walletId: `w-${currency.toLowerCase()}`,
  reference,
  createdAt: t(m),
});
const SWAP: ReconSwap = {
  currency: 'USD',
  reference: REF,
  swap: {
    id: 's1',
    status: 'PROCESSING',
    sourceAmount: '9215.00',
    sourceCurrency: 'EUR',
    destinationAmount: '10000.00',
    destinationCurrency: 'USD',
    exchangeRate: '1.0851871947',
  },
};
const rows = [row(1, '5000.00'), row(2, '6000.00')];
// newest first: the swap's two legs, then the two payouts
const TXS = [
  tx('t4', '-6000.00', 'USD', 'PO-2', 4),
  tx('t3', '-5000.00', 'USD', 'PO-1', 3),
  tx('t2', '10000.00', 'USD', REF, 2),
  tx('t1', '-9215.00', 'EUR', REF, 1),
];

describe('tieOut with the batch swap', () => {
  it('ties the swap debit and credit, apart from the payouts, per currency', () => {
    const r = tieOut({ rows, transactions: TXS, payouts: new Map(), swaps: [SWAP] });
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.swaps).toEqual([
      {
        currency: 'USD',
        reference: REF,
        id: 's1',
        status: 'PROCESSING',
        sourceCurrency: 'EUR',
        debit: '-9215.00',
        destinationCurrency: 'USD',
        credit: '10000.00',
        exchangeRate: '1.0851871947',
        transactionIds: ['t2', 't1'],
        ok: true,
        problems: [],
      },
    ]);
    expect(
      r.totals.map(({ currency, debited, swapped, net, expectedNet, ok }) => ({ currency, debited, swapped, net, expectedNet, ok })),
    ).toEqual([
      { currency: 'EUR', debited: '0.00', swapped: '-9215.00', net: '-9215.00', expectedNet: '-9215.00', ok: true },
      { currency: 'USD', debited: '-11000.00', swapped: '10000.00', net: '-1000.00', expectedNet: '-1000.00', ok: true },
    ]);
    // the swap's legs are the batch's: neither unexplained nor "explained elsewhere"
    expect([r.unexplained, r.explained]).toEqual([[], []]);
    expect(r.period.from).toBe(t(1));
    const legs = reconciliationLines(r).filter((l) => l.kind?.startsWith('swap'));
    expect(legs.map((l) => [l.kind, l.currency, l.net, l.tiesOut])).toEqual([
      ['swap debit', 'EUR', '-9215.00', 'yes'],
      ['swap credit', 'USD', '10000.00', 'yes'],
    ]);
  });

  it('fails naming the swap when a leg does not show, or moved another amount than the swap says', () => {
    const noDebit = tieOut({ rows, transactions: TXS.filter((x) => x.id !== 't1'), payouts: new Map(), swaps: [SWAP] });
    expect(noDebit.ok).toBe(false);
    expect(noDebit.problems).toContain(`swap ${REF} (s1): no debit in the EUR wallet`);
    const short = tieOut({
      rows,
      transactions: TXS.map((x) => (x.id === 't2' ? { ...x, amount: new Dec('9000.00') } : x)),
      payouts: new Map(),
      swaps: [SWAP],
    });
    expect(short.ok).toBe(false);
    expect(short.problems).toContain(`swap ${REF} (s1): 9000.00 USD moved, the swap says 10000.00`);
    // a REJECTED swap is put back in both wallets
    const rejected = { ...SWAP, swap: { ...SWAP.swap!, status: 'REJECTED' } };
    const back = [tx('t6', '-10000.00', 'USD', REF, 6), tx('t5', '9215.00', 'EUR', REF, 5), ...TXS];
    expect(tieOut({ rows, transactions: back, payouts: new Map(), swaps: [rejected] }).problems).toEqual([]);
    expect(tieOut({ rows, transactions: TXS, payouts: new Map(), swaps: [rejected] }).problems).toEqual([
      `swap ${REF} (s1): REJECTED: -9215.00 EUR moved, the swap says 0.00`,
      `swap ${REF} (s1): REJECTED: 10000.00 USD moved, the swap says 0.00`,
      'EUR: net movement -9215.00, the results say 0.00',
      'USD: net movement -1000.00, the results say -11000.00',
    ]);
  });

  it("ties a swap the journal does not hold by its reference alone; another batch's swap stays explained by a swap", () => {
    const other = [
      tx('t8', '50.00', 'GBP', 'PBS-ffffffffffffffffffffffff-GBP', 8),
      tx('t7', '-58.70', 'EUR', 'PBS-ffffffffffffffffffffffff-GBP', 7),
    ];
    const r = tieOut({ rows, transactions: [...other, ...TXS], payouts: new Map(), swaps: [{ currency: 'USD', reference: REF }] });
    expect(r.problems).toEqual([]);
    expect(r.swaps).toMatchObject([{ reference: REF, sourceCurrency: 'EUR', debit: '-9215.00', credit: '10000.00', ok: true }]);
    expect(r.swaps[0]).not.toHaveProperty('id');
    expect(r.explained).toMatchObject([{ id: 't7', explainedBy: 'swap to the GBP wallet w-gbp' }]);
    // no swap known and no movement of its reference: nothing to tie
    expect(tieOut({ rows, transactions: TXS.slice(0, 2), payouts: new Map(), swaps: [{ currency: 'USD', reference: REF }] }).swaps).toEqual(
      [],
    );
  });
});

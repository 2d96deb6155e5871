// How retry and status find a results row's state in the ledger (engine/retry.ts ledgerStates):
// by key, else payout id (now or replaced), else reference; never by line number.
import { describe, expect, it } from 'vitest';
import { ledgerStates } from '../../src/engine/retry.ts';
import { foldJournal, type JournalLine, type PayoutSnapshot } from '../../src/journal/rows.ts';
import type { ResultRow } from '../../src/results/types.ts';

const at = '2026-01-01T00:00:00.000Z';
const payout = (id: string, status = 'PENDING'): PayoutSnapshot => ({
  id,
  status,
  sourceAmount: 10,
  sourceCurrency: 'GBP',
  destinationCurrency: 'GBP',
  documents: 0,
});
const created = (ref: string, row: number, id: string, attempt = 1): JournalLine[] => [
  { t: 'initiating', ref, row, attempt, key: `k-${ref}-${attempt}`, body: '{}', at },
  { t: 'created', ref, attempt, key: `k-${ref}-${attempt}`, requestId: 'r', payout: payout(id), at },
];
const row = (rowNumber: number, result: ResultRow['result'] = {}): ResultRow => ({ rowNumber, cells: {}, result });

describe('ledgerStates', () => {
  const folded = foldJournal([
    ...created('A', 2, 'pA'),
    ...created('B', 4, 'pB-old'),
    { t: 'status', ref: 'B', payoutId: 'pB-old', status: 'FAILED', source: 'get', at },
    { t: 'refund', ref: 'B', payoutId: 'pB-old', amount: '12.00', at },
    { t: 'resend', ref: 'B', payoutId: 'pB-old', at },
    ...created('B', 4, 'pB-new', 2),
    { t: 'quote', ref: 'C', attempt: 1, destinationAmount: 1 },
  ]);
  const stateOf = ledgerStates([folded]);

  it('finds a row by its key, its payout id (now or replaced) or its reference', () => {
    expect(stateOf(row(9, { idempotencyKey: 'k-A-1' }), undefined)?.ref).toBe('A');
    expect(stateOf(row(9, { payoutId: 'pB-old', idempotencyKey: 'k-B-1' }), undefined)?.payout?.id).toBe('pB-new');
    expect(stateOf(row(9), 'B')?.payout?.id).toBe('pB-new');
  });

  it('never by its line number, nor a reference the journal never sent', () => {
    expect(stateOf(row(4), 'C')).toBeUndefined(); // row 4 is B's in the journal; C has only a quote
    expect(stateOf(row(2), undefined)).toBeUndefined();
  });

  it('a reference two journals name is found only through its key or payout id', () => {
    const both = ledgerStates([folded, foldJournal(created('A', 2, 'pA-2'))]);
    expect(both(row(2), 'A')).toBeUndefined();
    expect(both(row(2, { payoutId: 'pA-2' }), 'A')?.payout?.id).toBe('pA-2');
  });
});

// A row refused before (or reopened by --resend-failed and refused since) that a retry's plan leaves out says the plan's
// reason, but keeps what the journal holds of it: its key (what ties the row to its payment in the next retry) and the
// payouts it replaced (the earlierPayouts cell, the run's money totals, reconcile).
import { describe, expect, it } from 'vitest';
import type { EngineRow } from '../../src/engine/prepare.ts';
import { resultValues, summarise } from '../../src/engine/outcome.ts';
import { rowOutcome } from '../../src/engine/pipeline.ts';
import { foldJournal, type JournalLine } from '../../src/journal/lines.ts';
import type { PayoutRow } from '../../src/validation/row-schemas.ts';
import { planFixture } from './plan-fixture.ts';

const at = '2026-01-01T00:00:00.000Z';
const row: EngineRow = { rowNumber: 2, cells: {}, payout: { reference: 'R1' } as PayoutRow, problems: [] };
const failed = { id: 'p1', payoutRef: 'PO-1', status: 'PENDING', sourceAmount: 10, sourceCurrency: 'USD', documents: 0 };
const refunded: JournalLine[] = [
  { t: 'initiating', ref: 'R1', row: 2, attempt: 1, key: 'k1', body: '{}', at },
  { t: 'created', ref: 'R1', attempt: 1, key: 'k1', requestId: 'req1', payout: { ...failed, transactionFees: 1 } as never, at },
  { t: 'status', ref: 'R1', payoutId: 'p1', status: 'FAILED', source: 'get', at },
  { t: 'refund', ref: 'R1', payoutId: 'p1', amount: '11.00', at },
  { t: 'resend', ref: 'R1', payoutId: 'p1', at },
  { t: 'initiating', ref: 'R1', row: 2, attempt: 2, key: 'k2', body: '{}', at },
  { t: 'rejected', ref: 'R1', attempt: 2, key: 'k2', error: { status: 400, code: 'INSUFFICIENT_FUNDS', message: 'x' }, at },
];
const leftOut = new Map([[2, { status: 'NOT_SENT' as const, code: 'INSUFFICIENT_FUNDS', message: 'left out by --allow-partial' }]]);

describe('a refused row a retry leaves out', () => {
  it('is NOT_SENT with the reason, its key and the payout it replaced kept in its results and the money totals', () => {
    const out = rowOutcome(row, foldJournal(refunded), { plan: planFixture({ notSent: leftOut, toSend: [] }), executed: new Map() });
    expect(out).toMatchObject({ status: 'NOT_SENT', error: { code: 'INSUFFICIENT_FUNDS' }, key: 'k2' });
    const cells = resultValues(out);
    expect(cells.idempotencyKey).toBe('k2');
    expect(JSON.parse(cells.earlierPayouts ?? '[]')).toMatchObject([{ payoutId: 'p1', status: 'FAILED', refunded: '11.00' }]);
    expect(summarise([out]).money.USD).toMatchObject({ payouts: 1, debited: '11.00', refunded: '11.00', net: '0.00' });
  });
});

describe('a refused row a retry finds invalid at preflight', () => {
  it('is INVALID with the finding, not FAILED_TO_SEND with the old refusal, its key and replaced payout kept', () => {
    const invalidRows = new Map([[2, { code: 'COUNTRY_PROHIBITED', message: 'payouts to Iran (IRN) are prohibited by the service' }]]);
    const out = rowOutcome(row, foldJournal(refunded), { plan: planFixture({ invalidRows, toSend: [] }), executed: new Map() });
    expect(out).toMatchObject({ status: 'INVALID', error: { code: 'COUNTRY_PROHIBITED' }, key: 'k2' });
    expect(JSON.parse(resultValues(out).earlierPayouts ?? '[]')).toMatchObject([{ payoutId: 'p1' }]);
  });
});

describe('a refunded row sent again whose new key answers with a payout made before it (ALREADY_PAID)', () => {
  it('keeps the payout it replaced in its results and the money totals', () => {
    const paid = { id: 'p2', payoutRef: 'PO-2', status: 'PENDING', sourceAmount: 10, sourceCurrency: 'USD', documents: 0 };
    const lines: JournalLine[] = [
      ...refunded.slice(0, -1),
      {
        t: 'created',
        ref: 'R1',
        attempt: 2,
        key: 'k2',
        requestId: 'req2',
        payout: { ...paid, existedBefore: '2025-12-31T00:00:00Z' } as never,
        at,
      },
    ];
    const out = rowOutcome(row, foldJournal(lines), { plan: planFixture({ toSend: [] }), executed: new Map() });
    expect(out).toMatchObject({ status: 'ALREADY_PAID', key: 'k2' });
    expect(JSON.parse(resultValues(out).earlierPayouts ?? '[]')).toMatchObject([{ payoutId: 'p1', status: 'FAILED' }]);
    expect(summarise([out]).money.USD).toMatchObject({ payouts: 1, debited: '11.00', refunded: '11.00' });
  });
});

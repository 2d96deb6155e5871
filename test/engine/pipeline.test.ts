import { describe, expect, it } from 'vitest';
import type { EngineRow } from '../../src/engine/prepare.ts';
import { summarise, type RowOutcome } from '../../src/engine/outcome.ts';
import { keptOutcome, kindOf, rowOutcome, type RunView } from '../../src/engine/pipeline.ts';
import type { BatchPlan } from '../../src/engine/batch-plan.ts';
import { planFixture } from './plan-fixture.ts';
import { foldJournal, type JournalLine } from '../../src/journal/lines.ts';
import type { PayoutRow } from '../../src/validation/row-schemas.ts';

const plan = (over: Partial<BatchPlan> = {}): BatchPlan => planFixture({ rows: 1, valid: 1, toSend: [2], ...over });
const row = (reference?: string): EngineRow => ({
  rowNumber: 2,
  cells: {},
  payout: reference ? ({ reference } as PayoutRow) : undefined,
  problems: reference ? [] : [{ severity: 'error', code: 'MISSING_VALUE', file: 'b.csv', row: 2, message: 'reference is missing' }],
});
const at = '2026-01-01T00:00:00.000Z';
const payout = { id: 'p1', payoutRef: 'PO-1', status: 'PENDING', sourceAmount: 10, sourceCurrency: 'USD', updatedAt: at };
const created: JournalLine[] = [
  { t: 'initiating', ref: 'R1', row: 2, attempt: 1, key: 'k1', body: '{}', at },
  { t: 'created', ref: 'R1', attempt: 1, key: 'k1', requestId: 'req1', payout: payout as never, at },
];
const none: RunView = { executed: new Map() };

describe('rowOutcome: a row as reported, from its journal state and the run so far (pure)', () => {
  it('a row to send refused or stopped before it is NOT_SENT', () => {
    const folded = foldJournal([]);
    expect(rowOutcome(row('R1'), folded, { plan: plan(), executed: new Map() })).toMatchObject({
      status: 'NOT_SENT',
      error: { code: 'NOT_SENT' },
    });
  });

  it('an invalid row is INVALID with its first problem, or the preflight finding the plan holds', () => {
    expect(rowOutcome(row(), foldJournal([]), none)).toMatchObject({ status: 'INVALID', error: { code: 'MISSING_VALUE' } });
    const invalidRows = new Map([[2, { code: 'COUNTRY_PROHIBITED', message: 'no' }]]);
    expect(rowOutcome(row('R1'), foldJournal([]), { plan: plan({ invalidRows }), executed: new Map() })).toMatchObject({
      status: 'INVALID',
      error: { code: 'COUNTRY_PROHIBITED' },
    });
  });

  it('what this run did decides, except for a created row, which is read from the journal (statuses caught up since)', () => {
    const halted: RowOutcome = { status: 'NOT_SENT', documents: [], error: { code: 'SERVICE_UNAVAILABLE', message: 'not sent' } };
    expect(rowOutcome(row('R1'), foldJournal([]), { executed: new Map([[2, halted]]) })).toBe(halted);
    const folded = foldJournal([...created, { t: 'status', ref: 'R1', payoutId: 'p1', status: 'SUCCESSFUL', source: 'get', at }]);
    const stale: RowOutcome = { status: 'PENDING', documents: [] };
    expect(rowOutcome(row('R1'), folded, { executed: new Map([[2, stale]]) })).toMatchObject({ status: 'SUCCESSFUL', key: 'k1' });
  });

  it('a row left out by the plan is NOT_SENT with the reason, even after an earlier refusal', () => {
    const notSent = new Map([[2, { status: 'NOT_SENT' as const, code: 'INSUFFICIENT_FUNDS', message: 'left out' }]]);
    const folded = foldJournal([
      { t: 'initiating', ref: 'R1', row: 2, attempt: 1, key: 'k1', body: '{}', at },
      { t: 'rejected', ref: 'R1', attempt: 1, key: 'k1', error: { code: 'X', message: 'refused' }, at },
    ]);
    expect(rowOutcome(row('R1'), folded, { plan: plan({ notSent, toSend: [] }), executed: new Map() })).toMatchObject({
      status: 'NOT_SENT',
      error: { code: 'INSUFFICIENT_FUNDS' },
    });
  });
});

describe('kindOf', () => {
  const summary = (statuses: string[]) => summarise(statuses.map((status) => ({ status, documents: [] })));
  it('ok only when every row has a payout that needs nobody; a refusal or a halt keeps its kind', () => {
    expect(kindOf('ok', summary([]))).toBe('ok');
    expect(kindOf('ok', summary(['INVALID']))).toBe('rows-failed');
    expect(kindOf('refused', summary(['NOT_SENT']))).toBe('refused');
    expect(kindOf('halted', summary([]))).toBe('halted');
  });
});

describe('keptOutcome: a created row of a retried results file the journal does not know', () => {
  it('its amounts are read exactly from the cells, as a workbook shows them (thousands separators), never through a float', () => {
    const kept = keptOutcome(
      {
        status: 'PENDING',
        payoutId: 'po_1',
        totalDeductible: '1,234,567,890,123,456.78',
        fee: '1.50',
        destinationAmount: '9,007,199,254,740,993.01',
      },
      'USD',
    );
    expect(kept.payout).toMatchObject({
      sourceAmount: '1234567890123455.28',
      transactionFees: '1.5',
      destinationAmount: '9007199254740993.01',
    });
    expect(summarise([kept]).money.USD).toMatchObject({ debited: '1234567890123456.78', net: '1234567890123456.78' });
  });

  it('a rate is never read as thousands: 1,085 (a decimal comma) is no rate, 1.085 is', () => {
    const kept = (appliedRate: string) =>
      keptOutcome({ status: 'PENDING', payoutId: 'po_1', totalDeductible: '10.00', appliedRate }, 'USD').payout?.exchangeRate;
    expect(kept('1,085')).toBeUndefined();
    expect(kept('1.085')).toBe('1.085');
  });

  it('a total that is no amount leaves the row without a payout (never a 0 in the totals)', () => {
    expect(keptOutcome({ status: 'PENDING', payoutId: 'po_1', totalDeductible: 'n/a' }, 'USD')).toEqual({
      status: 'PENDING',
      documents: [],
    });
  });
});

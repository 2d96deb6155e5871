// A reference is paid once per account (issue 26), as pure functions: the plan leaves out a
// reference another batch of the account sent, and a payout the service answered with that existed
// before the attempt's `initiating` line is ALREADY_PAID, never this batch's payout nor its money.
import { describe, expect, it } from 'vitest';
import { createdBefore, onServiceClock } from '../../src/engine/execute.ts';
import type { SentElsewhere } from '../../src/ledger/account-ledger.ts';
import { outcomeFromState, summarise } from '../../src/engine/outcome.ts';
import { rowOutcome } from '../../src/engine/pipeline.ts';
import { buildPlan } from '../../src/engine/batch-plan.ts';
import type { PreflightResult } from '../../src/engine/preflight.ts';
import type { LoadedBatch } from '../../src/engine/prepare.ts';
import { foldJournal, rowState, type PayoutSnapshot } from '../../src/journal/lines.ts';
import { batchOf, payoutRow, preflightOf } from './helpers.ts';
import { utcTime } from '../../src/text.ts';

const batch: LoadedBatch = {
  ...batchOf(
    [2, 3, 4].map((n) => payoutRow(n)),
    '/again.csv',
  ),
  identity: { batchId: 'b'.repeat(64), source: 'flag', label: 'again-1', fileSha256: 'a'.repeat(64) },
};
const preflight = preflightOf({ wallets: [{ currency: 'GBP', balance: 1000 } as PreflightResult['wallets'][number]] });
const options = { allowPartial: false, mergeDocuments: false };
const paid: PayoutSnapshot = {
  id: 'p-2',
  payoutRef: 'PR-2',
  status: 'PENDING',
  sourceAmount: 10,
  sourceCurrency: 'GBP',
  destinationCurrency: 'GBP',
  transactionFees: 2,
  documents: 0,
};
const sentElsewhere = new Map<string, SentElsewhere>([
  ['R-2', { ref: 'R-2', phase: 'created', batchId: 'a'.repeat(64), file: '/paid.csv', since: '2026-01-31T09:00:00Z', payout: paid }],
  ['R-3', { ref: 'R-3', phase: 'unknown', batchId: 'a'.repeat(64), file: '/paid.csv' }],
]);

describe('the plan leaves out a reference another batch of the account sent', () => {
  it('ALREADY_PAID with that payout, SENT_BY_ANOTHER_BATCH while its outcome is unknown; a warning; no corridor blocked', () => {
    const plan = buildPlan(batch, preflight, foldJournal([]), 'sandbox', { ...options, sentElsewhere });
    expect(plan.toSend).toEqual([4]);
    expect(plan.corridorBlocked).toBe(false);
    expect(plan.notSent.get(2)).toMatchObject({ code: 'ALREADY_PAID', payout: paid });
    expect(plan.notSent.get(2)?.message).toMatch(
      /^already paid at this account \(payout PR-2, batch aaaaaaaaaaaaaaaa, \/paid\.csv, first run 2026-01-31 UTC\)/,
    );
    expect(plan.notSent.get(3)?.code).toBe('SENT_BY_ANOTHER_BATCH');
    expect(plan.warnings.join('\n')).toMatch(/2 rows left out, the reference already sent at this account: row 2: already paid/);
    // the results of `run --plan` say so, with that payout, and it is not this batch's money
    const out = rowOutcome(batch.rows.at(0)!, foldJournal([]), { plan, executed: new Map() });
    expect(out).toMatchObject({ status: 'ALREADY_PAID', payout: { id: 'p-2' } });
    expect(summarise([out])).toMatchObject({ created: 0, notCreated: 1, money: {} });
  });

  it("a row out of the plan's scope (run --plan) is left out as well, so its results say why", () => {
    const plan = buildPlan(batch, preflight, foldJournal([]), 'sandbox', { ...options, sentElsewhere, only: new Set([4]) });
    expect(plan.toSend).toEqual([4]);
    expect(plan.notSent.get(2)?.code).toBe('ALREADY_PAID');
  });
});

describe('a payout the service answered with that existed before the attempt', () => {
  const at = '2026-02-01T10:00:00.000Z';
  it('is told by its createdAt before the initiating line; none, or a later one, is this attempt', () => {
    expect(createdBefore('2026-01-31T09:00:00Z', at)).toBe(true);
    expect(createdBefore('2026-02-01T10:00:00.001Z', at)).toBe(false);
    expect(createdBefore(undefined, at)).toBe(false);
    expect(createdBefore('not a date', at)).toBe(false);
  });

  it('is compared at the precision the service writes: a createdAt in whole seconds (or tenths) of the second it was sent is this attempt', () => {
    const sent = '2026-02-01T10:00:00.500Z';
    expect(createdBefore('2026-02-01T10:00:00Z', sent)).toBe(false);
    expect(createdBefore('2026-02-01T10:00:00.5Z', sent)).toBe(false);
    expect(createdBefore('2026-02-01T11:00:00+01:00', sent)).toBe(false);
    expect(createdBefore('2026-02-01T09:59:59Z', sent)).toBe(true);
    expect(createdBefore('2026-02-01T10:00:00.4Z', sent)).toBe(true);
    expect(createdBefore('2026-02-01T10:00:00.499Z', sent)).toBe(true);
  });

  it("reads a createdAt that names no zone as UTC on every host, never in the host's zone", () => {
    const sent = '2026-02-01T10:00:00.500Z';
    const was = process.env.TZ;
    const seen = ['UTC', 'America/Los_Angeles', 'Pacific/Kiritimati'].map((zone) => {
      process.env.TZ = zone; // (Node reads it again when it is set)
      try {
        return [createdBefore('2026-02-01T09:59:59', sent), createdBefore('2026-02-01T10:00:01.000', sent), utcTime('2026-02-01 10:00:00')];
      } finally {
        if (was === undefined) delete process.env.TZ;
        else process.env.TZ = was;
      }
    });
    expect(seen).toEqual(Array(3).fill([true, false, Date.UTC(2026, 1, 1, 10)]));
  });

  it("is told on the service's clock when its answer is dated: this host's clock ahead or behind changes nothing", () => {
    // the service's clock at 10:00:00.300 when the request arrived, its answer dated 10:00:00 (HTTP Date, whole seconds),
    // answered 400 ms after the initiating line on this host's clock, which runs 5 s ahead (or behind)
    const date = Date.parse('2026-02-01T10:00:00Z');
    for (const skew of [5_000, -5_000, 0]) {
      const local = (iso: string) => new Date(Date.parse(iso) + skew).toISOString();
      const sent = local('2026-02-01T10:00:00.200Z');
      const onService = onServiceClock(sent, local('2026-02-01T10:00:00.600Z'), date);
      // (in step with the service's Date: this host's clock, finer than a Date's second)
      expect(onService).toBe(skew ? '2026-02-01T09:59:59.600Z' : undefined);
      expect(createdBefore('2026-02-01T10:00:00.300Z', sent, onService)).toBe(false);
      expect(createdBefore('2026-02-01T10:00:00Z', sent, onService)).toBe(false);
      expect(createdBefore('2026-02-01T09:59:58.900Z', sent, onService)).toBe(true);
      expect(createdBefore('2026-01-31T10:00:00Z', sent, onService)).toBe(true);
    }
    // in step, a replay of half a second before is still told (the Date alone would not see it)
    expect(
      createdBefore(
        '2026-02-01T10:00:00.700Z',
        '2026-02-01T10:00:01.200Z',
        onServiceClock('2026-02-01T10:00:01.200Z', '2026-02-01T10:00:01.500Z', Date.parse('2026-02-01T10:00:01Z')),
      ),
    ).toBe(true);
    // (undated: this host's clock, as before)
    expect(onServiceClock('2026-02-01T10:00:05.200Z', '2026-02-01T10:00:05.600Z', undefined)).toBeUndefined();
    expect(createdBefore('2026-02-01T10:00:00.300Z', '2026-02-01T10:00:05.200Z')).toBe(true);
  });

  it('is ALREADY_PAID with that payout: left out of the plan, not counted as created nor in the money', () => {
    const folded = foldJournal([
      { t: 'initiating', ref: 'R-2', row: 2, attempt: 1, key: 'k', body: '{}', at },
      { t: 'created', ref: 'R-2', attempt: 1, key: 'k', requestId: 'q', payout: { ...paid, existedBefore: '2026-01-31T09:00:00Z' }, at },
    ]);
    const out = outcomeFromState(rowState(folded, 'R-2'), { status: 'NOT_SENT', documents: [] });
    expect(out).toMatchObject({ status: 'ALREADY_PAID', payout: { id: 'p-2' }, error: { code: 'ALREADY_PAID' } });
    expect(out.error?.message).toMatch(/^already paid at this account: payout PR-2 \(PENDING\) was created 2026-01-31T09:00:00Z/);
    expect(summarise([out])).toMatchObject({ created: 0, notCreated: 1, money: {} });
    const plan = buildPlan(batch, preflight, folded, 'sandbox', options);
    expect(plan).toMatchObject({ toSend: [3, 4], alreadyCreated: 0 });
    expect(plan.notSent.get(2)?.code).toBe('ALREADY_PAID');
  });
});

// nextStatus: forward only along the spec's table, with ADDITIONAL_INFO_REQUIRED -> PENDING (under
// review) forward, and the one cycle back to ADDITIONAL_INFO_REQUIRED only when provably newer.
import { describe, expect, it } from 'vitest';
import { nextStatus, nextStatusUndated, statusRank, UNDER_REVIEW } from '../../src/spec/status-order.ts';

const P = { status: 'PENDING' };
const AIR = { status: 'ADDITIONAL_INFO_REQUIRED' };
const REVIEW = { status: 'PENDING', statusDetail: UNDER_REVIEW };
const PROC = { status: 'PROCESSING' };

describe('nextStatus', () => {
  it('moves forward along the table', () => {
    expect(nextStatus(P, AIR)).toEqual({ apply: true, why: 'forward' });
    expect(nextStatus(AIR, REVIEW)).toEqual({ apply: true, why: 'forward' });
    expect(nextStatus(REVIEW, PROC).apply).toBe(true);
    expect(nextStatus(PROC, { status: 'SUCCESSFUL' }).apply).toBe(true);
    expect(nextStatus(AIR, { status: 'REJECTED' }).apply).toBe(true);
  });

  it('jumps forward over missed steps (GET is the current truth)', () => {
    expect(nextStatus(P, { status: 'SUCCESSFUL' })).toEqual({ apply: true, why: 'forward' });
    expect(nextStatus(AIR, PROC).apply).toBe(true);
  });

  it('never moves back: late or replayed answers are ignored', () => {
    expect(nextStatus(PROC, P)).toEqual({ apply: false, why: 'older' });
    expect(nextStatus(REVIEW, P).apply).toBe(false);
    expect(nextStatus(AIR, P).apply).toBe(false); // a plain PENDING is the one before the request
    expect(nextStatus(PROC, AIR).apply).toBe(false);
    expect(nextStatus({ status: 'SUCCESSFUL' }, PROC)).toEqual({ apply: false, why: 'final' });
    expect(nextStatus({ status: 'SUCCESSFUL' }, { status: 'FAILED' })).toEqual({ apply: false, why: 'final' });
  });

  it('takes a second request for information only when it is newer than what the row holds', () => {
    const held = { ...REVIEW, at: '2025-01-02T10:00:00.000Z' };
    expect(nextStatus(held, { ...AIR, at: '2025-01-02T11:00:00.000Z' })).toEqual({ apply: true, why: 're-request' });
    expect(nextStatus(held, { ...AIR, at: '2025-01-02T09:00:00.000Z' }).apply).toBe(false);
    expect(nextStatus(held, AIR).apply).toBe(false);
    // (and a late "under review" from before that second request does not move the row back up to it)
    const askedAgain = { ...AIR, at: '2025-01-02T11:00:00.000Z' };
    expect(nextStatus(askedAgain, held)).toEqual({ apply: false, why: 'older' });
    expect(nextStatus(askedAgain, REVIEW).apply).toBe(true); // (no time: taken, as a list item's)
    // (no cycle elsewhere: a move forward is taken though its time reads earlier, as a changedAt in whole seconds may)
    expect(nextStatus({ ...P, at: '2025-01-02T10:00:00.500Z' }, { ...PROC, at: '2025-01-02T10:00:00Z' }).apply).toBe(true);
    expect(nextStatus(askedAgain, { ...PROC, at: '2025-01-02T10:00:00.000Z' }).apply).toBe(true);
  });

  it('nextStatusUndated: a row whose time was cleared is older than any known time, and no other move changes', () => {
    const asked = { ...AIR, at: '2025-01-02T11:00:00.000Z' };
    expect(nextStatusUndated(REVIEW, asked)).toEqual({ apply: true, why: 're-request' });
    expect(nextStatusUndated(REVIEW, AIR).apply).toBe(false); // (no time on either side)
    expect(nextStatusUndated({ ...REVIEW, at: '2025-01-02T12:00:00.000Z' }, asked).apply).toBe(false);
    expect(nextStatusUndated(PROC, asked)).toEqual({ apply: false, why: 'older' });
  });

  it('refreshes details of the same status only from a newer copy', () => {
    expect(nextStatus({ ...AIR, at: '2025-01-01T00:00:00Z' }, { ...AIR, at: '2025-01-01T00:00:01Z' })).toEqual({
      apply: true,
      why: 'newer-details',
    });
    expect(nextStatus({ ...AIR, at: '2025-01-01T00:00:01Z' }, { ...AIR, at: '2025-01-01T00:00:00Z' })).toEqual({
      apply: false,
      why: 'same',
    });
  });

  it("leaves the engine's own words alone", () => {
    expect(nextStatus({ status: 'FAILED_TO_SEND' }, PROC)).toEqual({ apply: false, why: 'not-a-payout-status' });
    expect(nextStatus({ status: 'UNKNOWN_OUTCOME' }, P).apply).toBe(false);
  });

  it('orders the statuses as the table does', () => {
    const order = [P, AIR, REVIEW, PROC, { status: 'SUCCESSFUL' }].map(statusRank);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(new Set(order).size).toBe(order.length);
  });
});

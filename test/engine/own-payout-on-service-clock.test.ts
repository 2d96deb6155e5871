// A payout this attempt created is never "already paid at this account" (engine/execute.ts createdBefore): read on the
// service's clock, a createdAt the service writes in whole seconds is compared at that precision there too.
import { describe, expect, it } from 'vitest';
import { createdBefore, onServiceClock } from '../../src/engine/execute.ts';

describe("a payout created by this attempt, told on the service's clock", () => {
  it('with a createdAt in whole seconds, created just before the second its answer is dated: this attempt', () => {
    // the service created it at 10:00:00.990 (createdAt 10:00:00, whole seconds) and answered at 10:00:01.010 (Date
    // 10:00:01); this host's clock runs 5 s ahead: the initiating line at 10:00:05.970, the answer at 10:00:06.020
    const sent = '2026-02-01T10:00:05.970Z';
    const onService = onServiceClock(sent, '2026-02-01T10:00:06.020Z', Date.parse('2026-02-01T10:00:01Z'));
    expect(onService).toBeDefined();
    expect(createdBefore('2026-02-01T10:00:00Z', sent, onService)).toBe(false);
    // (one a second older is still told)
    expect(createdBefore('2026-02-01T09:59:59Z', sent, onService)).toBe(true);
  });
});

// The send step's classification of a failed initiate (src/engine/send.ts classify): which
// journal line it writes and whether the run halts. Only the service's own refusal may open a new
// attempt; anything refused here on a resend leaves the earlier attempt's outcome unknown.
import { describe, expect, it } from 'vitest';
import { PayoutApiError, type PayoutApiErrorInit } from '../../src/client/errors.ts';
import { classify } from '../../src/engine/send.ts';

const where = { route: 'initiate', method: 'POST', path: '/v1/payout-api/payouts/initiate', requestId: 'r-1' };
const error = (o: Partial<PayoutApiErrorInit>) => new PayoutApiError({ kind: 'http', outcome: 'definitive', message: 'x', ...where, ...o });

describe('classify', () => {
  const refusedHere = error({ kind: 'invalid-request', attempts: 0 });
  const serviceRefusal = error({ status: 400, code: 'MISSING_REQUIRED_FIELDS' });

  it('a refusal before the request left: rejected on a fresh attempt, unknown on a resend', () => {
    expect(classify(refusedHere, false)).toEqual({ line: 'rejected', halt: false });
    expect(classify(refusedHere, true)).toEqual({ line: 'unknown', halt: false });
  });

  it("the service's own refusal is rejected, fresh or resent", () => {
    expect(classify(serviceRefusal, false)).toEqual({ line: 'rejected', halt: false });
    expect(classify(serviceRefusal, true)).toEqual({ line: 'rejected', halt: false });
  });

  it('409 is a conflict, never rejected (no new key follows it)', () => {
    expect(classify(error({ status: 409, code: 'IDEMPOTENCY_KEY_CONFLICT' }), true)).toEqual({ line: 'conflict', halt: false });
  });

  it('an unknown outcome is journalled unknown; a timeout, dropped connection, 5xx or unreadable answer also halts the run', () => {
    expect(classify(error({ outcome: 'unknown', status: 408 }), false)).toEqual({ line: 'unknown', halt: false });
    expect(classify(error({ outcome: 'unknown', status: 502 }), false)).toEqual({ line: 'unknown', halt: true });
    expect(classify(error({ outcome: 'unknown', kind: 'invalid-response', status: 201 }), false)).toEqual({ line: 'unknown', halt: true });
    expect(classify(error({ outcome: 'unknown', kind: 'timeout' }), false)).toEqual({ line: 'unknown', halt: true });
    expect(classify(error({ outcome: 'unknown', kind: 'network' }), true)).toEqual({ line: 'unknown', halt: true });
  });

  it('service trouble the service did not act on halts with no line: the row is resent as journalled', () => {
    for (const status of [401, 403, 429, 503]) expect(classify(error({ status }), false)).toEqual({ halt: true });
    expect(classify(error({ kind: 'network' }), true)).toEqual({ halt: true });
  });

  it('an error that is not the client’s own leaves the outcome unknown', () => {
    expect(classify(new Error('disk full'), false)).toEqual({ line: 'unknown', halt: false });
  });
});

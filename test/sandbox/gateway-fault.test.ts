// The fault gatewayAfterCreate (faults.ts): a gateway in front of the service answers in its place
// after the service acted, on a new payout and on the replay of one, set through the control route.
import { describe, expect, it } from 'vitest';
import { call, nipBody, P, start, uniqueKey, walletBalance } from './helpers.ts';

describe('fault gatewayAfterCreate', () => {
  it('set with PUT /_sandbox/faults: 408 with an HTML page, the payout exists, a replay answers 408 too', async () => {
    const sb = await start();
    try {
      const set = await call(sb, 'PUT', '/_sandbox/faults', {
        key: null,
        body: { gatewayAfterCreate: { probability: 1, status: 408, body: 'html' }, routes: ['initiate'] },
      });
      expect(set.status).toBe(200);
      expect(set.body.gatewayAfterCreate).toEqual({ probability: 1, status: 408, body: 'html' });
      const key = uniqueKey();
      const r = await call(sb, 'POST', `${P}/initiate`, { body: nipBody(), idem: key });
      expect(r.status).toBe(408);
      expect(r.headers.get('content-type')).toBe('text/html');
      expect(r.body).toMatch(/<title>408 Request Timeout<\/title>/);
      expect((await call(sb, 'GET', P)).body.meta.total).toBe(1);
      const replay = await call(sb, 'POST', `${P}/initiate`, { body: nipBody(), idem: key });
      expect(replay.status).toBe(408);
      // a refusal of the service itself passes through unchanged
      const refused = await call(sb, 'POST', `${P}/initiate`, {
        body: nipBody({ sourceAmount: Math.ceil(await walletBalance(sb, 'USD')) + 1 }),
        idem: uniqueKey(),
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('INSUFFICIENT_FUNDS');
      expect((await call(sb, 'GET', P)).body.meta.total).toBe(1);
      // off again: the replay is the service's own answer
      await call(sb, 'PUT', '/_sandbox/faults', { key: null, body: {} });
      const settled = await call(sb, 'POST', `${P}/initiate`, { body: nipBody(), idem: key });
      expect(settled.status).toBe(201);
    } finally {
      await sb.close();
    }
  });

  it('draws a status from a list, answers the other bodies, and refuses a status that is not an error', async () => {
    const sb = await start({ faults: { gatewayAfterCreate: { probability: 1, status: [502], body: 'json' } } });
    try {
      const r = await call(sb, 'POST', `${P}/initiate`, { body: nipBody(), idem: uniqueKey() });
      expect(r.status).toBe(502);
      expect(r.body).toEqual({ message: 'Bad Gateway (gateway)' });
      sb.setFaults({ gatewayAfterCreate: { probability: 1, status: 504, body: 'empty' } });
      const e = await call(sb, 'POST', `${P}/initiate`, { body: nipBody({ sourceAmount: 999 }), idem: uniqueKey() });
      expect(e.status).toBe(504);
      expect(e.body).toBeUndefined();
      const bad = await call(sb, 'PUT', '/_sandbox/faults', { key: null, body: { gatewayAfterCreate: { probability: 1, status: 200 } } });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toBe('VALIDATION_ERROR');
      // reads are never answered by the gateway fault
      expect((await call(sb, 'GET', `${P}/wallets`)).status).toBe(200);
    } finally {
      await sb.close();
    }
  });
});

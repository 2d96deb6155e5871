import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/sandbox/faults.ts';
import { call, eventually, initiate, nipBody, P, start, uniqueKey, walletBalance } from './helpers.ts';

describe('fault injection', () => {
  it('errorAfterCreate: the client sees a 5xx, the payout exists, and a retry with the same key finds it', async () => {
    const sb = await start({ faults: { errorAfterCreate: 1, routes: ['initiate'] } });
    try {
      const before = await walletBalance(sb, 'USD');
      const key = uniqueKey();
      const r = await call(sb, 'POST', `${P}/initiate`, { body: nipBody(), idem: key });
      expect([500, 502, 503]).toContain(r.status);
      const list = await call(sb, 'GET', P);
      expect(list.body.meta.total).toBe(1);
      expect(await walletBalance(sb, 'USD')).toBe(Number((before - 1000.07).toFixed(2)));
      sb.setFaults({});
      const retry = await call(sb, 'POST', `${P}/initiate`, { body: nipBody(), idem: key });
      expect(retry.status).toBe(201);
      expect(retry.body.id).toBe(list.body.data[0].id);
      expect((await call(sb, 'GET', P)).body.meta.total).toBe(1);
      // the log says which key each initiate carried: a campaign pairs a retry with the 5xx before it
      const initiates = sb.requestLog().filter((e) => e.route === 'initiate');
      expect(initiates.map((e) => e.idempotencyKey)).toEqual([key, key]);
    } finally {
      await sb.close();
    }
  });

  it('dropAfterCreate: the socket closes with no answer, the payout exists, the log says 0', async () => {
    const sb = await start({ faults: { dropAfterCreate: 1 } });
    try {
      await expect(initiate(sb, nipBody())).rejects.toThrow();
      expect((await call(sb, 'GET', P)).body.meta.total).toBe(1);
      expect(sb.requestLog().find((e) => e.route === 'initiate')?.status).toBe(0);
      // Non-creating routes are not dropped.
      expect((await call(sb, 'GET', `${P}/wallets`)).status).toBe(200);
    } finally {
      await sb.close();
    }
  });

  it('errorBeforeEffect: a 5xx and nothing happened', async () => {
    const sb = await start({ faults: { errorBeforeEffect: 1, routes: ['initiate'] } });
    try {
      const r = await initiate(sb, nipBody());
      expect([500, 502, 503]).toContain(r.status);
      expect(r.body.statusCode).toBe(r.status);
      expect((await call(sb, 'GET', P)).body.meta.total).toBe(0);
    } finally {
      await sb.close();
    }
  });

  it('spurious429 and latency, changed at run time with PUT /_sandbox/faults', async () => {
    const sb = await start();
    try {
      const put = await call(sb, 'PUT', '/_sandbox/faults', { key: null, body: { spurious429: 1, routes: ['wallets'] } });
      expect(put.status).toBe(200);
      expect((await call(sb, 'GET', '/_sandbox/faults', { key: null })).body).toMatchObject({ spurious429: 1, routes: ['wallets'] });
      const r = await call(sb, 'GET', `${P}/wallets`);
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBe('1');
      expect((await call(sb, 'GET', `${P}/pairs`)).status).toBe(200);
      // A latency fault holds the answer. With a minute of it on wallets only, a wallets read is
      // still unanswered after a later read of another route has been answered in full (no clock
      // read: the order of the answers says it).
      await call(sb, 'PUT', '/_sandbox/faults', { key: null, body: { latencyMs: [60_000, 60_000], routes: ['wallets'] } });
      let answered = false;
      const slow = call(sb, 'GET', `${P}/wallets`).then(
        () => void (answered = true),
        () => undefined, // cut by close() below
      );
      await eventually(() => (sb.inFlight() === 1 ? true : undefined));
      expect((await call(sb, 'GET', `${P}/pairs`)).status).toBe(200);
      expect(answered).toBe(false);
      expect(sb.inFlight()).toBe(1);
      expect((await call(sb, 'PUT', '/_sandbox/faults', { key: null, body: { errorBeforeEffect: 2 } })).status).toBe(400);
      expect(() => sb.setFaults({ latencyMs: [10, 5] })).toThrow(/latencyMs/);
      await sb.close();
      await slow;
      expect(answered).toBe(false);
    } finally {
      await sb.close();
    }
  });

  it('replays the same faults for the same randomSeed', async () => {
    const run = async () => {
      const sb = await start({ randomSeed: 42, faults: { errorBeforeEffect: 0.5, routes: ['wallets'] } });
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 12; i++) statuses.push((await call(sb, 'GET', `${P}/wallets`)).status);
        return statuses;
      } finally {
        await sb.close();
      }
    };
    const [a, b] = [await run(), await run()];
    expect(a).toEqual(b);
    expect(a.some((s) => s === 200) && a.some((s) => s >= 500)).toBe(true);
    const r = mulberry32(7);
    expect([r(), r()]).toEqual(
      (() => {
        const q = mulberry32(7);
        return [q(), q()];
      })(),
    );
  });
});

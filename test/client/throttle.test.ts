import { afterEach, describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { DEFAULT_SAFETY_MARGIN_MS, LOOPBACK_SAFETY_MARGIN_MS, SlidingWindowLimiter, defaultSafetyMarginMs } from '../../src/client/pace.ts';
import { PayoutClient } from '../../src/client/client.ts';
import { json } from './fake-fetch.ts';

/** The largest number of starts inside any window of `span` ms (half-open [t, t + span)). */
function maxInWindow(starts: number[], span: number): number {
  const s = [...starts].sort((a, b) => a - b);
  let max = 0;
  for (let i = 0, j = 0; i < s.length; i++) {
    while (s[i]! - s[j]! >= span) j++;
    max = Math.max(max, i - j + 1);
  }
  return max;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('SlidingWindowLimiter', () => {
  it('never lets more than N starts into any rolling window, whatever the arrival pattern', async () => {
    vi.useFakeTimers();
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: 200 }),
        async (n, gaps, margin) => {
          const clock = { now: () => Date.now() };
          const limiter = new SlidingWindowLimiter({ perWindow: n, safetyMarginMs: margin, clock });
          const starts: number[] = [];
          const all: Promise<void>[] = [];
          for (const gap of gaps) {
            await vi.advanceTimersByTimeAsync(gap);
            all.push(limiter.acquire().then(() => void starts.push(clock.now())));
          }
          await vi.advanceTimersByTimeAsync(60_000);
          await Promise.all(all);
          expect(starts).toHaveLength(gaps.length);
          // What the server counts: a rolling 1000 ms. Our window is 1000 + margin, so even 1000 + margin holds at most N.
          expect(maxInWindow(starts, 1000 + margin)).toBeLessThanOrEqual(n);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('does not behave like a token bucket: 5 at once, then the 6th only after the window (+margin) has passed', async () => {
    vi.useFakeTimers();
    const clock = { now: () => Date.now() };
    const limiter = new SlidingWindowLimiter({ perWindow: 5, safetyMarginMs: 50, clock });
    const t0 = clock.now();
    const at: number[] = [];
    const all = Array.from({ length: 11 }, () => limiter.acquire().then(() => void at.push(clock.now() - t0)));
    await vi.advanceTimersByTimeAsync(5000);
    await Promise.all(all);
    expect(at.slice(0, 5)).toEqual([0, 0, 0, 0, 0]);
    expect(Math.min(...at.slice(5, 10))).toBeGreaterThanOrEqual(1050);
    expect(Math.max(...at.slice(5, 10))).toBeLessThan(1100);
    expect(at[10]).toBeGreaterThanOrEqual(2100);
  });

  it('counts a start from when the transport marks it sent, not from its grant', async () => {
    vi.useFakeTimers();
    const clock = { now: () => Date.now() };
    const limiter = new SlidingWindowLimiter({ perWindow: 1, safetyMarginMs: 0, clock });
    const t0 = clock.now();
    const first = await limiter.acquire();
    await vi.advanceTimersByTimeAsync(300);
    first.markSent(); // the first request was sent 300 ms after its grant
    let next = -1;
    const p = limiter.acquire().then(() => void (next = clock.now() - t0));
    await vi.advanceTimersByTimeAsync(5000);
    await p;
    // Not at 1000 (granted + 1 s) but after the real send + 1 s.
    expect(next).toBeGreaterThanOrEqual(1300);
    expect(next).toBeLessThan(1400);
  });

  it('slows by one start per window after a 429 and recovers after the cooldown', async () => {
    vi.useFakeTimers();
    const clock = { now: () => Date.now() };
    const limiter = new SlidingWindowLimiter({ perWindow: 5, cooldownMs: 3000, clock });
    expect(limiter.effectiveLimit()).toBe(5);
    limiter.penalize();
    limiter.penalize(); // refused together, in one window: one event
    expect(limiter.effectiveLimit()).toBe(4);
    await vi.advanceTimersByTimeAsync(1200);
    limiter.penalize();
    expect(limiter.effectiveLimit()).toBe(3);
    await vi.advanceTimersByTimeAsync(3000);
    expect(limiter.effectiveLimit()).toBe(4);
    await vi.advanceTimersByTimeAsync(3000);
    expect(limiter.effectiveLimit()).toBe(5);
    for (let i = 0; i < 10; i++) {
      limiter.penalize();
      await vi.advanceTimersByTimeAsync(1100);
    }
    expect(limiter.effectiveLimit()).toBe(1);
  });

  it('lets an aborted waiter leave the queue without taking a slot', async () => {
    vi.useFakeTimers();
    const limiter = new SlidingWindowLimiter({ perWindow: 1, clock: { now: () => Date.now() } });
    await limiter.acquire();
    const ac = new AbortController();
    const waiting = limiter.acquire(ac.signal);
    ac.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    expect(limiter.waiting).toBe(0);
  });
});

describe('whose limiter a client uses', () => {
  const KEY = 'sk_sandbox_throttle_owner_7e6d5c4b';
  const wallets = () => json(200, { data: [{ walletId: 'w1', currency: 'USD', balance: 10 }] });
  const counting = () => {
    let calls = 0;
    const fetch = (async () => (calls++, wallets())) as typeof globalThis.fetch;
    return { fetch, calls: () => calls };
  };

  it("is its own unless given one: a second client of the same key is not held by the first one's pace or clock", async () => {
    vi.useFakeTimers();
    const clock = { now: () => Date.now() };
    const a = counting();
    const first = new PayoutClient({ baseUrl: 'https://gw.example.test', apiKey: KEY, requestsPerSecond: 1, fetch: a.fetch, clock });
    await first.listWallets();
    const b = counting();
    const second = new PayoutClient({ baseUrl: 'https://gw.example.test', apiKey: KEY, requestsPerSecond: 5, fetch: b.fetch, clock });
    const p = second.listWallets();
    await vi.advanceTimersByTimeAsync(0);
    expect(b.calls()).toBe(1);
    await p;
  });

  it('given one limiter, two clients of one key share its pace', async () => {
    vi.useFakeTimers();
    const clock = { now: () => Date.now() };
    const limiter = new SlidingWindowLimiter({ perWindow: 1, safetyMarginMs: 50, clock });
    const a = counting();
    const b = counting();
    const first = new PayoutClient({ baseUrl: 'https://gw.example.test', apiKey: KEY, limiter, fetch: a.fetch });
    const second = new PayoutClient({ baseUrl: 'https://gw.example.test', apiKey: KEY, limiter, fetch: b.fetch });
    await first.listWallets();
    const p = second.listWallets();
    await vi.advanceTimersByTimeAsync(1000);
    expect(b.calls()).toBe(0);
    await vi.advanceTimersByTimeAsync(100);
    expect(b.calls()).toBe(1);
    await p;
  });
});

describe('when a start is dated', () => {
  /** A client whose every answer takes 300 ms (fake timers), and when each request reached fetch. */
  function slowService(perWindow: number, apiKey: string) {
    vi.useFakeTimers();
    const t0 = Date.now();
    const calls: number[] = [];
    const fetch = (async () => {
      calls.push(Date.now() - t0);
      await new Promise((r) => setTimeout(r, 300));
      return json(200, { data: [] });
    }) as typeof globalThis.fetch;
    const limiter = new SlidingWindowLimiter({ perWindow, safetyMarginMs: 0, clock: { now: () => Date.now() } });
    return { calls, client: new PayoutClient({ baseUrl: 'https://gw.example.test', apiKey, limiter, fetch }) };
  }

  it('when the request is handed to fetch; before the first answer, when its answer arrives', async () => {
    // for the first, loading fetch and opening a connection may be part of its 300 ms
    const { calls, client } = slowService(1, 'sk_sandbox_throttle_warm_1f2e3d4c');
    const all = Promise.all([client.listWallets(), client.listWallets(), client.listWallets()]);
    await vi.advanceTimersByTimeAsync(5000);
    await all;
    // the first counted from its answer (300 ms), the second from its call: about 1300, then 2300
    expect(calls[0]).toBe(0);
    expect(calls[1]).toBeGreaterThanOrEqual(1300);
    expect(calls[1]).toBeLessThan(1310);
    expect(calls[2]! - calls[1]!).toBeGreaterThanOrEqual(1000);
    expect(calls[2]! - calls[1]!).toBeLessThan(1010);
  });

  it('a request that may open a new connection (more in flight than ever answered at once) is dated by its answer', async () => {
    const { calls, client } = slowService(3, 'sk_sandbox_throttle_conn_5a6b7c8d');
    const first = client.listWallets(); // one connection, known open once answered (at 300)
    await vi.advanceTimersByTimeAsync(300);
    await first;
    const rest = Promise.all([1, 2, 3, 4, 5].map(() => client.listWallets()));
    await vi.advanceTimersByTimeAsync(5000);
    await rest;
    // at 300 two go: the first on the open connection, counted from its call; the second perhaps
    // on a new one, counted from its answer (600). Two more when the first two expire (1300); the
    // last when that second one does: 1600, not 1300.
    expect(calls.map((c) => Math.round(c / 10) * 10)).toEqual([0, 300, 300, 1300, 1300, 1600]);
  });
});

describe('PayoutClient: the rate promise, by its own record of when each request started', () => {
  it('never starts more than 5 requests (retries included) in any second, 20 in flight, with 429s and 503s', async () => {
    // Fake timers: the client's clock, its limiter's timers and its retry sleeps all run on the
    // test's time, so the start times below are decided by the client alone, not by the machine.
    vi.useFakeTimers();
    const starts: number[] = [];
    let calls = 0;
    const fetch = (async () => {
      starts.push(Date.now());
      const i = calls++;
      if (i % 7 === 3) return json(429, { statusCode: 429, message: 'slow down', error: 'RATE_LIMIT_EXCEEDED' }, { 'retry-after': '1' });
      if (i % 11 === 5) return json(503, { statusCode: 503, message: 'busy' });
      return json(200, { data: [{ walletId: 'w1', currency: 'USD', balance: 10 }] });
    }) as typeof globalThis.fetch;
    const client = new PayoutClient({
      baseUrl: 'https://gateway.example.test',
      apiKey: 'sk_sandbox_throttle_client_0a1b2c3d',
      concurrency: 20,
      fetch,
      random: () => 0.5,
      clock: { now: () => Date.now() },
    });
    let done = 0;
    const all = Promise.all(Array.from({ length: 40 }, () => client.listWallets().then(() => void done++)));
    for (let i = 0; i < 1000 && done < 40; i++) await vi.advanceTimersByTimeAsync(100);
    await all;
    expect(done).toBe(40);
    expect(starts.length).toBeGreaterThan(40); // the 429s and 503s were retried
    // What the server counts (a rolling 1000 ms), and our own window with the default margin.
    expect(maxInWindow(starts, 1000)).toBeLessThanOrEqual(5);
    expect(maxInWindow(starts, 1000 + DEFAULT_SAFETY_MARGIN_MS)).toBeLessThanOrEqual(5);
  });
});

describe('the default safety margin', () => {
  it('is the smaller one only for a service on this machine', () => {
    for (const u of ['http://127.0.0.1:4010', 'http://localhost:9/x', 'http://[::1]:80', 'http://127.1.2.3'])
      expect(defaultSafetyMarginMs(u)).toBe(LOOPBACK_SAFETY_MARGIN_MS);
    for (const u of [
      'https://gateway.example.com',
      'https://gateway.staging.example.com/v1',
      'http://10.0.0.5:4010',
      'http://127.0.0.1.example.com',
      'not a url',
    ]) {
      expect(defaultSafetyMarginMs(u)).toBe(DEFAULT_SAFETY_MARGIN_MS);
    }
    expect(LOOPBACK_SAFETY_MARGIN_MS).toBeLessThan(DEFAULT_SAFETY_MARGIN_MS);
  });
});

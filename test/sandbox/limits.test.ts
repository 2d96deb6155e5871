import { describe, expect, it } from 'vitest';
import { ACME, call, GLOBEX, P, start, uploadDocument } from './helpers.ts';

// Every test here gives the sandbox a clock of its own (SandboxOptions.now) that moves only when the
// test moves it: which requests share a window is decided by the test, not by the machine's speed.
function manualClock(startAt = Date.UTC(2026, 0, 15, 12, 0, 0)) {
  let t = startAt;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

const wallets = (s: { url: string }, key?: string) => call(s, 'GET', `${P}/wallets`, key ? { key } : {});

describe('rate limit (spec §8: 5 per second per key)', () => {
  it('answers 429 with Retry-After to a burst: 5 accepted, the rest refused; another key is not affected', async () => {
    const clock = manualClock();
    const s = await start({ rateLimitPerSecond: 5, now: clock.now });
    try {
      const burst = await Promise.all(Array.from({ length: 12 }, () => wallets(s)));
      const limited = burst.filter((r) => r.status === 429);
      expect(burst.filter((r) => r.status === 200)).toHaveLength(5);
      expect(limited).toHaveLength(7);
      expect(limited[0]!.body).toMatchObject({ statusCode: 429, error: 'RATE_LIMIT_EXCEEDED' });
      expect(limited.map((r) => r.headers.get('retry-after'))).toEqual(Array(7).fill('1'));
      // The limit is per key: another key is not affected.
      expect((await wallets(s, GLOBEX)).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('refuses the 6th request in a rolling second, and accepts it once the oldest has left the window', async () => {
    const clock = manualClock();
    const s = await start({ rateLimitPerSecond: 5, now: clock.now });
    try {
      // Five at t, t+100, ..., t+400: all accepted.
      for (let i = 0; i < 5; i++) {
        expect((await wallets(s)).status).toBe(200);
        clock.advance(100);
      }
      // The 6th at t+999: still the same window (t - 1000, t+999] holds five.
      clock.advance(499);
      const sixth = await wallets(s);
      expect(sixth.status).toBe(429);
      expect(sixth.body).toMatchObject({ statusCode: 429, error: 'RATE_LIMIT_EXCEEDED' });
      expect(sixth.headers.get('retry-after')).toBe('1');
      // At t+1000 the request of t has left the window: one place, taken; the next is refused.
      clock.advance(1);
      expect((await wallets(s)).status).toBe(200);
      expect((await wallets(s)).status).toBe(429);
      // At t+1100 the request of t+100 leaves: one place again.
      clock.advance(100);
      expect((await wallets(s)).status).toBe(200);
      expect(
        s
          .requestLog()
          .filter((e) => e.apiKey === ACME)
          .map((e) => e.status),
      ).toEqual([200, 200, 200, 200, 200, 429, 200, 429, 200]);
    } finally {
      await s.close();
    }
  });

  it('accepts every request paced at exactly the limit (one per 200 ms)', async () => {
    const clock = manualClock();
    const s = await start({ rateLimitPerSecond: 5, now: clock.now });
    try {
      const statuses = [];
      for (let i = 0; i < 15; i++) {
        statuses.push((await wallets(s)).status);
        clock.advance(200);
      }
      expect(statuses).toEqual(Array(15).fill(200));
    } finally {
      await s.close();
    }
  });

  it('does not count 429 answers: after a second the key is fully usable again', async () => {
    const clock = manualClock();
    const s = await start({ rateLimitPerSecond: 2, now: clock.now });
    try {
      const first = await Promise.all(Array.from({ length: 6 }, () => wallets(s)));
      expect(first.filter((r) => r.status === 200)).toHaveLength(2);
      clock.advance(1000);
      const next = await Promise.all([wallets(s), wallets(s)]);
      expect(next.map((r) => r.status)).toEqual([200, 200]);
      expect((await wallets(s)).status).toBe(429);
    } finally {
      await s.close();
    }
  });

  it('does not limit storage PUTs or control routes', async () => {
    const sb = await start({ rateLimitPerSecond: 1 });
    try {
      const u = (await call(sb, 'POST', `${P}/documents/upload-url`, { body: { filename: 'a.pdf', contentType: 'application/pdf' } })).body;
      const puts = await Promise.all(Array.from({ length: 4 }, () => fetch(u.uploadUrl, { method: 'PUT', headers: u.headers, body: 'x' })));
      expect(puts.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      const controls = await Promise.all(Array.from({ length: 4 }, () => call(sb, 'GET', '/_sandbox/requests', { key: null })));
      expect(controls.every((r) => r.status === 200)).toBe(true);
    } finally {
      await sb.close();
    }
  });
});

describe('monthly quota (spec §8: 10,000 per month per key)', () => {
  it('answers 429 MONTHLY_QUOTA_EXCEEDED once the month is used up, until the next calendar month', async () => {
    // One minute before the end of January (UTC), on a clock that only the test moves.
    const clock = manualClock(Date.UTC(2026, 0, 31, 23, 59, 0));
    const sb = await start({ monthlyQuota: 3, now: clock.now });
    try {
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push(await call(sb, 'GET', `${P}/wallets`));
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 429, 429]);
      expect(answers[3]!.body.error).toBe('MONTHLY_QUOTA_EXCEEDED');
      const retryAfter = Number(answers[3]!.headers.get('retry-after'));
      expect(retryAfter).toBe(60);
      // Another key has its own quota.
      expect((await call(sb, 'GET', `${P}/wallets`, { key: GLOBEX })).status).toBe(200);
      // Uploads are not API requests.
      expect(await uploadDocument(sb, GLOBEX).catch(() => 'refused')).not.toBe('refused');
      // One ms before February: still refused; at the first instant of February: accepted.
      clock.advance(retryAfter * 1000 - 1);
      expect((await call(sb, 'GET', `${P}/wallets`)).status).toBe(429);
      sb.advanceClock(1);
      expect((await call(sb, 'GET', `${P}/wallets`)).status).toBe(200);
    } finally {
      await sb.close();
    }
  });

  it('keeps the month count of each key in its state: a sandbox going on from it (--env local) counts on', async () => {
    const clock = manualClock();
    const first = await start({ monthlyQuota: 2, now: clock.now });
    const state = await (async () => {
      try {
        expect([(await wallets(first)).status, (await wallets(first)).status]).toEqual([200, 200]);
        return first.snapshot();
      } finally {
        await first.close();
      }
    })();
    expect(JSON.stringify(state)).not.toContain(ACME);
    const next = await start({ monthlyQuota: 2, now: clock.now, state });
    try {
      expect((await wallets(next)).status).toBe(429);
      expect((await wallets(next, GLOBEX)).status).toBe(200);
    } finally {
      await next.close();
    }
  });

  it('turns both limits off with null', async () => {
    const sb = await start({ rateLimitPerSecond: null, monthlyQuota: null });
    try {
      const burst = await Promise.all(Array.from({ length: 30 }, () => call(sb, 'GET', `${P}/wallets`)));
      expect(burst.every((r) => r.status === 200)).toBe(true);
    } finally {
      await sb.close();
    }
  });
});

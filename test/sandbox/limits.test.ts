import { describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../src/sandbox/index.ts';
import { ACME, call, GLOBEX, P, start, uploadDocument } from './helpers.ts';

/** The most accepted (non-429) requests of one key in any window (t - 1000 ms, t]. */
function maxInRollingSecond(log: RequestLogEntry[], key: string): number {
  const accepted = log
    .filter((e) => e.apiKey === key && e.status !== 429)
    .map((e) => e.at)
    .sort((a, b) => a - b);
  let max = 0;
  for (let i = 0, j = 0; i < accepted.length; i++) {
    while (accepted[j]! <= accepted[i]! - 1000) j++;
    max = Math.max(max, i - j + 1);
  }
  return max;
}

describe('rate limit (spec §8: 5 per second per key)', () => {
  it('answers 429 with Retry-After to a burst and never accepts more than 5 in any rolling second', async () => {
    const sb = await start({ rateLimitPerSecond: 5 });
    try {
      const burst = await Promise.all(Array.from({ length: 12 }, () => call(sb, 'GET', `${P}/wallets`)));
      const limited = burst.filter((r) => r.status === 429);
      expect(burst.filter((r) => r.status === 200)).toHaveLength(5);
      expect(limited).toHaveLength(7);
      expect(limited[0]!.body).toMatchObject({ statusCode: 429, error: 'RATE_LIMIT_EXCEEDED' });
      expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // The limit is per key: another key is not affected.
      expect((await call(sb, 'GET', `${P}/wallets`, { key: GLOBEX })).status).toBe(200);
      // Paced just under the limit for a while: the property holds over the whole log.
      for (let i = 0; i < 10; i++) {
        await call(sb, 'GET', `${P}/wallets`);
        await new Promise((r) => setTimeout(r, 120));
      }
      expect(maxInRollingSecond(sb.requestLog(), ACME)).toBeLessThanOrEqual(5);
      expect(sb.requestLog().filter((e) => e.apiKey === ACME && e.status === 200).length).toBeGreaterThan(5);
    } finally {
      await sb.close();
    }
  });

  it('does not count 429 answers: after a second the key is fully usable again', async () => {
    const sb = await start({ rateLimitPerSecond: 2 });
    try {
      await Promise.all(Array.from({ length: 6 }, () => call(sb, 'GET', `${P}/wallets`)));
      await new Promise((r) => setTimeout(r, 1050));
      const next = await Promise.all([call(sb, 'GET', `${P}/wallets`), call(sb, 'GET', `${P}/wallets`)]);
      expect(next.map((r) => r.status)).toEqual([200, 200]);
    } finally {
      await sb.close();
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
    const sb = await start({ monthlyQuota: 3 });
    try {
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push(await call(sb, 'GET', `${P}/wallets`));
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 429, 429]);
      expect(answers[3]!.body.error).toBe('MONTHLY_QUOTA_EXCEEDED');
      const retryAfter = Number(answers[3]!.headers.get('retry-after'));
      const now = new Date();
      const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
      expect(Math.abs(retryAfter - (nextMonth - Date.now()) / 1000)).toBeLessThan(5);
      // Another key has its own quota.
      expect((await call(sb, 'GET', `${P}/wallets`, { key: GLOBEX })).status).toBe(200);
      // Uploads are not API requests.
      expect(await uploadDocument(sb, GLOBEX).catch(() => 'refused')).not.toBe('refused');
      sb.advanceClock(retryAfter * 1000);
      expect((await call(sb, 'GET', `${P}/wallets`)).status).toBe(200);
    } finally {
      await sb.close();
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

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { backoffMs, decideRetry, DEFAULT_RETRY_POLICY, parseRetryAfter } from '../../src/client/http.ts';
import { PayoutClient } from '../../src/client/client.ts';
import { PayoutApiError } from '../../src/client/errors.ts';

describe('decideRetry', () => {
  const base = { attempt: 1, random: 0.5, resendSafe: true } as const;

  it('retries a 429 after exactly the Retry-After it was given', () => {
    expect(decideRetry({ ...base, failure: { kind: 'http', status: 429, retryAfterMs: 2000 } })).toEqual({
      retry: true,
      delayMs: 2000,
      reason: expect.stringContaining('Retry-After'),
    });
  });

  it('retries a 429 without Retry-After with backoff, even on a route not safe to resend', () => {
    const d = decideRetry({ ...base, resendSafe: false, failure: { kind: 'http', status: 429 } });
    expect(d.retry).toBe(true);
    if (d.retry) expect(d.delayMs).toBe(backoffMs(1, 0.5));
  });

  it('gives up when the service asks for a wait longer than the policy allows (a monthly quota)', () => {
    const d = decideRetry({ ...base, failure: { kind: 'http', status: 429, retryAfterMs: 3_600_000 } });
    expect(d).toMatchObject({ retry: false });
    expect(d.reason).toMatch(/3600 s/);
  });

  it('retries 5xx, timeouts and dropped connections only where resending is safe', () => {
    for (const failure of [{ kind: 'http', status: 502 }, { kind: 'timeout' }, { kind: 'network', beforeSend: false }] as const) {
      expect(decideRetry({ ...base, failure }).retry).toBe(true);
      expect(decideRetry({ ...base, resendSafe: false, failure }).retry).toBe(false);
    }
  });

  it('retries a connection that never opened on any route: nothing was sent', () => {
    expect(decideRetry({ ...base, resendSafe: false, failure: { kind: 'network', beforeSend: true } }).retry).toBe(true);
  });

  it('never retries a definitive 4xx other than 429', () => {
    for (const status of [400, 401, 403, 404, 409, 422]) {
      expect(decideRetry({ ...base, failure: { kind: 'http', status } }).retry).toBe(false);
    }
  });

  it('stops at maxAttempts', () => {
    const failure = { kind: 'http', status: 503 } as const;
    expect(decideRetry({ ...base, attempt: DEFAULT_RETRY_POLICY.maxAttempts - 1, failure }).retry).toBe(true);
    expect(decideRetry({ ...base, attempt: DEFAULT_RETRY_POLICY.maxAttempts, failure })).toMatchObject({
      retry: false,
      reason: expect.stringMatching(/gave up/),
    });
  });

  it('backs off exponentially with jitter, within [step/2, step] and never above the cap', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (attempt, r) => {
        const step = Math.min(DEFAULT_RETRY_POLICY.maxDelayMs, DEFAULT_RETRY_POLICY.baseDelayMs * 2 ** (attempt - 1));
        const d = backoffMs(attempt, r);
        return d >= Math.floor(step / 2) && d <= step;
      }),
    );
    expect(backoffMs(1, 0)).toBe(125);
    expect(backoffMs(2, 0.999999)).toBe(500);
    expect(backoffMs(3, 0)).toBe(500);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-03-01T12:00:00Z');
  it('reads seconds', () => {
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('1.5', now)).toBe(1500);
  });
  it('reads an HTTP date as the time left until it', () => {
    expect(parseRetryAfter('Sat, 01 Mar 2025 12:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Sat, 01 Mar 2025 11:00:00 GMT', now)).toBe(0);
  });
  it('ignores absent or unreadable values', () => {
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-1', now)).toBeUndefined();
  });
});

describe('a host name that does not resolve', () => {
  it('is not retried when the name is unknown, and once when the resolver says try again', () => {
    const base = { attempt: 1, random: 0.5, resendSafe: true } as const;
    expect(decideRetry({ ...base, failure: { kind: 'network', beforeSend: true, unresolved: 'unknown' } }).retry).toBe(false);
    expect(decideRetry({ ...base, failure: { kind: 'network', beforeSend: true, unresolved: 'busy' } }).retry).toBe(true);
    expect(decideRetry({ ...base, attempt: 2, failure: { kind: 'network', beforeSend: true, unresolved: 'busy' } }).retry).toBe(false);
  });

  // .invalid never resolves (RFC 6761): the local resolver answers, no packet leaves for the host.
  it('fails on the first attempt, naming the host, when the client is pointed at it', async () => {
    let waits = 0;
    const client = new PayoutClient({
      baseUrl: 'http://no-such-host.invalid:8080',
      apiKey: 'sk_sandbox_acme_primary',
      sleep: async () => void waits++,
    });
    const e = await client.listMethods({ sourceCurrency: 'USD', destinationCurrency: 'EUR', destinationCountryCode: 'DEU' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(PayoutApiError);
    const err = e as PayoutApiError;
    // (EAI_AGAIN where the resolver itself is unreachable: then one more attempt, never eight)
    expect(err.message).toContain('no-such-host.invalid');
    expect(err.attempts).toBeLessThanOrEqual(2);
    expect(waits).toBeLessThanOrEqual(1);
    expect(err.outcome).toBe('definitive');
  });
});

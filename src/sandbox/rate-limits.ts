// Spec §8: 5 requests per second and 10,000 per month, per API key; over either, 429. Readings: a
// rolling 1000 ms window; the calendar month in UTC; a 429 of the limits counts nowhere, every other
// answer counts (as a gateway counts what it passed on), a 401/403 has no key to count; Retry-After in
// whole seconds, until the oldest request leaves the window (at least 1) or the next month starts.
// The month's counts are the service's, kept in the state between commands of --env local (start-sandbox.ts).
import { createHash } from 'node:crypto';
import { MONTHLY_QUOTA, RATE_LIMIT_PER_SECOND } from '../spec/codes.ts';
import type { SandboxOptions } from './contract.ts';
import { ApiError, apiError } from './http.ts';

/** Spec §8: 429 "retry with backoff"; body and code not shown: RATE_LIMIT_EXCEEDED or MONTHLY_QUOTA_EXCEEDED, Retry-After in seconds. */
export function tooManyRequests(limit: 'rate' | 'quota', retryAfterMs: number): ApiError {
  const e =
    limit === 'quota'
      ? apiError(429, 'MONTHLY_QUOTA_EXCEEDED', 'Monthly request quota exceeded for this API key')
      : apiError(429, 'RATE_LIMIT_EXCEEDED', 'Too many requests for this API key; retry with backoff');
  return new ApiError(429, e.body, { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) });
}

const monthOf = (at: number): string => new Date(at).toISOString().slice(0, 7);
const nextMonthStart = (at: number): number => {
  const d = new Date(at);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
};

export class Limits {
  private readonly windows = new Map<string, number[]>();
  /** By the API key's hash: the state file holds no key. */
  readonly months = new Map<string, { month: string; count: number }>();

  constructor(private readonly settings: Pick<SandboxOptions, 'rateLimitPerSecond' | 'monthlyQuota'>) {}

  /** A request under `key` at `at`: its 429, or null when admitted, which counts it. */
  admit(key: string, at: number): ApiError | null {
    const { rateLimitPerSecond: perSecond = RATE_LIMIT_PER_SECOND, monthlyQuota: quota = MONTHLY_QUOTA } = this.settings;
    const hash = createHash('sha256').update(key).digest('hex');
    const month = this.months.get(hash);
    const used = month?.month === monthOf(at) ? month.count : 0;
    if (quota !== null && used >= quota) return tooManyRequests('quota', nextMonthStart(at) - at);
    let w = this.windows.get(key);
    if (!w) this.windows.set(key, (w = []));
    while (w.length && (w[0] ?? 0) <= at - 1000) w.shift();
    if (perSecond !== null && w.length >= perSecond) {
      const oldest = w[w.length - perSecond] ?? at;
      return tooManyRequests('rate', oldest + 1000 - at);
    }
    w.push(at);
    this.months.set(hash, { month: monthOf(at), count: used + 1 });
    return null;
  }
}

// Whether and when to send a request again: one small pure function, called by the transport and
// by tests directly. Nothing here reads a clock or a random source: both come in as arguments.

export type AttemptFailure =
  | { kind: 'http'; status: number; retryAfterMs?: number }
  | { kind: 'timeout' }
  /**
   * beforeSend: the connection was never made (refused, DNS): the service saw nothing. unresolved:
   * the host's name did not resolve, 'unknown' (ENOTFOUND: no such name) or 'busy' (EAI_AGAIN).
   */
  | { kind: 'network'; beforeSend: boolean; unresolved?: 'unknown' | 'busy' };

export interface RetryPolicy {
  /** Total attempts including the first. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited out: the call fails (a monthly quota, say). */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 8,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
};

export interface RetryInput {
  failure: AttemptFailure;
  /** The attempt that just failed, from 1. */
  attempt: number;
  /**
   * May this request be sent again when its effect is unknown? True for read-only routes, for
   * initiate and swap (same Idempotency-Key, same bytes) and for routes idempotent by nature.
   */
  resendSafe: boolean;
  /** A number in [0, 1), the jitter. */
  random: number;
  policy?: RetryPolicy;
}

export type RetryDecision = { retry: true; delayMs: number; reason: string } | { retry: false; reason: string };

/** Exponential backoff with "equal jitter": half the step fixed, half random. */
export function backoffMs(attempt: number, random: number, policy: RetryPolicy = DEFAULT_RETRY_POLICY): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(step / 2 + (step / 2) * random);
}

export function decideRetry(input: RetryInput): RetryDecision {
  const policy = input.policy ?? DEFAULT_RETRY_POLICY;
  const { failure, attempt } = input;
  if (attempt >= policy.maxAttempts) return { retry: false, reason: `gave up after ${attempt} attempts` };
  const backoff = backoffMs(attempt, input.random, policy);

  switch (failure.kind) {
    case 'http': {
      const s = failure.status;
      if (s === 429) {
        // The service did not act; any route may be sent again, after the wait it asked for.
        if (failure.retryAfterMs !== undefined) {
          if (failure.retryAfterMs > policy.maxRetryAfterMs) {
            return { retry: false, reason: `the service asks to wait ${Math.ceil(failure.retryAfterMs / 1000)} s (monthly quota?)` };
          }
          return { retry: true, delayMs: Math.max(failure.retryAfterMs, 0), reason: '429, waiting as Retry-After asks' };
        }
        return { retry: true, delayMs: backoff, reason: '429, backing off' };
      }
      if (s >= 500) {
        if (!input.resendSafe) return { retry: false, reason: `${s} on a route that is not safe to resend` };
        return { retry: true, delayMs: backoff, reason: `${s}, backing off` };
      }
      // The service's refusal is final. A 408/425/499 or a 4xx of something in front of the service
      // (definitive.ts: an unknown outcome on a mutating route) is not resent here either: such an
      // answer is seldom over in seconds, and the engine resends an initiate with the same key and
      // bytes in its settle passes and on the next run.
      return { retry: false, reason: `${s} is not resent by the client` };
    }
    case 'timeout':
      if (!input.resendSafe) return { retry: false, reason: 'timeout on a route that is not safe to resend' };
      return { retry: true, delayMs: backoff, reason: 'timeout, backing off' };
    case 'network':
      // A name that does not exist will not exist in 18 s either (a typo in --base-url, a host
      // off the network); a resolver that answered "try again" gets one more chance.
      if (failure.unresolved === 'unknown') return { retry: false, reason: 'the host name does not resolve' };
      if (failure.unresolved === 'busy' && attempt >= 2)
        return { retry: false, reason: `the host name did not resolve in ${attempt} attempts` };
      if (!failure.beforeSend && !input.resendSafe) {
        return { retry: false, reason: 'connection lost on a route that is not safe to resend' };
      }
      return { retry: true, delayMs: backoff, reason: 'network error, backing off' };
  }
}

/**
 * Retry-After (RFC 9110 §10.2.3): a number of seconds or an HTTP date. Returns milliseconds from
 * `nowMs`, 0 for a date in the past, undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value == null) return undefined;
  const v = value.trim();
  if (v === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  // Only the date forms HTTP allows: IMF-fixdate and the two obsolete ones all name a weekday or GMT.
  if (!/[A-Za-z]/.test(v)) return undefined;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

// Whether and when to send a request again: pure, the clock and the random source come in as arguments.

export type AttemptFailure =
  | { kind: 'http'; status: number; retryAfterMs?: number }
  | { kind: 'timeout' }
  /** beforeSend: the service saw nothing. unresolved: ENOTFOUND is 'unknown', EAI_AGAIN 'busy'. */
  | { kind: 'network'; beforeSend: boolean; unresolved?: 'unknown' | 'busy' };

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A longer Retry-After (a monthly quota, say) fails the call. */
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
  /** From 1. */
  attempt: number;
  /** May it be sent again when its effect is unknown (read-only, idempotent by nature or by its key)? */
  resendSafe: boolean;
  /** [0, 1) */
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
        // the service did not act: any route may be sent again
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
      // A 408/425/499 or an intermediary's 4xx is seldom over in seconds: the engine resends in its settle passes.
      return { retry: false, reason: `${s} is not resent by the client` };
    }
    case 'timeout':
      if (!input.resendSafe) return { retry: false, reason: 'timeout on a route that is not safe to resend' };
      return { retry: true, delayMs: backoff, reason: 'timeout, backing off' };
    case 'network':
      // A name that does not exist will not in 18 s either; a resolver's "try again" gets one more chance.
      if (failure.unresolved === 'unknown') return { retry: false, reason: 'the host name does not resolve' };
      if (failure.unresolved === 'busy' && attempt >= 2)
        return { retry: false, reason: `the host name did not resolve in ${attempt} attempts` };
      if (!failure.beforeSend && !input.resendSafe) {
        return { retry: false, reason: 'connection lost on a route that is not safe to resend' };
      }
      return { retry: true, delayMs: backoff, reason: 'network error, backing off' };
  }
}

/** Retry-After (RFC 9110 §10.2.3), seconds or an HTTP date, as ms from `nowMs` (0 for the past). */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value == null) return undefined;
  const v = value.trim();
  if (v === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  // HTTP's date forms all name a weekday or GMT
  if (!/[A-Za-z]/.test(v)) return undefined;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

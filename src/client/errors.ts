// One error type for everything that goes wrong between the tool and the service, in the style of
// stripe-node and openai-node: the HTTP status and the spec's error code when there was an answer,
// the route, the x-request-id to quote to support, and the one fact the engine acts on: whether the
// service certainly did not act ('definitive') or may have acted ('unknown').
import type { ZodError } from 'zod';
import type { FieldError } from '../spec/schemas.ts';

/**
 * 'definitive': the service certainly did not act. The service's own refusal (its error body with
 *   a 4xx, or a 429: definitive.ts has the table), a failure before the request left this process
 *   (connection refused, DNS, a body the client itself refused), and every failure of a read-only
 *   route (a GET or a quote has no effect to be unsure about).
 * 'unknown': the request may have reached the service and had its effect: on a mutating route a
 *   timeout, a dropped connection, a 5xx, a 408/425/499, a 4xx without the service's error body
 *   (an HTML page of a proxy or gateway), or a 2xx whose body does not match the spec.
 *   For initiate and swap the remedy is to resend the same Idempotency-Key with the same bytes.
 */
export type Outcome = 'definitive' | 'unknown';

/** 'http': a non-2xx answer; 'invalid-response': a 2xx whose body does not match the spec; 'invalid-request': not sent, the body does not match it. */
export type FailureKind = 'http' | 'timeout' | 'network' | 'aborted' | 'invalid-response' | 'invalid-request';

export class PayoutApiError extends Error {
  override readonly name = 'PayoutApiError';
  readonly kind: FailureKind;
  readonly outcome: Outcome;
  /** HTTP status; undefined when there was no answer. */
  readonly status: number | undefined;
  /** The spec's error code (§7) from the body's `error` field; undefined when the body has none. */
  readonly code: string | undefined;
  readonly fieldErrors: FieldError[];
  /** The client's route name (the spec's words: initiate, getPayout, ...). */
  readonly route: string;
  readonly method: string;
  readonly path: string;
  /** The x-request-id sent with (and, when echoed, answered to) the failing request. */
  readonly requestId: string;
  /** Milliseconds the service asked us to wait (Retry-After), when it did. */
  readonly retryAfterMs: number | undefined;
  /** How many times the request was sent (retries included). */
  readonly attempts: number;

  constructor(init: PayoutApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.outcome = init.outcome;
    this.status = init.status;
    this.code = init.code;
    this.fieldErrors = init.fieldErrors ?? [];
    this.route = init.route;
    this.method = init.method;
    this.path = init.path;
    this.requestId = init.requestId;
    this.retryAfterMs = init.retryAfterMs;
    this.attempts = init.attempts ?? 1;
  }

  /**
   * The service cannot be used now, through no fault of the request: the key refused (401/403,
   * spec §5), the rate limit or quota outlasting the retries (429, spec §8), the service
   * unreachable or failing (network, timeout, 5xx after retries), or the caller's abort. A batch
   * stops on it; resuming is safe.
   */
  get serviceTrouble(): boolean {
    const s = this.status;
    if (s === 401 || s === 403 || s === 429 || (s !== undefined && s >= 500)) return true;
    return this.kind === 'network' || this.kind === 'timeout' || this.kind === 'aborted';
  }

  /** 409 IDEMPOTENCY_KEY_CONFLICT: the key was used with another body (spec §4.2 rule 2). */
  get conflict(): boolean {
    return this.status === 409;
  }

  /** The client refused the request before it left this process: the service never saw it. */
  get notSent(): boolean {
    return this.kind === 'invalid-request';
  }

  /** A plain object for logs, results and journals. Holds no secret: the key never enters an error. */
  toJSON(): Record<string, unknown> {
    return Object.fromEntries(JSON_FIELDS.map((k) => [k, this[k]]));
  }
}

/** What an error is made of: its fields (status, code, field errors, Retry-After and attempts optional), message and cause. */
export type PayoutApiErrorInit = Pick<PayoutApiError, 'kind' | 'outcome' | 'route' | 'method' | 'path' | 'requestId'> &
  Partial<Pick<PayoutApiError, 'status' | 'code' | 'fieldErrors' | 'retryAfterMs' | 'attempts'>> & { message: string; cause?: unknown };

/** The fields of an error as a plain object, in the order it has always been written out. */
const JSON_FIELDS = 'name kind outcome status code message fieldErrors route method path requestId retryAfterMs attempts'.split(' ') as (
  keyof PayoutApiErrorInit | 'name'
)[];

/** Zod issues as {field, message}, the field written as a dotted path ("data.0.status"). */
export function zodFieldErrors(error: ZodError): FieldError[] {
  return error.issues.map((i) => ({
    field: i.path.length ? i.path.map(String).join('.') : '(root)',
    message: i.message,
  }));
}

export const KEY_PROPAGATION_MESSAGE =
  'the service answered 403 Forbidden: a newly generated API key needs 20 to 30 minutes to propagate ' +
  '(spec §5); if the key is new, wait and try again, otherwise check its permissions';

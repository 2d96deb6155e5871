// One error for everything between the tool and the service; the engine acts on `outcome`.
import type { ZodError } from 'zod';
import type { FieldError } from '../spec/schemas.ts';

/**
 * 'definitive': the service certainly did not act: its own refusal (definitive.ts), a failure before
 *   the request left, any failure of a read-only route. 'unknown': it may have acted; for initiate
 *   and swap, resend the same Idempotency-Key with the same bytes.
 */
export type Outcome = 'definitive' | 'unknown';

export class PayoutApiError extends Error {
  override readonly name = 'PayoutApiError';
  /** 'invalid-response': a 2xx not matching the spec; 'invalid-request': not sent, the body does not match it. */
  declare readonly kind: 'http' | 'timeout' | 'network' | 'aborted' | 'invalid-response' | 'invalid-request';
  declare readonly outcome: Outcome;
  declare readonly status: number | undefined;
  /** Spec §7, from the body's `error` field. */
  declare readonly code: string | undefined;
  declare readonly fieldErrors: FieldError[];
  /** In the spec's words: initiate, getPayout, ... */
  declare readonly route: string;
  declare readonly method: string;
  declare readonly path: string;
  declare readonly requestId: string;
  declare readonly retryAfterMs: number | undefined;
  declare readonly attempts: number;

  constructor(init: PayoutApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    const { kind, outcome, status, code, fieldErrors = [], route, method, path, requestId, retryAfterMs, attempts = 1 } = init;
    Object.assign(this, { kind, outcome, status, code, fieldErrors, route, method, path, requestId, retryAfterMs, attempts });
  }

  /** The service cannot be used now, through no fault of the request (spec §5, §8): a batch stops; resuming is safe. */
  get serviceTrouble(): boolean {
    const s = this.status;
    if (s === 401 || s === 403 || s === 429 || (s !== undefined && s >= 500)) return true;
    return this.kind === 'network' || this.kind === 'timeout' || this.kind === 'aborted';
  }

  /** 409 IDEMPOTENCY_KEY_CONFLICT: the key was used with another body (spec §4.2 rule 2). */
  get conflict(): boolean {
    return this.status === 409;
  }

  get notSent(): boolean {
    return this.kind === 'invalid-request';
  }

  /** Holds no secret: the key never enters an error. */
  toJSON(): Record<string, unknown> {
    return Object.fromEntries(JSON_FIELDS.map((k) => [k, this[k]]));
  }
}

export type PayoutApiErrorInit = Pick<PayoutApiError, 'kind' | 'outcome' | 'route' | 'method' | 'path' | 'requestId'> &
  Partial<Pick<PayoutApiError, 'status' | 'code' | 'fieldErrors' | 'retryAfterMs' | 'attempts'>> & { message: string; cause?: unknown };

const JSON_FIELDS = 'name kind outcome status code message fieldErrors route method path requestId retryAfterMs attempts'.split(' ') as (
  keyof PayoutApiErrorInit | 'name'
)[];

/** The field as a dotted path ("data.0.status"). */
export function zodFieldErrors(error: ZodError): FieldError[] {
  return error.issues.map((i) => ({
    field: i.path.length ? i.path.map(String).join('.') : '(root)',
    message: i.message,
  }));
}

export const KEY_PROPAGATION_MESSAGE =
  'the service answered 403 Forbidden: a newly generated API key needs 20 to 30 minutes to propagate ' +
  '(spec §5); if the key is new, wait and try again, otherwise check its permissions';

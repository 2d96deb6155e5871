// Answers of the sandbox as values. A handler returns a Reply; a helper that can fail returns its
// value or an ApiError (never throws), so every refusal carries the spec's status and code.
import type { z } from 'zod';
import type { ErrorBody } from '../spec/schemas.ts';
import type { ErrorCode } from '../spec/codes.ts';

/**
 * Codes the spec's table (§7) lists, plus the ones the sandbox had to choose where the spec says
 * "not shown" (each documented in the README, "Readings of the spec").
 */
export type SandboxErrorCode =
  | ErrorCode
  | 'PROHIBITED_DESTINATION'
  | 'NO_ENABLED_PAIRS'
  | 'CURRENCY_PAIR_NOT_FOUND'
  | 'WEBHOOK_ALREADY_REGISTERED'
  | 'WEBHOOK_NOT_FOUND'
  | 'RATE_LIMIT_EXCEEDED'
  | 'MONTHLY_QUOTA_EXCEEDED'
  | 'INVALID_TRANSITION'
  | 'NOT_FOUND';

export interface Reply {
  status: number;
  /** Serialised as JSON; undefined sends no body. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Set by the creating routes (initiate, swap) when this request created the record. */
  created?: boolean;
}

export interface FieldError {
  field: string;
  message: string;
}

export class ApiError implements Reply {
  readonly body: ErrorBody;
  constructor(
    readonly status: number,
    body: ErrorBody,
    readonly headers?: Record<string, string>,
  ) {
    this.body = body;
  }
}

export const isApiError = (v: unknown): v is ApiError => v instanceof ApiError;

/** Spec §7 error body {statusCode, message, error}, with field errors when there are some. */
// `error`: a SandboxErrorCode, or a code of the spec the sandbox answers with as it is.
export function apiError(status: number, error: string, message: string, errors?: FieldError[]): ApiError {
  return new ApiError(status, { statusCode: status, message, error, ...(errors && errors.length ? { errors } : {}) });
}

/** Spec §5.4 and §7: a 401 body has only statusCode and message. */
export const unauthorized = (): ApiError => new ApiError(401, { statusCode: 401, message: 'Unauthorized' });

/**
 * Spec §5.3: 403 during key propagation. Body "not shown": NestJS's ForbiddenException shape, whose
 * `error` is the reason phrase.
 */
export const forbidden = (): ApiError =>
  new ApiError(403, { statusCode: 403, message: 'Forbidden: the API key is still propagating', error: 'Forbidden' });

export function validationError(errors: FieldError[], message?: string): ApiError {
  return apiError(400, 'VALIDATION_ERROR', message ?? errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors);
}

/** zod issues as the field errors of a VALIDATION_ERROR body. */
export function fieldErrorsOf(error: z.ZodError, prefix = ''): FieldError[] {
  return error.issues.map((i) => ({
    field: [prefix, ...i.path.map(String)].filter(Boolean).join('.') || '(body)',
    message: i.message,
  }));
}

/** Parses with a zod schema, answering VALIDATION_ERROR with one field error per issue. */
export function parseWith<T extends z.ZodType>(schema: T, value: unknown, prefix = ''): z.infer<T> | ApiError {
  const r = schema.safeParse(value);
  return r.success ? r.data : validationError(fieldErrorsOf(r.error, prefix));
}

export const notFound = (code: SandboxErrorCode, what: string): ApiError => apiError(404, code, `${what} not found`);

export const ok = (body: unknown, status = 200): Reply => ({ status, body });

// A request as a handler reads it, and the answers: a handler returns a Reply; a refusal below it throws an
// ApiError, answered as it is.
import type { IncomingHttpHeaders } from 'node:http';
import type { z } from 'zod';
import type { ErrorBody, FieldError } from '../spec/schemas.ts';
import type { Business } from './store.ts';

export interface Request {
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: unknown;
  rawBody: Buffer;
  /** Counted even past the size limit. */
  bodySize: number;
  business: Business;
}

export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const s = [headers[name.toLowerCase()]].flat()[0]?.trim();
  return s || undefined;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** The id of the record this request created (initiate, swap). */
  created?: string;
}

export class ApiError extends Error implements Reply {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    readonly headers?: Record<string, string>,
  ) {
    super(String(body.message));
  }
}

/** Spec §7 {statusCode, message, error}, with field errors; `error` is the spec's code or the sandbox's reading. */
export function apiError(status: number, error: string, message: string, errors?: FieldError[]): ApiError {
  return new ApiError(status, { statusCode: status, message, error, ...(errors && errors.length ? { errors } : {}) });
}

/** Spec §5.4 and §7: a 401 body has only statusCode and message. */
export const unauthorized = (): ApiError => new ApiError(401, { statusCode: 401, message: 'Unauthorized' });

/** Spec §5.3: 403 during key propagation; body "not shown": NestJS's ForbiddenException. */
export const forbidden = (): ApiError => apiError(403, 'Forbidden', 'Forbidden: the API key is still propagating');

export function validationError(errors: FieldError[]): ApiError {
  return apiError(400, 'VALIDATION_ERROR', errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors);
}

export const fieldError = (field: string, message: string): ApiError => validationError([{ field, message }]);

/** 400 VALIDATION_ERROR of every field given a problem, when any is. */
export function checkFields(problems: Record<string, string | undefined>): void {
  const errors = Object.entries(problems).flatMap(([field, message]) => (message === undefined ? [] : [{ field, message }]));
  if (errors.length) throw validationError(errors);
}

export function parseWith<T extends z.ZodType>(schema: T, value: unknown, prefix = ''): z.infer<T> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw validationError(
    r.error.issues.map((i) => ({ field: [prefix, ...i.path.map(String)].filter(Boolean).join('.') || '(body)', message: i.message })),
  );
}

export function found<T extends { businessId: string }>(map: Map<string, T>, id = '', code: string, what: string, businessId?: string): T {
  const r = map.get(id);
  if (r && (businessId === undefined || r.businessId === businessId)) return r;
  throw apiError(404, code, `${what} not found`);
}

export const ok = (body: unknown, status = 200): Reply => ({ status, body });

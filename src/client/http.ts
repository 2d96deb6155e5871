// The one way a request leaves the tool: concurrency slot -> rate slot -> fetch with a timeout ->
// read and validate the body -> a typed value or one PayoutApiError; retried as decideRetry says.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { LimitFunction } from 'p-limit';
import type { z } from 'zod';
import { ErrorBody } from '../spec/schemas.ts';
import { API_KEY_HEADER, REQUEST_ID_HEADER } from '../spec/http.ts';
import type { ApiKey } from './api-key.ts';
import { KEY_PROPAGATION_MESSAGE, PayoutApiError, zodFieldErrors, type FailureKind, type FieldError, type Outcome } from './errors.ts';
import { decideRetry, parseRetryAfter, type AttemptFailure, type RetryPolicy } from './retry.ts';
import { NEVER_DEFINITIVE, SPEC_CODE, describeForeignBody, errorOutcome } from './definitive.ts';
import type { Slot, SlidingWindowLimiter } from './throttle.ts';
import type { UsageCounter } from './quota.ts';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** Progress the client reports; the CLI may show it, the engine may journal it. */
export type ClientEvent =
  | { type: 'response'; route: string; method: string; path: string; status: number; requestId: string; attempt: number; ms: number }
  | { type: 'retry'; route: string; requestId: string; attempt: number; delayMs: number; reason: string }
  | { type: 'rate-limited'; route: string; requestId: string; retryAfterMs: number | undefined };

export interface TransportOptions {
  baseUrl: string;
  apiKey: ApiKey;
  limiter: SlidingWindowLimiter;
  concurrency: LimitFunction;
  timeoutMs: number;
  retry: RetryPolicy;
  usage: UsageCounter | undefined;
  fetch: typeof fetch;
  logger: Logger | undefined;
  random: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  onEvent: ((e: ClientEvent) => void) | undefined;
  userAgent: string;
  /** Called after the first 2xx: the key works here. */
  onKeyWorks: (() => void) | undefined;
}

export interface CallSpec<T> {
  route: string;
  method: HttpMethod;
  /** Path and query below the base URL, or an absolute URL when `absolute`. */
  path: string;
  absolute?: boolean;
  /** The exact bytes to send; serialised once by the caller, resent unchanged on every attempt. */
  body?: Uint8Array;
  contentType?: string;
  headers?: Record<string, string>;
  /** Schema of a 2xx body; null: the body is ignored. */
  schema: z.ZodType<T> | null;
  /** Whether the route changes anything at the service (decides 'unknown' outcomes). */
  mutating: boolean;
  /** Whether it may be sent again when its effect is unknown. */
  resendSafe: boolean;
  /** Whether to send the API key, x-request-id, and count the request against the key's pace. */
  authenticated?: boolean;
  /** Statuses that count as success; any 2xx when absent. */
  expectStatus?: number[];
  requestId?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface CallResult<T> {
  data: T;
  status: number;
  /** The x-request-id of the call: the one sent (the service echoes it, spec §5). */
  requestId: string;
  /** How many times it was sent. */
  attempts: number;
}

/** Connection errors raised before any byte of the request could reach the service. */
const BEFORE_SEND_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_INVALID_URL',
]);

function errorCode(e: unknown): string | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 5 && cur && typeof cur === 'object'; i++) {
    const c = (cur as { code?: unknown }).code;
    if (typeof c === 'string') return c;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

export const defaultSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

type AttemptResult<T> = { ok: true; result: CallResult<T> } | { ok: false; error: PayoutApiError; failure: AttemptFailure | undefined };

/** How long an idle keep-alive connection may be kept open (undici's default is 4 s): after a longer gap, assume none is. */
const KEEP_ALIVE_MS = 4000;

export class Transport {
  // For dating starts (see "warming" below): requests in flight now; the most that were in
  // flight at once when one of them was answered, i.e. connections known open; the last answer.
  private inFlight = 0;
  private openConnections = 0;
  private lastAnswerAt = -Infinity;

  constructor(readonly options: TransportOptions) {}

  async call<T>(spec: CallSpec<T>): Promise<CallResult<T>> {
    const requestId = spec.requestId ?? randomUUID();
    const authenticated = spec.authenticated ?? true;
    let anyUnknown = false;
    for (let attempt = 1; ; attempt++) {
      const r = await this.attempt(spec, requestId, attempt, authenticated);
      if (r.ok) return r.result;
      const { error, failure } = r;
      if (error.outcome === 'unknown') anyUnknown = true;
      if (failure?.kind === 'http' && failure.status === 429 && authenticated) {
        this.options.limiter.penalize();
        this.options.onEvent?.({ type: 'rate-limited', route: spec.route, requestId, retryAfterMs: failure.retryAfterMs });
      }
      const decision = failure
        ? decideRetry({ failure, attempt, resendSafe: spec.resendSafe, random: this.options.random(), policy: this.options.retry })
        : ({ retry: false, reason: error.kind } as const);
      if (!decision.retry || spec.signal?.aborted) {
        // Once an attempt may have acted, no later answer can prove that nothing happened.
        const final = anyUnknown && error.outcome === 'definitive' ? reclassify(error, 'unknown') : error;
        throw final.withAttempts(attempt);
      }
      this.options.logger?.warn(
        { route: spec.route, requestId, attempt, delayMs: decision.delayMs, status: error.status, kind: error.kind },
        `retrying ${spec.route}: ${decision.reason}`,
      );
      this.options.onEvent?.({ type: 'retry', route: spec.route, requestId, attempt, delayMs: decision.delayMs, reason: decision.reason });
      try {
        await this.options.sleep(decision.delayMs, spec.signal);
      } catch {
        throw reclassify(error, anyUnknown ? 'unknown' : error.outcome, 'aborted').withAttempts(attempt);
      }
    }
  }

  private url(spec: CallSpec<unknown>): string {
    return spec.absolute ? spec.path : this.options.baseUrl + spec.path;
  }

  /** The path as shown in errors and logs: no query values of absolute (presigned) URLs. */
  private shownPath(spec: CallSpec<unknown>): string {
    if (!spec.absolute) return spec.path;
    try {
      const u = new URL(spec.path);
      return u.origin + u.pathname;
    } catch {
      return '(upload URL)';
    }
  }

  private async attempt<T>(spec: CallSpec<T>, requestId: string, attempt: number, authenticated: boolean): Promise<AttemptResult<T>> {
    const o = this.options;
    const path = this.shownPath(spec);
    const fail = (
      init: {
        kind: FailureKind;
        message: string;
        outcome: Outcome;
        status?: number;
        code?: string;
        fieldErrors?: FieldError[];
        retryAfterMs?: number;
        cause?: unknown;
      },
      failure: AttemptFailure | undefined,
    ): AttemptResult<T> => ({
      ok: false,
      failure,
      // Every text of an error may hold what the service echoed, the key included: scrubbed here,
      // once, before it can reach a log, the journal, a results file or stderr.
      error: new PayoutApiError({
        ...init,
        message: o.apiKey.scrub(`${spec.route} (${spec.method} ${path}): ${init.message} [x-request-id ${requestId}]`),
        code: init.code === undefined ? undefined : o.apiKey.scrub(init.code),
        fieldErrors: init.fieldErrors && o.apiKey.scrubDeep(init.fieldErrors),
        route: spec.route,
        method: spec.method,
        path,
        requestId,
        attempts: attempt,
      }),
    });

    return o.concurrency(async (): Promise<AttemptResult<T>> => {
      let slot: Slot | undefined;
      try {
        if (authenticated) slot = await o.limiter.acquire(spec.signal);
        else if (spec.signal?.aborted) throw spec.signal.reason;
      } catch (cause) {
        return fail({ kind: 'aborted', message: 'cancelled before sending', outcome: 'definitive', cause }, undefined);
      }
      if (authenticated) o.usage?.count(o.apiKey.fingerprint);

      const headers: Record<string, string> = { ...spec.headers };
      if (authenticated) {
        headers['accept'] = 'application/json';
        headers['user-agent'] = o.userAgent;
        headers[REQUEST_ID_HEADER] = requestId;
        headers[API_KEY_HEADER] = o.apiKey.reveal();
        if (spec.body && spec.contentType) headers['content-type'] = spec.contentType;
      }

      const timeoutMs = spec.timeoutMs ?? o.timeoutMs;
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(new Error('timeout')), timeoutMs);
      const signal = spec.signal ? AbortSignal.any([spec.signal, timeout.signal]) : timeout.signal;
      const started = performance.now();
      let status = 0;
      let text: string;
      let res: Response;
      // The start the pace counts is when the request is handed to the transport, whatever the
      // transport is; the margin absorbs the jitter until it reaches the service. A request that
      // may first have to open a connection (more in flight than have ever been answered at once,
      // or the first after an idle gap in which keep-alive connections close) can wait for it (30
      // ms on loopback, a TLS handshake remotely: more than the margin). Such a start is dated
      // again when its answer arrives, a time it cannot have reached the service after.
      if (this.inFlight === 0 && Date.now() - this.lastAnswerAt > KEEP_ALIVE_MS) this.openConnections = 0;
      const level = ++this.inFlight;
      const warming = slot !== undefined && level > this.openConnections;
      try {
        slot?.markSent();
        res = await o.fetch(this.url(spec), {
          method: spec.method,
          headers,
          body: spec.body as BodyInit | undefined,
          signal,
          // A redirect would carry the key to wherever it points: never follow one.
          redirect: 'manual',
        });
        if (warming) slot!.markSent();
        this.openConnections = Math.max(this.openConnections, level);
        this.lastAnswerAt = Date.now();
        status = res.status;
        text = await res.text();
      } catch (cause) {
        const unknownIfMutating: Outcome = spec.mutating ? 'unknown' : 'definitive';
        if (spec.signal?.aborted) {
          return fail(
            { kind: 'aborted', message: 'cancelled by the caller while in flight', outcome: unknownIfMutating, cause },
            undefined,
          );
        }
        if (timeout.signal.aborted) {
          const msg = `no complete answer within ${timeoutMs} ms` + (status ? ` (status ${status} arrived, body did not)` : '');
          return fail(
            { kind: 'timeout', message: msg, outcome: unknownIfMutating, status: status || undefined, cause },
            { kind: 'timeout' },
          );
        }
        const code = errorCode(cause);
        const beforeSend = status === 0 && code !== undefined && BEFORE_SEND_CODES.has(code);
        const msg = beforeSend
          ? `could not connect (${code}): nothing was sent`
          : `connection lost (${code ?? (cause instanceof Error ? cause.message : 'error')})` +
            (spec.mutating ? ': the service may or may not have acted' : '');
        return fail(
          { kind: 'network', message: msg, outcome: beforeSend ? 'definitive' : unknownIfMutating, cause },
          { kind: 'network', beforeSend },
        );
      } finally {
        this.inFlight--;
        clearTimeout(timer);
        slot?.done?.();
      }

      const ms = Math.round(performance.now() - started);
      // (sentAt: when the request was handed to fetch, on the wall clock every process shares: the start the pace counts)
      o.logger?.debug({ route: spec.route, method: spec.method, path, status, requestId, attempt, ms, sentAt: slot?.sentAt }, 'response');
      o.onEvent?.({ type: 'response', route: spec.route, method: spec.method, path, status, requestId, attempt, ms });

      const okStatus = spec.expectStatus ? spec.expectStatus.includes(status) : status >= 200 && status < 300;
      if (okStatus) {
        if (authenticated) o.onKeyWorks?.();
        if (spec.schema === null) return { ok: true, result: { data: undefined as T, status, requestId, attempts: attempt } };
        const invalid = (message: string, fieldErrors?: FieldError[]) =>
          fail({ kind: 'invalid-response', status, message, fieldErrors, outcome: spec.mutating ? 'unknown' : 'definitive' }, undefined);
        let json: unknown;
        try {
          // (an answer's strings go into the journal and the results file: no key in them either)
          json = text === '' ? undefined : o.apiKey.scrubDeep(JSON.parse(text));
        } catch {
          return invalid(`answered ${status} with a body that is not JSON`);
        }
        const parsed = spec.schema.safeParse(json);
        if (!parsed.success) {
          const fe = zodFieldErrors(parsed.error);
          const list = fe
            .slice(0, 5)
            .map((f) => `field "${f.field}": ${f.message}`)
            .join('; ');
          return invalid(`answered ${status} with a body that does not match the spec: ${list}`, fe);
        }
        return { ok: true, result: { data: parsed.data, status, requestId, attempts: attempt } };
      }

      // An error answer.
      let body: ErrorBody | undefined;
      try {
        const p = ErrorBody.safeParse(o.apiKey.scrubDeep(JSON.parse(text)));
        if (p.success) body = p.data;
      } catch {
        body = undefined;
      }
      // Which answers are definitive (definitive.ts): only the service's own refusal says it did
      // not act; what an intermediary answered to a mutating route leaves the outcome unknown.
      const outcome = errorOutcome({ status, text, mutating: spec.mutating, fromService: authenticated });
      const foreign = outcome === 'unknown' && status < 500;
      const serverMessage = body
        ? Array.isArray(body.message)
          ? body.message.join('; ')
          : body.message
        : describeForeignBody(o.apiKey.scrub(text), res.headers.get('content-type'));
      // (a code is the service's only: an intermediary's body names none)
      const code = !foreign && body?.error && SPEC_CODE.test(body.error) ? body.error : undefined;
      const fieldErrors: FieldError[] = foreign
        ? []
        : (body?.errors ?? (Array.isArray(body?.message) ? body.message.map((m) => ({ field: '(body)', message: m })) : []));
      const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), Date.now());
      let message: string;
      if (foreign)
        message =
          `${status}: ${serverMessage}: ` +
          (NEVER_DEFINITIVE.has(status) || status < 400
            ? `a ${status} does not say whether the service acted`
            : "not the service's error body but the answer of something between us and the service (a proxy or gateway)") +
          ', so the service may or may not have acted (resend the same request to learn, never a new one)';
      else if (status === 401)
        message = `401 the service refused the API key (${serverMessage || 'Unauthorized'}): check that it belongs to this environment and was not revoked`;
      else if (status === 403 && authenticated)
        message = `403 ${KEY_PROPAGATION_MESSAGE}${serverMessage ? ` (service said: ${serverMessage})` : ''}`;
      else if (status === 429) message = `429 rate limit or monthly quota exceeded${serverMessage ? ` (${serverMessage})` : ''}`;
      else message = `${status}${code ? ` ${code}` : ''}: ${serverMessage || (status >= 500 ? 'server error' : 'request refused')}`;
      return fail({ kind: 'http', status, code, message, fieldErrors, retryAfterMs, outcome }, { kind: 'http', status, retryAfterMs });
    });
  }
}

function reclassify(e: PayoutApiError, outcome: Outcome, kind: FailureKind = e.kind): PayoutApiError {
  return new PayoutApiError({
    kind,
    outcome,
    message: e.message,
    route: e.route,
    method: e.method,
    path: e.path,
    requestId: e.requestId,
    status: e.status,
    code: e.code,
    fieldErrors: e.fieldErrors,
    retryAfterMs: e.retryAfterMs,
    attempts: e.attempts,
    cause: e.cause,
  });
}

import { randomUUID } from 'node:crypto';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Logger } from 'pino';
import * as z from 'zod';
import { ErrorBody, type FieldError } from '../spec/schemas.ts';
import { API_KEY_HEADER, REQUEST_ID_HEADER } from '../spec/endpoints.ts';
import { KEY_PROPAGATION_MESSAGE, PayoutApiError, zodFieldErrors, type Outcome, type PayoutApiErrorInit } from './errors.ts';
import { NEVER_DEFINITIVE, SPEC_CODE, describeForeignBody, errorOutcome, isServiceRefusal, jsonObject } from './definitive.ts';
import {
  SharedPace,
  SlidingWindowLimiter,
  defaultSafetyMarginMs,
  pacePath,
  paceName,
  type Clock,
  type PaceShare,
  type Slot,
} from './pace.ts';
import type { UsageCounter } from './quota.ts';
import { ApiKey, scrubDeep, scrubText, secretMatcher, type KeyEnvironment } from './api-key.ts';
import { RATE_LIMIT_PER_SECOND } from '../spec/codes.ts';
import { sleep } from '../sleep.ts';
import { attempt as orUndefined } from '../files/attempt.ts';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** Each answer (the CLI shows the pace); `storage`: the PUT to the document storage (spec §4.6). */
export type ClientEvent = { type: 'response'; route: string; status: number; requestId: string; ms: number; storage?: true };

export interface PayoutClientOptions {
  baseUrl: string;
  apiKey: ApiKey | string;
  /** Shared by every client of one key; absent: one paced with `sharedPace` (across hosts), else the state folder's (pace.ts). */
  limiter?: SlidingWindowLimiter;
  sharedPace?: (name: string, onError: (e: Error) => void) => PaceShare;
  /** Spec §8: 5. */
  requestsPerSecond?: number;
  safetyMarginMs?: number;
  clock?: Clock;
  /** Recorded with the key's fingerprint after a 2xx. */
  keyEnvironment?: KeyEnvironment;
  /** Requests in flight at once (default 8). */
  concurrency?: number;
  /** Per attempt, until the whole answer is read (default 30 s). */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  usage?: UsageCounter;
  logger?: Logger;
  onEvent?: (e: ClientEvent) => void;
  fetch?: typeof fetch;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
}

export interface RequestOptions {
  /** x-request-id, the same on every retry of the call; a fresh UUID when absent. */
  requestId?: string;
  signal?: AbortSignal;
}

export interface CallSpec<T> {
  route: string;
  method: HttpMethod;
  /** Below the base URL, or the document storage's absolute URL. */
  path: string;
  /** Serialised once by the caller, resent unchanged on every attempt. */
  body?: Uint8Array;
  headers?: Record<string, string>;
  /** null: the body is ignored. */
  schema: z.ZodType<T> | null;
  /** Changes anything at the service (decides 'unknown' outcomes); may be resent when unknown. */
  mutating: boolean;
  resendSafe: boolean;
  /** The PUT to the document storage (spec §4.6): no key nor x-request-id, outside the pace, answered 200. */
  storage?: boolean;
  /** What the body carries besides the key (a webhook's secret): scrubbed like the key from what the service answers. */
  secrets?: string[];
}

export interface CallResult<T> {
  data: T;
  status: number;
  /** The one sent (the service echoes it, spec §5). */
  requestId: string;
  attempts: number;
  /** The answer's HTTP Date: the service's clock (whole seconds), when it dates its answers. */
  date?: number;
}

export type AttemptFailure =
  | { kind: 'http'; status: number; retryAfterMs?: number }
  | { kind: 'timeout' }
  /** beforeSend: the service saw nothing. unresolved: ENOTFOUND is 'unknown', EAI_AGAIN 'busy'. */
  | { kind: 'network'; beforeSend: boolean; unresolved?: 'unknown' | 'busy' };

/** maxRetryAfterMs: a longer Retry-After (a monthly quota, say) fails the call. */
export const DEFAULT_RETRY_POLICY = { maxAttempts: 8, baseDelayMs: 250, maxDelayMs: 8_000, maxRetryAfterMs: 60_000 };
export type RetryPolicy = typeof DEFAULT_RETRY_POLICY;

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

export function decideRetry({ failure, attempt, resendSafe, random, policy = DEFAULT_RETRY_POLICY }: RetryInput): RetryDecision {
  const stop = (reason: string): RetryDecision => ({ retry: false, reason });
  const wait = (reason: string, delayMs = backoffMs(attempt, random, policy)): RetryDecision => ({ retry: true, delayMs, reason });
  if (attempt >= policy.maxAttempts) return stop(`gave up after ${attempt} attempts`);

  switch (failure.kind) {
    case 'http': {
      const { status: s, retryAfterMs: after } = failure;
      if (s === 429) {
        // the service did not act: any route may be sent again
        if (after === undefined) return wait('429, backing off');
        if (after > policy.maxRetryAfterMs) return stop(`the service asks to wait ${Math.ceil(after / 1000)} s (monthly quota?)`);
        return wait('429, waiting as Retry-After asks', Math.max(after, 0));
      }
      // A 408/425/499 or an intermediary's 4xx is seldom over in seconds: the engine resends in its settle passes.
      if (s < 500) return stop(`${s} is not resent by the client`);
      return resendSafe ? wait(`${s}, backing off`) : stop(`${s} on a route that is not safe to resend`);
    }
    case 'timeout':
      return resendSafe ? wait('timeout, backing off') : stop('timeout on a route that is not safe to resend');
    case 'network':
      // A name that does not exist will not in 18 s either; a resolver's "try again" gets one more chance.
      if (failure.unresolved === 'unknown') return stop('the host name does not resolve');
      if (failure.unresolved === 'busy' && attempt >= 2) return stop(`the host name did not resolve in ${attempt} attempts`);
      if (!failure.beforeSend && !resendSafe) return stop('connection lost on a route that is not safe to resend');
      return wait('network error, backing off');
  }
}

/** Retry-After (RFC 9110 §10.2.3), seconds or an HTTP date, as ms from `nowMs` (0 for the past). */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  // HTTP's date forms all name a weekday or GMT
  if (!/[A-Za-z]/.test(v)) return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** Raised before any byte could reach the service: no route or name, no connection, a certificate refused in the handshake. */
const BEFORE_SEND_CODES = new Set([
  ...['ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL'],
  ...['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'ERR_INVALID_URL', 'BAD_PORT'],
  ...['CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN'],
  ...['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'ERR_TLS_CERT_ALTNAME_INVALID'],
]);

/** The code of the error or of the first of its causes that has one (fetch wraps the socket's error). */
function errorCode(e: unknown, depth = 5): string | undefined {
  if (!e || typeof e !== 'object' || depth === 0) return undefined;
  const { code, cause } = e as { code?: unknown; cause?: unknown };
  return typeof code === 'string' ? code : errorCode(cause, depth - 1);
}

export const listFieldErrors = (fe: FieldError[]): string =>
  Array.from(fe.slice(0, 5), (f) => `field "${f.field}": ${f.message}`).join('; ');

/** The error body in every form definitive.ts takes as the service's own: statusCode as text or absent, no message. */
const OwnErrorBody = ErrorBody.extend({
  statusCode: z.union([z.number().int(), z.string()]).optional(),
  message: ErrorBody.shape.message.optional(),
});

type Hider = { text: (s: string) => string; deep: <V>(v: V) => V };
type Failure = Omit<PayoutApiErrorInit, 'route' | 'method' | 'path' | 'requestId' | 'attempts'>;
type AttemptResult<T> = { ok: true; result: CallResult<T> } | { ok: false; error: PayoutApiError; failure: AttemptFailure | undefined };

/** undici's keep-alive: after a longer gap, assume no connection is open. */
const KEEP_ALIVE_MS = 4000;
const USER_AGENT = 'payout-batch/0.1 (+node)';

export class Transport {
  readonly baseUrl: string;
  readonly apiKey: ApiKey;
  private readonly limiter: SlidingWindowLimiter;
  private readonly concurrency: LimitFunction;
  private readonly retry: RetryPolicy;
  private labelled = false;
  // For dating starts (see "warming" below): openConnections is the most in flight when one was answered.
  private inFlight = 0;
  private openConnections = 0;
  private lastAnswerAt = -Infinity;

  constructor(protected readonly o: PayoutClientOptions) {
    this.baseUrl = o.baseUrl.replace(/\/+$/, '');
    this.apiKey = typeof o.apiKey === 'string' ? new ApiKey(o.apiKey) : o.apiKey;
    const alone = (e: Error) => o.logger?.warn(`the request pace is not shared with other processes (${e.message}): this one paces alone`);
    this.limiter =
      o.limiter ??
      new SlidingWindowLimiter({
        perWindow: o.requestsPerSecond ?? RATE_LIMIT_PER_SECOND,
        safetyMarginMs: o.safetyMarginMs ?? defaultSafetyMarginMs(this.baseUrl),
        clock: o.clock,
        shared: o.sharedPace
          ? o.sharedPace(paceName(this.baseUrl, this.apiKey.fingerprint), alone)
          : o.usage?.stateDir
            ? new SharedPace(pacePath(o.usage.stateDir, this.baseUrl, this.apiKey.fingerprint), alone)
            : undefined,
      });
    this.concurrency = pLimit(o.concurrency ?? 8);
    this.retry = { ...DEFAULT_RETRY_POLICY, ...o.retry };
  }

  protected async call<T>(spec: CallSpec<T>, opts: RequestOptions = {}): Promise<CallResult<T>> {
    const requestId = opts.requestId ?? randomUUID();
    let anyUnknown = false;
    for (let attempt = 1; ; attempt++) {
      const r = await this.attempt(spec, opts, requestId, attempt);
      if (r.ok) return r.result;
      const { error, failure } = r;
      if (error.outcome === 'unknown') anyUnknown = true;
      if (failure?.kind === 'http' && failure.status === 429 && !spec.storage) this.limiter.penalize();
      const decision = failure
        ? decideRetry({ failure, attempt, resendSafe: spec.resendSafe, random: (this.o.random ?? Math.random)(), policy: this.retry })
        : ({ retry: false, reason: error.kind } as const);
      // Once an attempt may have acted, no later answer can prove that nothing happened.
      if (!decision.retry || opts.signal?.aborted) throw anyUnknown ? reclassify(error, 'unknown') : error;
      this.o.logger?.warn(
        { route: spec.route, requestId, attempt, delayMs: decision.delayMs, status: error.status, kind: error.kind },
        `retrying ${spec.route}: ${decision.reason}`,
      );
      try {
        await (this.o.sleep ?? sleep)(decision.delayMs, opts.signal);
      } catch {
        throw reclassify(error, anyUnknown ? 'unknown' : error.outcome, 'aborted');
      }
    }
  }

  /** The key's scrub, then the call's own secrets'. */
  private hider(spec: CallSpec<unknown>): Hider {
    const own = (spec.secrets ?? []).map(secretMatcher);
    return {
      text: (s) => own.reduce((t, m) => scrubText(t, m), this.apiKey.scrub(s)),
      deep: (v) => own.reduce((x, m) => scrubDeep(x, m), this.apiKey.scrubDeep(v)),
    };
  }

  private attempt<T>(spec: CallSpec<T>, opts: RequestOptions, requestId: string, attempt: number): Promise<AttemptResult<T>> {
    const path = shownPath(spec);
    const hide = this.hider(spec);
    const fail = (init: Failure, failure?: AttemptFailure): AttemptResult<T> => ({
      ok: false,
      failure,
      // Any text may echo the key: scrubbed here, once, before it reaches a log, journal, results or stderr.
      error: new PayoutApiError({
        ...init,
        message: hide.text(`${spec.route} (${spec.method} ${path}): ${init.message} [x-request-id ${requestId}]`),
        code: init.code === undefined ? undefined : hide.text(init.code),
        fieldErrors: init.fieldErrors && hide.deep(init.fieldErrors),
        route: spec.route,
        method: spec.method,
        path,
        requestId,
        attempts: attempt,
      }),
    });

    return this.concurrency(async (): Promise<AttemptResult<T>> => {
      let slot: Slot | undefined;
      try {
        if (!spec.storage) slot = await this.limiter.acquire(opts.signal);
        else if (opts.signal?.aborted) throw opts.signal.reason;
      } catch (cause) {
        return fail({ kind: 'aborted', message: 'cancelled before sending', outcome: 'definitive', cause });
      }
      if (slot) this.o.usage?.count(this.apiKey.fingerprint);
      const started = performance.now();
      const answer = await this.exchange(spec, opts, requestId, slot);
      if (!('text' in answer)) return fail(answer.error, answer.failure);
      const { status, text, headers } = answer;
      const ms = Math.round(performance.now() - started);
      // (sentAt: the start the pace counts, on the wall clock every process shares)
      this.o.logger?.debug(
        { route: spec.route, method: spec.method, path, status, requestId, attempt, ms, sentAt: slot?.sentAt },
        'response',
      );
      this.o.onEvent?.({ type: 'response', route: spec.route, status, requestId, ms, ...(spec.storage ? { storage: true } : {}) });

      const okStatus = spec.storage ? status === 200 : status >= 200 && status < 300;
      if (!okStatus) return fail(...this.errorAnswer(spec, status, text, headers, hide));
      if (!spec.storage && !this.labelled && this.o.usage && this.o.keyEnvironment) {
        this.labelled = true;
        this.o.usage.label(this.apiKey.fingerprint, this.o.keyEnvironment);
      }
      if (spec.schema === null) return { ok: true, result: { data: undefined as T, status, requestId, attempts: attempt } };
      const invalid = (message: string, fieldErrors?: FieldError[]) =>
        fail({ kind: 'invalid-response', status, message, fieldErrors, outcome: spec.mutating ? 'unknown' : 'definitive' });
      const json = text === '' ? undefined : orUndefined(() => hide.deep(JSON.parse(text) as unknown));
      if (json === undefined && text !== '') return invalid(`answered ${status} with a body that is not JSON`);
      const parsed = spec.schema.safeParse(json);
      if (!parsed.success) {
        const fe = zodFieldErrors(parsed.error);
        return invalid(`answered ${status} with a body that does not match the spec: ${listFieldErrors(fe)}`, fe);
      }
      const date = answerDate(headers);
      return { ok: true, result: { data: parsed.data, status, requestId, attempts: attempt, ...(date === undefined ? {} : { date }) } };
    });
  }

  private async exchange(
    spec: CallSpec<unknown>,
    opts: RequestOptions,
    requestId: string,
    slot: Slot | undefined,
  ): Promise<{ status: number; text: string; headers: Headers } | { error: Failure; failure?: AttemptFailure }> {
    const headers: Record<string, string> = { ...spec.headers };
    if (!spec.storage) {
      headers['accept'] = 'application/json';
      headers['user-agent'] = USER_AGENT;
      headers[REQUEST_ID_HEADER] = requestId;
      headers[API_KEY_HEADER] = this.apiKey.reveal();
      if (spec.body) headers['content-type'] = 'application/json';
    }
    const timeoutMs = this.o.timeoutMs ?? 30_000;
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new Error('timeout')), timeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout.signal]) : timeout.signal;
    let status = 0;
    // A request that may first open a connection (a TLS handshake, longer than the margin) is dated again by its answer.
    if (this.inFlight === 0 && Date.now() - this.lastAnswerAt > KEEP_ALIVE_MS) this.openConnections = 0;
    const level = ++this.inFlight;
    const warming = slot !== undefined && level > this.openConnections;
    try {
      slot?.markSent();
      const res = await (this.o.fetch ?? globalThis.fetch)(spec.storage ? spec.path : this.baseUrl + spec.path, {
        method: spec.method,
        headers,
        body: spec.body as BodyInit | undefined,
        signal,
        // a redirect would carry the key to wherever it points
        redirect: 'manual',
      });
      if (warming) slot.markSent();
      this.openConnections = Math.max(this.openConnections, level);
      this.lastAnswerAt = Date.now();
      status = res.status;
      return { status, text: await res.text(), headers: res.headers };
    } catch (cause) {
      const unknownIfMutating: Outcome = spec.mutating ? 'unknown' : 'definitive';
      if (opts.signal?.aborted) {
        return { error: { kind: 'aborted', message: 'cancelled by the caller while in flight', outcome: unknownIfMutating, cause } };
      }
      if (timeout.signal.aborted) {
        const message = `no complete answer within ${timeoutMs} ms` + (status ? ` (status ${status} arrived, body did not)` : '');
        return {
          error: { kind: 'timeout', message, outcome: unknownIfMutating, status: status || undefined, cause },
          failure: { kind: 'timeout' },
        };
      }
      // fetch's own refusal of a port (the Fetch standard's "bad ports", e.g. 6000): no socket, and never one (not retried)
      const code = (cause as { cause?: Error }).cause?.message === 'bad port' ? 'BAD_PORT' : errorCode(cause);
      const beforeSend = status === 0 && code !== undefined && BEFORE_SEND_CODES.has(code);
      const unresolved = code === 'ENOTFOUND' ? 'unknown' : code === 'EAI_AGAIN' ? 'busy' : undefined;
      const { hostname: host, port } = new URL(spec.storage ? spec.path : this.baseUrl);
      const message = unresolved
        ? `could not connect (${code}): the host ${host} ${unresolved === 'unknown' ? 'is not known to the name service' : 'did not resolve'}: nothing was sent`
        : code === 'BAD_PORT'
          ? `could not connect: fetch refuses port ${port} (a "bad port"): give the service another port; nothing was sent`
          : beforeSend
            ? `could not connect (${code}): nothing was sent`
            : `connection lost (${code ?? (cause instanceof Error ? cause.message : 'error')})` +
              (spec.mutating ? ': the service may or may not have acted' : '');
      const outcome = beforeSend ? 'definitive' : unknownIfMutating;
      return {
        error: { kind: 'network', message, outcome, cause },
        ...(code === 'BAD_PORT' ? {} : { failure: { kind: 'network', beforeSend, ...(unresolved ? { unresolved } : {}) } }),
      };
    } finally {
      this.inFlight--;
      clearTimeout(timer);
      slot?.done?.();
    }
  }

  private errorAnswer(spec: CallSpec<unknown>, status: number, text: string, headers: Headers, hide: Hider): [Failure, AttemptFailure] {
    const own = !spec.storage && isServiceRefusal(status, text);
    const body = (own ? OwnErrorBody : ErrorBody).safeParse(hide.deep(jsonObject(text))).data;
    const outcome = errorOutcome({ status, text, mutating: spec.mutating, fromService: !spec.storage });
    const foreign = outcome === 'unknown' && status < 500;
    const serverMessage = body ? [body.message ?? []].flat().join('; ') : describeForeignBody(hide.text(text), headers.get('content-type'));
    // (a code is the service's only: an intermediary's body names none)
    const code = !foreign && body?.error && SPEC_CODE.test(body.error) ? body.error : undefined;
    const fieldErrors: FieldError[] = foreign
      ? []
      : (body?.errors ?? (Array.isArray(body?.message) ? body.message.map((m) => ({ field: '(body)', message: m })) : []));
    // (a date is on the service's clock: measured from the answer's own Date, whatever this host's clock says)
    const retryAfterMs = parseRetryAfter(headers.get('retry-after'), answerDate(headers) ?? Date.now());
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
    else if (status === 403 && !spec.storage)
      message = `403 ${KEY_PROPAGATION_MESSAGE}${serverMessage ? ` (service said: ${serverMessage})` : ''}`;
    else if (status === 429) message = `429 rate limit or monthly quota exceeded${serverMessage ? ` (${serverMessage})` : ''}`;
    else message = `${status}${code ? ` ${code}` : ''}: ${serverMessage || (status >= 500 ? 'server error' : 'request refused')}`;
    return [
      { kind: 'http', status, code, message, fieldErrors, retryAfterMs, outcome },
      { kind: 'http', status, retryAfterMs },
    ];
  }
}

/** The answer's HTTP Date (the service's clock, whole seconds), when it dates its answers. */
function answerDate(headers: Headers): number | undefined {
  const at = Date.parse(headers.get('date') ?? '');
  return Number.isNaN(at) ? undefined : at;
}

/** The path as shown in errors and logs: no query of the storage's presigned URL. */
function shownPath(spec: CallSpec<unknown>): string {
  if (!spec.storage) return spec.path;
  const u = new URL(spec.path);
  return u.origin + u.pathname;
}

const reclassify = (e: PayoutApiError, outcome: Outcome, kind = e.kind): PayoutApiError =>
  new PayoutApiError({ ...e, kind, outcome, message: e.message, cause: e.cause });

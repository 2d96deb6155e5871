// PayoutClient: one method per route of the spec, named in the spec's words. Every request goes
// through one Transport (throttle, retries, timeout, typed errors). Strict in what we send: every
// body is checked against the spec's request schemas (src/spec/schemas.ts) before it leaves.
// Liberal in what we accept: answers are read with the tolerant schemas of answers.ts.
import { randomUUID } from 'node:crypto';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Logger } from 'pino';
import { z } from 'zod';
import {
  DocumentsPatchRequest,
  InitiateRequest,
  MethodsQuery,
  QuoteRequest,
  SwapRequest,
  ToggleRequest,
  UploadUrlRequest,
  WebhookRegisterRequest,
  WebhookUpdateRequest,
} from '../spec/schemas.ts';
import {
  CountryListAnswer,
  DocumentsPatchAnswer,
  MethodsAnswer,
  PairListAnswer,
  PayoutAnswer,
  PayoutListAnswer,
  QuoteAnswer,
  SwapAnswer,
  SwapListAnswer,
  ToggleAnswer,
  TransactionListAnswer,
  UploadUrlAnswer,
  WalletListAnswer,
  WebhookSubscriptionAnswer,
  WebhookSubscriptionListAnswer,
  webhookUpdateAnswer,
} from './answers.ts';
import { COUNTRIES_PATH, IDEMPOTENCY_KEY_HEADER, PAYOUTS_PREFIX, TRANSACTIONS_PATH, WEBHOOKS_PREFIX } from '../spec/http.ts';
import { LIST_MAX_LIMIT, MAX_DOCUMENT_BYTES, RATE_LIMIT_PER_SECOND, type DocumentContentType } from '../spec/codes.ts';
import { ApiKey } from './api-key.ts';
import { PayoutApiError, zodFieldErrors } from './errors.ts';
import { Transport, defaultSleep, type CallResult, type CallSpec, type ClientEvent, type HttpMethod } from './http.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.ts';
import { createLimiter, defaultSafetyMarginMs, type Clock, type SlidingWindowLimiter } from './throttle.ts';
import type { KeyEnvironment, UsageCounter, UsageReport } from './quota.ts';

export interface PayoutClientOptions {
  /** {base_url}: https://gateway.example.com, or the local sandbox's address. */
  baseUrl: string;
  /** An ApiKey (from loadApiKey) or the key text. */
  apiKey: ApiKey | string;
  /**
   * The request pace of this key (throttle.ts). Give the same limiter to every client of one key
   * that must share a pace; absent: a new one for this client, made of the three options below and,
   * with a quota counter, shared with the other clients and processes through its state folder (pace.ts).
   */
  limiter?: SlidingWindowLimiter;
  /** Request starts per rolling second for this key (spec §8: 5); for the client's own limiter. */
  requestsPerSecond?: number;
  /** Added to the 1000 ms window on our side, against network jitter (default 50 ms; 25 ms on loopback: defaultSafetyMarginMs). */
  safetyMarginMs?: number;
  /** Requests in flight at once for this client (default 8). */
  concurrency?: number;
  /** Per attempt, until the whole answer is read (default 30 s). */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** The quota counter (see quota.ts); absent: nothing is counted. */
  usage?: UsageCounter;
  /** The environment this client talks to, recorded with the key's fingerprint after a 2xx. */
  keyEnvironment?: KeyEnvironment;
  logger?: Logger;
  onEvent?: (e: ClientEvent) => void;
  /** The transport: globalThis.fetch unless given (a proxy's, a test's scripted one). */
  fetch?: typeof fetch;
  /** For tests: a scripted sleep, random source and clock (the clock of the client's own limiter). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  clock?: Clock;
  userAgent?: string;
}

export interface RequestOptions {
  /** x-request-id to send; a fresh UUID when absent. The same id is sent on every retry of the call. */
  requestId?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface IdempotentOptions extends RequestOptions {
  /** Required by the spec on initiate and swap: unique per payout, reused only to resend the same body. */
  idempotencyKey: string;
}

export interface CreatedResult<T> {
  data: T;
  /** x-request-id of the call, to quote to support. */
  requestId: string;
  idempotencyKey: string;
  /** The exact JSON text sent, to journal before or after the call; resend it to retry. */
  body: string;
  status: number;
  attempts: number;
}

export interface ListPageQuery {
  page?: number;
  limit?: number;
}

export type InitiateResult = CreatedResult<PayoutAnswer> & { payout: PayoutAnswer };
export type SwapResult = CreatedResult<SwapAnswer> & { swap: SwapAnswer };

export interface UploadedDocument {
  /** The stable address to pass as supportingDocument on initiate or in PATCH documents. */
  documentUrl: string;
  requestId: string;
}

const enc = new TextEncoder();

/**
 * The spec asks for an HTTPS webhook url (§4.13). A listener on this machine has no TLS, so plain
 * http is let through for loopback hosts only (the local sandbox accepts the same).
 */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
const webhookUrl = z
  .string()
  .url()
  .refine((u) => {
    const url = new URL(u);
    return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname));
  }, 'an HTTPS URL (plain http only on 127.0.0.1 or localhost)');
const RegisterBody = WebhookRegisterRequest.extend({ url: webhookUrl });
const UpdateBody = WebhookUpdateRequest.extend({ url: webhookUrl.optional() });
const id = (v: string) => encodeURIComponent(v);

function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

export class PayoutClient {
  readonly baseUrl: string;
  readonly apiKey: ApiKey;
  readonly usage: UsageCounter | undefined;
  private readonly transport: Transport;
  private readonly limit: LimitFunction;

  constructor(options: PayoutClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = typeof options.apiKey === 'string' ? new ApiKey(options.apiKey) : options.apiKey;
    this.usage = options.usage;
    this.limit = pLimit(options.concurrency ?? 8);
    const stateDir = options.usage?.stateDir;
    const limiter =
      options.limiter ??
      createLimiter({
        perWindow: options.requestsPerSecond ?? RATE_LIMIT_PER_SECOND,
        safetyMarginMs: options.safetyMarginMs ?? defaultSafetyMarginMs(this.baseUrl),
        clock: options.clock,
        share: stateDir
          ? {
              stateDir,
              baseUrl: this.baseUrl,
              fingerprint: this.apiKey.fingerprint,
              onError: (e) =>
                options.logger?.warn(`the request pace is not shared with other processes (${e.message}): this one paces alone`),
            }
          : undefined,
      });
    let labelled = false;
    this.transport = new Transport({
      baseUrl: this.baseUrl,
      apiKey: this.apiKey,
      limiter,
      concurrency: this.limit,
      timeoutMs: options.timeoutMs ?? 30_000,
      retry: { ...DEFAULT_RETRY_POLICY, ...options.retry },
      usage: options.usage,
      fetch: options.fetch ?? globalThis.fetch,
      logger: options.logger,
      random: options.random ?? Math.random,
      sleep: options.sleep ?? defaultSleep,
      onEvent: options.onEvent,
      userAgent: options.userAgent ?? 'payout-batch/0.1 (+node)',
      onKeyWorks:
        options.usage && options.keyEnvironment
          ? () => {
              if (labelled) return;
              labelled = true;
              options.usage!.label(this.apiKey.fingerprint, options.keyEnvironment!);
            }
          : undefined,
    });
  }

  /** This key's requests this month as counted by this machine (quota.ts); undefined without a counter. */
  async quotaUsage(): Promise<UsageReport | undefined> {
    return this.usage?.usage(this.apiKey.fingerprint);
  }

  // ------------------------------------------------------------ plumbing

  /** Checks a body against its request schema before anything is sent (a definitive error if not). */
  private checkBody<S extends z.ZodTypeAny>(
    route: string,
    method: HttpMethod,
    path: string,
    schema: S,
    body: unknown,
    requestId?: string,
  ): z.infer<S> {
    const parsed = schema.safeParse(body);
    if (parsed.success) return parsed.data;
    const fe = zodFieldErrors(parsed.error);
    const rid = requestId ?? randomUUID();
    throw new PayoutApiError({
      kind: 'invalid-request',
      outcome: 'definitive',
      route,
      method,
      path,
      requestId: rid,
      fieldErrors: fe,
      attempts: 0,
      message:
        `${route} (${method} ${path}): not sent, the request does not match the spec: ` +
        fe
          .slice(0, 5)
          .map((f) => `field "${f.field}": ${f.message}`)
          .join('; '),
    });
  }

  private send<T>(spec: Omit<CallSpec<T>, 'requestId' | 'signal' | 'timeoutMs'>, opts: RequestOptions = {}): Promise<CallResult<T>> {
    return this.transport.call({ ...spec, requestId: opts.requestId, signal: opts.signal, timeoutMs: opts.timeoutMs });
  }

  private async get<T>(route: string, path: string, schema: z.ZodType<T>, opts?: RequestOptions): Promise<T> {
    const r = await this.send({ route, method: 'GET', path, schema, mutating: false, resendSafe: true }, opts);
    return r.data;
  }

  private async json<T>(
    route: string,
    method: HttpMethod,
    path: string,
    body: unknown,
    schema: z.ZodType<T> | null,
    flags: { mutating: boolean; resendSafe: boolean; headers?: Record<string, string>; expectStatus?: number[] },
    opts?: RequestOptions,
  ): Promise<CallResult<T>> {
    return this.send(
      {
        route,
        method,
        path,
        body: enc.encode(JSON.stringify(body)),
        contentType: 'application/json',
        schema,
        mutating: flags.mutating,
        resendSafe: flags.resendSafe,
        headers: flags.headers,
        expectStatus: flags.expectStatus,
      },
      opts,
    );
  }

  /**
   * initiate and swap: the body is serialised once (or taken as given, when it is a string) and
   * the same bytes go out on every attempt with the same Idempotency-Key.
   */
  private async created<S extends z.ZodTypeAny, T>(
    route: string,
    path: string,
    requestSchema: S,
    body: z.input<S> | string,
    responseSchema: z.ZodType<T>,
    opts: IdempotentOptions,
  ): Promise<CreatedResult<T>> {
    const key = opts.idempotencyKey;
    if (typeof key !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(key)) {
      throw new PayoutApiError({
        kind: 'invalid-request',
        outcome: 'definitive',
        route,
        method: 'POST',
        path,
        requestId: opts.requestId ?? randomUUID(),
        attempts: 0,
        message: `${route} (POST ${path}): not sent, the Idempotency-Key must be 1 to 255 visible ASCII characters`,
      });
    }
    let text: string;
    let value: unknown;
    if (typeof body === 'string') {
      text = body;
      try {
        value = JSON.parse(body);
      } catch {
        throw new PayoutApiError({
          kind: 'invalid-request',
          outcome: 'definitive',
          route,
          method: 'POST',
          path,
          requestId: opts.requestId ?? randomUUID(),
          attempts: 0,
          message: `${route} (POST ${path}): not sent, the pre-serialised body is not JSON`,
        });
      }
    } else {
      text = JSON.stringify(body);
      value = body;
    }
    this.checkBody(route, 'POST', path, requestSchema, value, opts.requestId);
    const r = await this.send(
      {
        route,
        method: 'POST',
        path,
        body: enc.encode(text),
        contentType: 'application/json',
        schema: responseSchema,
        mutating: true,
        resendSafe: true,
        headers: { [IDEMPOTENCY_KEY_HEADER]: key },
      },
      opts,
    );
    return { data: r.data, requestId: r.requestId, idempotencyKey: key, body: text, status: r.status, attempts: r.attempts };
  }

  // ------------------------------------------------------------ payouts (spec §4.1-4.6)

  /** POST {payouts}/quote. Read-only: retried freely. */
  async quote(body: QuoteRequest, opts?: RequestOptions): Promise<QuoteAnswer> {
    const path = `${PAYOUTS_PREFIX}/quote`;
    this.checkBody('quote', 'POST', path, QuoteRequest, body, opts?.requestId);
    return (await this.json('quote', 'POST', path, body, QuoteAnswer, { mutating: false, resendSafe: true }, opts)).data;
  }

  /**
   * POST {payouts}/initiate. `body` is the request object, or the exact JSON text to send (for
   * example read back from the journal): a string is validated and sent byte for byte. The result
   * carries the payout, the x-request-id, the Idempotency-Key and the exact text sent. Retries
   * (429, 5xx, timeouts, dropped connections) resend the same key and the same bytes. An error
   * with outcome 'unknown' means: the payout may exist; resend the same key and body to learn.
   */
  async initiate(body: InitiateRequest | string, opts: IdempotentOptions): Promise<InitiateResult> {
    const r = await this.created('initiate', `${PAYOUTS_PREFIX}/initiate`, InitiateRequest, body, PayoutAnswer, opts);
    return { ...r, payout: r.data };
  }

  /** GET {payouts}/{id}. */
  getPayout(payoutId: string, opts?: RequestOptions): Promise<PayoutAnswer> {
    return this.get('getPayout', `${PAYOUTS_PREFIX}/${id(payoutId)}`, PayoutAnswer, opts);
  }

  /** GET {payouts}?page&limit (page from 1, limit at most 100). */
  listPayouts(q: ListPageQuery = {}, opts?: RequestOptions): Promise<PayoutListAnswer> {
    return this.get('listPayouts', `${PAYOUTS_PREFIX}${query({ page: q.page, limit: q.limit })}`, PayoutListAnswer, opts);
  }

  /** Every page of a list, `limit` 100 at a time; without meta.total, a short page is the last. */
  async *allPages<T>(list: (q: ListPageQuery) => Promise<{ data: T[]; meta?: { total?: number } }>): AsyncGenerator<T> {
    for (let page = 1; ; page++) {
      const r = await list({ page, limit: LIST_MAX_LIMIT });
      yield* r.data;
      const total = r.meta?.total;
      if (r.data.length === 0 || (total !== undefined ? page * LIST_MAX_LIMIT >= total : r.data.length < LIST_MAX_LIMIT)) return;
    }
  }

  /** PATCH {payouts}/{id}/documents. Duplicates are filtered by the service, so it is safe to resend. */
  async patchDocuments(payoutId: string, documents: string[], opts?: RequestOptions): Promise<DocumentsPatchAnswer> {
    const path = `${PAYOUTS_PREFIX}/${id(payoutId)}/documents`;
    const body = this.checkBody('patchDocuments', 'PATCH', path, DocumentsPatchRequest, { documents }, opts?.requestId);
    return (await this.json('patchDocuments', 'PATCH', path, body, DocumentsPatchAnswer, { mutating: true, resendSafe: true }, opts)).data;
  }

  /** POST {payouts}/documents/upload-url. The uploadUrl expires after 15 minutes: PUT at once. */
  async createUploadUrl(body: UploadUrlRequest, opts?: RequestOptions): Promise<UploadUrlAnswer> {
    const path = `${PAYOUTS_PREFIX}/documents/upload-url`;
    this.checkBody('createUploadUrl', 'POST', path, UploadUrlRequest, body, opts?.requestId);
    return (await this.json('createUploadUrl', 'POST', path, body, UploadUrlAnswer, { mutating: false, resendSafe: true }, opts)).data;
  }

  /**
   * Upload one file: asks for an upload URL just before the PUT (it expires after 15 minutes),
   * then PUTs the bytes to it with exactly the headers returned (no API key: the storage is not the
   * service) and expects 200. Returns the documentUrl for initiate or PATCH documents.
   */
  async uploadDocument(
    file: { bytes: Uint8Array; filename: string; contentType: DocumentContentType },
    opts?: RequestOptions,
  ): Promise<UploadedDocument> {
    if (file.bytes.byteLength > MAX_DOCUMENT_BYTES) {
      throw new PayoutApiError({
        kind: 'invalid-request',
        outcome: 'definitive',
        route: 'uploadDocument',
        method: 'PUT',
        path: '(upload URL)',
        requestId: opts?.requestId ?? randomUUID(),
        attempts: 0,
        message: `uploadDocument: not sent, ${file.filename} is ${file.bytes.byteLength} bytes; the spec allows 10 MB per file`,
      });
    }
    const target = await this.createUploadUrl({ filename: file.filename, contentType: file.contentType }, opts);
    let u: URL;
    try {
      u = new URL(target.uploadUrl);
    } catch {
      u = new URL('invalid:');
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') {
      throw new PayoutApiError({
        kind: 'invalid-response',
        outcome: 'definitive',
        route: 'createUploadUrl',
        method: 'POST',
        path: `${PAYOUTS_PREFIX}/documents/upload-url`,
        requestId: opts?.requestId ?? randomUUID(),
        fieldErrors: [{ field: 'uploadUrl', message: 'not an http(s) URL' }],
        message: 'createUploadUrl: the service returned an uploadUrl that is not an http(s) URL',
      });
    }
    const r = await this.send(
      {
        route: 'uploadDocument',
        method: 'PUT',
        path: target.uploadUrl,
        absolute: true,
        body: file.bytes,
        headers: { ...target.headers },
        schema: null,
        mutating: true,
        resendSafe: true,
        authenticated: false,
        expectStatus: [200],
      },
      opts,
    );
    return { documentUrl: target.documentUrl, requestId: r.requestId };
  }

  // ------------------------------------------------------------ swaps (spec §4.7, §4.8)

  /** POST {payouts}/swap, idempotent like initiate; a string body is sent byte for byte. */
  async swap(body: SwapRequest | string, opts: IdempotentOptions): Promise<SwapResult> {
    const r = await this.created('swap', `${PAYOUTS_PREFIX}/swap`, SwapRequest, body, SwapAnswer, opts);
    return { ...r, swap: r.data };
  }

  listSwaps(q: ListPageQuery = {}, opts?: RequestOptions): Promise<SwapListAnswer> {
    return this.get('listSwaps', `${PAYOUTS_PREFIX}/swaps${query({ page: q.page, limit: q.limit })}`, SwapListAnswer, opts);
  }

  getSwap(swapId: string, opts?: RequestOptions): Promise<SwapAnswer> {
    return this.get('getSwap', `${PAYOUTS_PREFIX}/swaps/${id(swapId)}`, SwapAnswer, opts);
  }

  // ------------------------------------------------------------ pairs, methods, wallets (§4.9-4.12)

  /**
   * GET {payouts}/pairs: the enabled pairs (spec §4.9). `{all: true}` asks for the disabled ones too
   * with ?status=all, our sandbox's addition: a service that ignores the query lists enabled pairs only.
   */
  listPairs(q: { all?: boolean } = {}, opts?: RequestOptions): Promise<PairListAnswer> {
    return this.get('listPairs', `${PAYOUTS_PREFIX}/pairs${query({ status: q.all ? 'all' : undefined })}`, PairListAnswer, opts);
  }

  /**
   * PATCH {payouts}/currency-pairs/{id}/toggle with {enabled}. With `enabled` given the call is
   * idempotent and retried; without it the service flips the pair, so an unknown outcome is not
   * resent (it could flip twice).
   */
  async togglePair(currencyPairId: string, body: ToggleRequest = {}, opts?: RequestOptions): Promise<ToggleAnswer> {
    const path = `${PAYOUTS_PREFIX}/currency-pairs/${id(currencyPairId)}/toggle`;
    this.checkBody('togglePair', 'PATCH', path, ToggleRequest, body, opts?.requestId);
    const resendSafe = typeof body.enabled === 'boolean';
    return (await this.json('togglePair', 'PATCH', path, body, ToggleAnswer, { mutating: true, resendSafe }, opts)).data;
  }

  /** GET {payouts}/methods?sourceCurrency&destinationCurrency&destinationCountryCode. */
  listMethods(q: MethodsQuery, opts?: RequestOptions): Promise<MethodsAnswer> {
    const path = `${PAYOUTS_PREFIX}/methods${query(q)}`;
    this.checkBody('listMethods', 'GET', path, MethodsQuery, q, opts?.requestId);
    return this.get('listMethods', path, MethodsAnswer, opts);
  }

  listWallets(opts?: RequestOptions): Promise<WalletListAnswer> {
    return this.get('listWallets', `${PAYOUTS_PREFIX}/wallets`, WalletListAnswer, opts);
  }

  // ------------------------------------------------------------ webhooks (§4.13)

  /** POST {webhooks}. Not resent on an unknown outcome: one subscription per business. */
  async registerWebhook(body: WebhookRegisterRequest, opts?: RequestOptions): Promise<WebhookSubscriptionAnswer> {
    this.checkBody('registerWebhook', 'POST', WEBHOOKS_PREFIX, RegisterBody, body, opts?.requestId);
    return (
      await this.json(
        'registerWebhook',
        'POST',
        WEBHOOKS_PREFIX,
        body,
        WebhookSubscriptionAnswer,
        { mutating: true, resendSafe: false },
        opts,
      )
    ).data;
  }

  listWebhooks(opts?: RequestOptions): Promise<z.output<typeof WebhookSubscriptionListAnswer>> {
    return this.get('listWebhooks', WEBHOOKS_PREFIX, WebhookSubscriptionListAnswer, opts);
  }

  getWebhook(webhookId: string, opts?: RequestOptions): Promise<WebhookSubscriptionAnswer> {
    return this.get('getWebhook', `${WEBHOOKS_PREFIX}/${id(webhookId)}`, WebhookSubscriptionAnswer, opts);
  }

  /** PATCH {webhooks}/{id}: setting the same values twice is harmless, so it is resent. */
  async updateWebhook(webhookId: string, body: WebhookUpdateRequest, opts?: RequestOptions): Promise<WebhookSubscriptionAnswer> {
    const path = `${WEBHOOKS_PREFIX}/${id(webhookId)}`;
    this.checkBody('updateWebhook', 'PATCH', path, UpdateBody, body, opts?.requestId);
    return (
      await this.json('updateWebhook', 'PATCH', path, body, webhookUpdateAnswer(webhookId), { mutating: true, resendSafe: true }, opts)
    ).data;
  }

  /** DELETE {webhooks}/{id}. Not resent on an unknown outcome (a second try would answer 404). */
  async deleteWebhook(webhookId: string, opts?: RequestOptions): Promise<void> {
    await this.send(
      {
        route: 'deleteWebhook',
        method: 'DELETE',
        path: `${WEBHOOKS_PREFIX}/${id(webhookId)}`,
        schema: null,
        mutating: true,
        resendSafe: false,
      },
      opts,
    );
  }

  // ------------------------------------------------------------ public routes (§4.14, §4.15)

  /** GET {base_url}/api/public/auth/countries?limit&filter[currencyCode]. */
  listCountries(q: { limit?: number; currencyCode?: string } = {}, opts?: RequestOptions): Promise<CountryListAnswer> {
    return this.get(
      'listCountries',
      `${COUNTRIES_PATH}${query({ limit: q.limit, 'filter[currencyCode]': q.currencyCode })}`,
      CountryListAnswer,
      opts,
    );
  }

  /**
   * GET {base_url}/api/public/transactions?filter[payoutRef]. The spec names no paging query for
   * this route but its answer carries §4.4's meta: page and limit are sent as for the payout list
   * (a service that ignores them gives its one page; reconcile notices a repeated page).
   */
  listTransactions(q: { payoutRef?: string } & ListPageQuery = {}, opts?: RequestOptions): Promise<TransactionListAnswer> {
    return this.get(
      'listTransactions',
      `${TRANSACTIONS_PATH}${query({ 'filter[payoutRef]': q.payoutRef, page: q.page, limit: q.limit })}`,
      TransactionListAnswer,
      opts,
    );
  }
}

import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import * as requests from '../spec/schemas.ts';
import * as answers from './answers.ts';
import { COUNTRIES_PATH, IDEMPOTENCY_KEY_HEADER, PAYOUTS_PREFIX, TRANSACTIONS_PATH, WEBHOOKS_PREFIX } from '../spec/endpoints.ts';
import { MAX_DOCUMENT_BYTES, type DocumentContentType } from '../spec/codes.ts';
import { attempt } from '../files/attempt.ts';
import { PayoutApiError, zodFieldErrors } from './errors.ts';
import { isRecord } from './definitive.ts';
import { Transport, listFieldErrors, type CallResult, type CallSpec, type HttpMethod, type RequestOptions } from './http.ts';
import type { UsageReport } from './quota.ts';

export type IdempotentOptions = RequestOptions & { idempotencyKey: string };

/** The answer under `K` (`payout`, `swap`); `body`: the exact JSON text sent, to resend it. */
export type CreatedResult<K extends string, T> = Omit<CallResult<T>, 'data'> & { [k in K]: T } & { idempotencyKey: string; body: string };

export type ListPageQuery = { page?: number; limit?: number };

type Effect = Pick<CallSpec<unknown>, 'mutating' | 'resendSafe'>;
const READ_ONLY: Effect = { mutating: false, resendSafe: true };
/** By nature or by its Idempotency-Key. */
const IDEMPOTENT: Effect = { mutating: true, resendSafe: true };
const NOT_RESENT: Effect = { mutating: true, resendSafe: false };

const enc = new TextEncoder();

const id = (v: string) => encodeURIComponent(v);

function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams(Object.entries(params).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)]]))).toString();
  return q ? `?${q}` : '';
}

/** A webhook's secret and its URL's password and query values: the service may echo them as it may the key. */
function secretsOf(body: unknown): string[] {
  const { secret, url } = isRecord(body) ? body : {};
  const u = typeof url === 'string' && URL.canParse(url) ? new URL(url) : undefined;
  const all = [secret, u && decodeURIComponent(u.password), ...(u?.searchParams.values() ?? [])];
  return all.filter((s): s is string => typeof s === 'string' && s !== '');
}

type Where = Pick<CallSpec<unknown>, 'route' | 'method' | 'path'> & { requestId?: string };

/** A request the client refuses to send: nothing left, so the service certainly did not act. */
function notSent(at: Where, message: string, fieldErrors?: requests.FieldError[]): PayoutApiError {
  const requestId = at.requestId ?? randomUUID();
  return new PayoutApiError({ ...at, requestId, kind: 'invalid-request', outcome: 'definitive', attempts: 0, message, fieldErrors });
}

function checkBody(at: Where, schema: z.ZodType, body: unknown): void {
  const parsed = schema.safeParse(body);
  if (parsed.success) return;
  const fe = zodFieldErrors(parsed.error);
  throw notSent(at, `${at.route} (${at.method} ${at.path}): not sent, the request does not match the spec: ${listFieldErrors(fe)}`, fe);
}

export class PayoutClient extends Transport {
  async quotaUsage(): Promise<UsageReport | undefined> {
    return this.o.usage?.usage(this.apiKey.fingerprint);
  }

  private async get<T>(route: string, path: string, schema: z.ZodType<T>, opts?: RequestOptions): Promise<T> {
    return (await this.call({ route, method: 'GET', path, schema, ...READ_ONLY }, opts)).data;
  }

  private async send<T>(
    route: string,
    method: HttpMethod,
    path: string,
    [requestSchema, body]: [z.ZodType, unknown],
    schema: z.ZodType<T>,
    effect: Effect,
    opts?: RequestOptions,
  ): Promise<T> {
    checkBody({ route, method, path, requestId: opts?.requestId }, requestSchema, body);
    const secrets = secretsOf(body);
    return (await this.call({ route, method, path, body: enc.encode(JSON.stringify(body)), schema, ...effect, secrets }, opts)).data;
  }

  /** initiate and swap: the same bytes on every attempt under one key. */
  private async created<K extends string, T>(
    field: K,
    route: string,
    path: string,
    requestSchema: z.ZodType,
    body: unknown,
    schema: z.ZodType<T>,
    opts: IdempotentOptions,
  ): Promise<CreatedResult<K, T>> {
    const key = opts.idempotencyKey;
    const at: Where = { route, method: 'POST', path, requestId: opts.requestId };
    const refuse = (why: string) => notSent(at, `${route} (POST ${path}): not sent, ${why}`);
    if (typeof key !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(key))
      throw refuse('the Idempotency-Key must be 1 to 255 visible ASCII characters');
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const value = typeof body === 'string' ? attempt(() => JSON.parse(body) as unknown) : body;
    if (typeof body === 'string' && value === undefined) throw refuse('the pre-serialised body is not JSON');
    checkBody(at, requestSchema, value);
    const headers = { [IDEMPOTENCY_KEY_HEADER]: key };
    const { data, ...r } = await this.call({ route, method: 'POST', path, body: enc.encode(text), headers, schema, ...IDEMPOTENT }, opts);
    return { ...r, [field]: data, idempotencyKey: key, body: text } as CreatedResult<K, T>;
  }

  /** Spec §4.1; read-only. */
  quote(body: requests.QuoteRequest, opts?: RequestOptions): Promise<answers.QuoteAnswer> {
    return this.send('quote', 'POST', `${PAYOUTS_PREFIX}/quote`, [requests.QuoteRequest, body], answers.QuoteAnswer, READ_ONLY, opts);
  }

  /** A string `body` (from the journal) is sent byte for byte. An 'unknown' error: resend the same key and body. */
  initiate(body: requests.InitiateRequest | string, opts: IdempotentOptions) {
    return this.created('payout', 'initiate', `${PAYOUTS_PREFIX}/initiate`, requests.InitiateRequest, body, answers.PayoutAnswer, opts);
  }

  getPayout(payoutId: string, opts?: RequestOptions): Promise<answers.PayoutAnswer> {
    return this.get('getPayout', `${PAYOUTS_PREFIX}/${id(payoutId)}`, answers.PayoutAnswer, opts);
  }

  listPayouts(q: ListPageQuery = {}, opts?: RequestOptions) {
    return this.get('listPayouts', `${PAYOUTS_PREFIX}${query({ page: q.page, limit: q.limit })}`, answers.PayoutListAnswer, opts);
  }

  /** Spec §4.5: duplicates are filtered by the service, so it is safe to resend. */
  patchDocuments(payoutId: string, documents: string[], opts?: RequestOptions) {
    const path = `${PAYOUTS_PREFIX}/${id(payoutId)}/documents`;
    const request: [z.ZodType, unknown] = [requests.DocumentsPatchRequest, { documents }];
    return this.send('patchDocuments', 'PATCH', path, request, answers.DocumentsPatchAnswer, IDEMPOTENT, opts);
  }

  createUploadUrl(body: requests.UploadUrlRequest, opts?: RequestOptions) {
    const path = `${PAYOUTS_PREFIX}/documents/upload-url`;
    return this.send('createUploadUrl', 'POST', path, [requests.UploadUrlRequest, body], answers.UploadUrlAnswer, READ_ONLY, opts);
  }

  /** Spec §4.6: the URL expires after 15 minutes, so it is asked for just before the PUT (no API key). */
  async uploadDocument(file: { bytes: Uint8Array; filename: string; contentType: DocumentContentType }, opts?: RequestOptions) {
    if (file.bytes.byteLength > MAX_DOCUMENT_BYTES) {
      const message = `uploadDocument: not sent, ${file.filename} is ${file.bytes.byteLength} bytes; the spec allows 10 MB per file`;
      throw notSent({ route: 'uploadDocument', method: 'PUT', path: '(upload URL)', requestId: opts?.requestId }, message);
    }
    const target = await this.createUploadUrl({ filename: file.filename, contentType: file.contentType }, opts);
    const put = { route: 'uploadDocument', method: 'PUT', path: target.uploadUrl, body: file.bytes, headers: target.headers } as const;
    // (a refusal may echo the URL's signature or a header's token: scrubbed like the key; short values are not secrets)
    const given = [...new URL(target.uploadUrl).searchParams.values(), ...Object.values(target.headers)];
    const secrets = given.filter((v) => v.length >= 16);
    const r = await this.call({ ...put, schema: null, ...IDEMPOTENT, storage: true, secrets }, opts);
    return { documentUrl: target.documentUrl, requestId: r.requestId };
  }

  /** Spec §4.7, idempotent like initiate. */
  swap(body: requests.SwapRequest | string, opts: IdempotentOptions) {
    return this.created('swap', 'swap', `${PAYOUTS_PREFIX}/swap`, requests.SwapRequest, body, answers.SwapAnswer, opts);
  }

  listSwaps(q: ListPageQuery = {}, opts?: RequestOptions) {
    return this.get('listSwaps', `${PAYOUTS_PREFIX}/swaps${query({ page: q.page, limit: q.limit })}`, answers.SwapListAnswer, opts);
  }

  getSwap(swapId: string, opts?: RequestOptions): Promise<answers.SwapAnswer> {
    return this.get('getSwap', `${PAYOUTS_PREFIX}/swaps/${id(swapId)}`, answers.SwapAnswer, opts);
  }

  /** Spec §4.9: enabled pairs; `all` adds ?status=all, our sandbox's addition (another service may ignore or refuse it). */
  listPairs(q: { all?: boolean } = {}, opts?: RequestOptions) {
    return this.get('listPairs', `${PAYOUTS_PREFIX}/pairs${query({ status: q.all ? 'all' : undefined })}`, answers.PairListAnswer, opts);
  }

  /** Spec §4.10: without `enabled` the service flips the pair, so an unknown outcome is not resent. */
  togglePair(currencyPairId: string, body: requests.ToggleRequest = {}, opts?: RequestOptions) {
    const path = `${PAYOUTS_PREFIX}/currency-pairs/${id(currencyPairId)}/toggle`;
    const effect = typeof body.enabled === 'boolean' ? IDEMPOTENT : NOT_RESENT;
    return this.send('togglePair', 'PATCH', path, [requests.ToggleRequest, body], answers.ToggleAnswer, effect, opts);
  }

  listMethods(q: requests.MethodsQuery, opts?: RequestOptions) {
    const path = `${PAYOUTS_PREFIX}/methods${query(q)}`;
    checkBody({ route: 'listMethods', method: 'GET', path, requestId: opts?.requestId }, requests.MethodsQuery, q);
    return this.get('listMethods', path, answers.MethodsAnswer, opts);
  }

  listWallets(opts?: RequestOptions) {
    return this.get('listWallets', `${PAYOUTS_PREFIX}/wallets`, answers.WalletListAnswer, opts);
  }

  /** Spec §4.13: one subscription per business, so not resent on an unknown outcome. */
  registerWebhook(body: requests.WebhookRegisterRequest, opts?: RequestOptions) {
    const request: [z.ZodType, unknown] = [requests.WebhookRegisterRequest, body];
    return this.send('registerWebhook', 'POST', WEBHOOKS_PREFIX, request, answers.WebhookSubscriptionAnswer, NOT_RESENT, opts);
  }

  listWebhooks(opts?: RequestOptions) {
    return this.get('listWebhooks', WEBHOOKS_PREFIX, answers.WebhookSubscriptionListAnswer, opts);
  }

  getWebhook(webhookId: string, opts?: RequestOptions) {
    return this.get('getWebhook', `${WEBHOOKS_PREFIX}/${id(webhookId)}`, answers.WebhookSubscriptionAnswer, opts);
  }

  /** Setting the same values twice is harmless, so it is resent. */
  updateWebhook(webhookId: string, body: requests.WebhookUpdateRequest, opts?: RequestOptions) {
    const path = `${WEBHOOKS_PREFIX}/${id(webhookId)}`;
    const request: [z.ZodType, unknown] = [requests.WebhookUpdateRequest, body];
    return this.send('updateWebhook', 'PATCH', path, request, answers.webhookUpdateAnswer(webhookId), IDEMPOTENT, opts);
  }

  /** Not resent on an unknown outcome (a second try would answer 404). */
  async deleteWebhook(webhookId: string, opts?: RequestOptions): Promise<void> {
    const path = `${WEBHOOKS_PREFIX}/${id(webhookId)}`;
    await this.call({ route: 'deleteWebhook', method: 'DELETE', path, schema: null, ...NOT_RESENT }, opts);
  }

  listCountries(q: { limit?: number; currencyCode?: string } = {}, opts?: RequestOptions) {
    const path = `${COUNTRIES_PATH}${query({ limit: q.limit, 'filter[currencyCode]': q.currencyCode })}`;
    return this.get('listCountries', path, answers.CountryListAnswer, opts);
  }

  /** Spec §4.15 shows no paging query but §4.4's meta: page and limit as for payouts. */
  listTransactions(q: { payoutRef?: string } & ListPageQuery = {}, opts?: RequestOptions) {
    const path = `${TRANSACTIONS_PATH}${query({ 'filter[payoutRef]': q.payoutRef, page: q.page, limit: q.limit })}`;
    return this.get('listTransactions', path, answers.TransactionListAnswer, opts);
  }
}

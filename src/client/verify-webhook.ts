// Incoming webhook deliveries (spec §6): the delivery id is returned so the caller can drop one sent twice.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { attempt } from '../files/attempt.ts';
import { DEFAULT_SERVICE_HEADERS, type ServiceHeaderNames } from '../spec/endpoints.ts';
import { WebhookEvent } from './answers.ts';
import { zodFieldErrors } from './errors.ts';
import { listFieldErrors } from './http.ts';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: 'missing-signature' | 'bad-signature' | 'malformed-signature' | 'not-json' | 'invalid-event',
    message: string,
  ) {
    super(message);
  }
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const v = Object.entries(headers).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * The header `name`; for the spec's neutral names (X-Service-...) also X-<maker>-..., the one header so named: spec §6
 * writes the maker's name as "Service", so the service sends e.g. X-Acme-Signature.
 */
function serviceHeader(headers: HeaderBag, name: string): string | undefined {
  const exact = header(headers, name);
  const rest = /^x-service-(.+)$/i.exec(name)?.[1];
  if (exact !== undefined || !rest) return exact;
  const maker = new RegExp(`^x-[a-z0-9]+(-[a-z0-9]+)*-${rest}$`, 'i');
  const named = (headers instanceof Headers ? [...headers.keys()] : Object.keys(headers)).filter((k) => maker.test(k));
  return named.length === 1 ? header(headers, named[0]!) : undefined;
}

export interface VerifyOptions {
  /** Exactly as received. */
  rawBody: Uint8Array | string;
  headers: HeaderBag;
  /** Absent: the service signs nothing (spec §6) and the delivery is accepted unsigned. */
  secret?: string;
  headerNames?: ServiceHeaderNames;
}

export function verifyWebhook(options: VerifyOptions) {
  const names = options.headerNames ?? DEFAULT_SERVICE_HEADERS;
  const signature = serviceHeader(options.headers, names.signature);
  if (options.secret) {
    if (!signature) throw new WebhookVerificationError('missing-signature', `no ${names.signature} header, but a secret is set`);
    const hex = /^sha256=([0-9a-fA-F]{64})$/.exec(signature.trim())?.[1];
    if (!hex) throw new WebhookVerificationError('malformed-signature', `${names.signature} is not of the form sha256=<64 hex digits>`);
    if (!timingSafeEqual(Buffer.from(hex, 'hex'), createHmac('sha256', options.secret).update(options.rawBody).digest())) {
      throw new WebhookVerificationError('bad-signature', `${names.signature} does not match the body`);
    }
  }
  const text = typeof options.rawBody === 'string' ? options.rawBody : Buffer.from(options.rawBody).toString('utf8');
  const json = attempt(() => JSON.parse(text) as unknown);
  if (json === undefined) throw new WebhookVerificationError('not-json', 'the delivery body is not JSON');
  const parsed = WebhookEvent.safeParse(json);
  if (!parsed.success) {
    throw new WebhookVerificationError(
      'invalid-event',
      `the delivery is not an event of the spec: ${listFieldErrors(zodFieldErrors(parsed.error))}`,
    );
  }
  // without the header (§6; an empty one is none) or a body deliveryId, the body's hash still recognises a delivery sent twice
  const deliveryId =
    serviceHeader(options.headers, names.deliveryId) ||
    parsed.data.deliveryId ||
    `sha256:${createHash('sha256').update(text).digest('hex')}`;
  return { event: parsed.data, deliveryId, signed: !!options.secret };
}

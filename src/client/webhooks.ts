// Incoming webhook deliveries (spec §6): check X-Service-Signature (sha256=<hex HMAC-SHA256 of the
// raw body, keyed by the shared secret>) with a constant-time compare, parse the event with zod,
// and report the delivery id so the caller can drop duplicates.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { DEFAULT_SERVICE_HEADERS, type ServiceHeaderNames } from '../spec/http.ts';
import { WebhookEvent } from './answers.ts';
import { zodFieldErrors } from './errors.ts';

export type WebhookFailure = 'missing-signature' | 'bad-signature' | 'malformed-signature' | 'not-json' | 'invalid-event';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookFailure,
    message: string,
  ) {
    super(message);
  }
}

export interface VerifiedDelivery {
  event: WebhookEvent;
  /** X-Service-Delivery-Id, else the body's deliveryId: the key for deduplication. */
  deliveryId: string;
  /** Whether a signature was present and checked. */
  signed: boolean;
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === lower) return Array.isArray(v) ? v[0] : v;
  }
  return undefined;
}

/** sha256=<hex>, as the service computes it. */
export function signPayload(rawBody: Uint8Array | string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}

/** Constant-time check of a signature header value against the raw body. */
export function signatureMatches(rawBody: Uint8Array | string, secret: string, signature: string): boolean {
  const m = /^sha256=([0-9a-fA-F]{64})$/.exec(signature.trim());
  if (!m) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  const given = Buffer.from(m[1]!, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export interface VerifyOptions {
  /** The body exactly as received, before any JSON parsing. */
  rawBody: Uint8Array | string;
  headers: HeaderBag;
  /**
   * The secret given at registration. When set, a delivery without a valid signature is refused.
   * When absent the service signs nothing (spec §6) and the delivery is accepted unsigned.
   */
  secret?: string;
  headerNames?: ServiceHeaderNames;
}

/** Verifies and parses one delivery; throws WebhookVerificationError when it must be refused. */
export function verifyWebhook(options: VerifyOptions): VerifiedDelivery {
  const names = options.headerNames ?? DEFAULT_SERVICE_HEADERS;
  const signature = header(options.headers, names.signature);
  let signed = false;
  if (options.secret) {
    if (!signature) throw new WebhookVerificationError('missing-signature', `no ${names.signature} header, but a secret is set`);
    if (!/^sha256=[0-9a-fA-F]{64}$/.test(signature.trim())) {
      throw new WebhookVerificationError('malformed-signature', `${names.signature} is not of the form sha256=<64 hex digits>`);
    }
    if (!signatureMatches(options.rawBody, options.secret, signature)) {
      throw new WebhookVerificationError('bad-signature', `${names.signature} does not match the body`);
    }
    signed = true;
  }
  const text = typeof options.rawBody === 'string' ? options.rawBody : Buffer.from(options.rawBody).toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new WebhookVerificationError('not-json', 'the delivery body is not JSON');
  }
  const parsed = WebhookEvent.safeParse(json);
  if (!parsed.success) {
    const fe = zodFieldErrors(parsed.error)
      .slice(0, 5)
      .map((f) => `field "${f.field}": ${f.message}`)
      .join('; ');
    throw new WebhookVerificationError('invalid-event', `the delivery is not an event of the spec: ${fe}`);
  }
  // The header is the spec's deduplication id (§6); without it or a body deliveryId, the body's own
  // hash stands in, so a delivery sent twice is still recognised.
  const deliveryId =
    header(options.headers, names.deliveryId) ?? parsed.data.deliveryId ?? `sha256:${createHash('sha256').update(text).digest('hex')}`;
  return { event: parsed.data, deliveryId, signed };
}

/** Remembers delivery ids already handled (bounded), for a listener that must act once per delivery. */
export class DeliveryDeduplicator {
  private seen = new Set<string>();
  constructor(private readonly max = 10_000) {}
  /** True the first time an id is seen. */
  firstTime(deliveryId: string): boolean {
    if (this.seen.has(deliveryId)) return false;
    this.seen.add(deliveryId);
    if (this.seen.size > this.max) this.seen.delete(this.seen.values().next().value!);
    return true;
  }
}

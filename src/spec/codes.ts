// The vocabulary of the payout service, as its interface specification writes it (§2, §3, §7).
import * as z from 'zod';

/** Spec §3: payout statuses, identical in API responses and webhooks. */
export const PAYOUT_STATUSES = ['PENDING', 'ADDITIONAL_INFO_REQUIRED', 'PROCESSING', 'SUCCESSFUL', 'FAILED', 'REJECTED'] as const;
export const PayoutStatus = z.enum(PAYOUT_STATUSES);
export type PayoutStatus = z.infer<typeof PayoutStatus>;

/** Spec §3 document rule: no documents once a payout reached one of these. */
export const isFinalStatus = (s: string): boolean => ['SUCCESSFUL', 'FAILED', 'REJECTED'].includes(s);

export const StatusDetail = z.enum(['ADDITIONAL_INFO_UNDER_REVIEW']);
export type StatusDetail = z.infer<typeof StatusDetail>;

export const SwapStatus = z.enum(['PROCESSING', 'SUCCESSFUL', 'REJECTED']);
export type SwapStatus = z.infer<typeof SwapStatus>;

/** Spec §3 state table. Moves into FAILED and REJECTED are "not shown": any non-final status may take them. */
export const PAYOUT_TRANSITIONS: Record<PayoutStatus, readonly PayoutStatus[]> = {
  PENDING: ['ADDITIONAL_INFO_REQUIRED', 'PROCESSING', 'FAILED', 'REJECTED'],
  ADDITIONAL_INFO_REQUIRED: ['PENDING', 'FAILED', 'REJECTED'],
  PROCESSING: ['SUCCESSFUL', 'FAILED', 'REJECTED'],
  SUCCESSFUL: [],
  FAILED: [],
  REJECTED: [],
};
export const canTransition = (from: PayoutStatus, to: PayoutStatus): boolean => PAYOUT_TRANSITIONS[from].includes(to);

/** Spec §1.8: payment methods. HK_FPS is also written HONG_KONG_FPS. SWAP is for swaps only. */
export const PAYOUT_METHODS = [
  'NIP',
  'SWIFT',
  'ALIPAY',
  'WECHAT',
  'WIRE',
  'ACH',
  'CHINA_WIRE',
  'HK_FPS',
  'FASTER_PAYMENTS',
  'BACS',
  'SEPA',
] as const;
export const PayoutMethod = z.enum(PAYOUT_METHODS);
export type PayoutMethod = z.infer<typeof PayoutMethod>;

/** Spec §4.1 writes methods in lower case, its examples in upper: any case and HONG_KONG_FPS are accepted, the canonical name answered. */
export function canonicalMethod(raw: string): PayoutMethod | undefined {
  const up = raw
    .trim()
    .toUpperCase()
    .replace(/[\s-]+/g, '_');
  return PayoutMethod.safeParse(up === 'HONG_KONG_FPS' ? 'HK_FPS' : up).data;
}

/**
 * Spec §7: the error table, each code with its one status. A closed list: only these (and the code-less
 * 401, 403, the swap's 'Invalid payout amount', 429) are the service's own refusals; any other code may be a gateway's.
 */
export const ERROR_STATUS = {
  CORRIDOR_NOT_ENABLED: 400,
  MISSING_IDEMPOTENCY_KEY: 400,
  MISSING_REQUIRED_FIELDS: 400,
  INSUFFICIENT_FUNDS: 400,
  SWAP_WALLETS_MUST_DIFFER: 400,
  INVALID_SOURCE_CURRENCY: 400,
  INVALID_DESTINATION_CURRENCY: 400,
  UNSUPPORTED_CURRENCY_PAIR: 400,
  INVALID_PAYOUT_STATUS: 400,
  MAX_DOCUMENTS_EXCEEDED: 400,
  VALIDATION_ERROR: 400,
  PAYOUT_NOT_FOUND: 404,
  SWAP_NOT_FOUND: 404,
  SOURCE_WALLET_NOT_FOUND: 404,
  DESTINATION_WALLET_NOT_FOUND: 404,
  IDEMPOTENCY_KEY_CONFLICT: 409,
} as const satisfies Record<string, number>;

/** Spec §7: the swap amount mismatch has no code, only this message. */
export const INVALID_PAYOUT_AMOUNT_MESSAGE = 'Invalid payout amount';

export const DocumentContentType = z.enum(['application/pdf', 'image/jpeg', 'image/png']);
export type DocumentContentType = z.infer<typeof DocumentContentType>;
export const MAX_DOCUMENTS_PER_PAYOUT = 5;
export const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;
export const UPLOAD_URL_TTL_MS = 15 * 60 * 1000;

export const RATE_LIMIT_PER_SECOND = 5;
export const MONTHLY_QUOTA = 10_000;
export const LIST_MAX_LIMIT = 100;
export const COUNTRIES_DEFAULT_LIMIT = 50;

/** Spec §6: webhook event types. The legacy name matches the same deliveries. */
export const PAYOUT_STATUS_EVENT = 'payout.status.changed';
export const PAYOUT_STATUS_EVENT_LEGACY = 'payout.status.changed.v1';

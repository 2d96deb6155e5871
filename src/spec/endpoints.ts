// Paths and header names of the service (spec §4, §5, §6), in one place.

/** Spec §4: {payouts} and {webhooks} prefixes, relative to {base_url}. */
export const PAYOUTS_PREFIX = '/v1/payout-api/payouts';
export const WEBHOOKS_PREFIX = '/v1/payout-api/webhooks';
export const COUNTRIES_PATH = '/api/public/auth/countries';
export const TRANSACTIONS_PATH = '/api/public/transactions';

export const API_KEY_HEADER = 'x-api-key';
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const REQUEST_ID_HEADER = 'x-request-id';
export const CORRELATION_ID_HEADER = 'x-correlation-id';

/**
 * Spec §6: the service's own header names carry the maker's name; the spec writes them with
 * the neutral word "Service". They are kept here, and both the sandbox and the client take
 * overrides, so that pointing the tool at the real service is a configuration change.
 */
export const DEFAULT_SERVICE_HEADERS = { signature: 'X-Service-Signature', deliveryId: 'X-Service-Delivery-Id' };
export type ServiceHeaderNames = typeof DEFAULT_SERVICE_HEADERS;

/** Spec §1.5: the sandbox host is the production host with 'staging' inserted after 'gateway.' (environment.ts checks it has one). */
export const sandboxHostOf = (productionHost: string): string => productionHost.replace(/^gateway\./, 'gateway.staging.');

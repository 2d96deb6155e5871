// Paths and header names of the service (spec §4, §5, §6); {payouts} and {webhooks} relative to {base_url}.
export const PAYOUTS_PREFIX = '/v1/payout-api/payouts';
export const WEBHOOKS_PREFIX = '/v1/payout-api/webhooks';
export const COUNTRIES_PATH = '/api/public/auth/countries';
export const TRANSACTIONS_PATH = '/api/public/transactions';

export const API_KEY_HEADER = 'x-api-key';
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const REQUEST_ID_HEADER = 'x-request-id';
export const CORRELATION_ID_HEADER = 'x-correlation-id';

/** Spec §6 writes the service's header names with the neutral word "Service"; the client and the sandbox take overrides. */
export const DEFAULT_SERVICE_HEADERS = { signature: 'X-Service-Signature', deliveryId: 'X-Service-Delivery-Id' };
export type ServiceHeaderNames = typeof DEFAULT_SERVICE_HEADERS;

/** Spec §1.5: the sandbox host is the production host with 'staging' inserted after 'gateway.' (environment.ts checks it has one). */
export const sandboxHostOf = (productionHost: string): string => productionHost.replace(/^gateway\./, 'gateway.staging.');

// The payout service client: the one door through which every request of the tool goes.
export { PayoutClient } from './client.ts';
export type {
  PayoutClientOptions,
  IdempotentOptions,
  CreatedResult,
  InitiateResult,
  SwapResult,
  ListPageQuery,
  UploadedDocument,
} from './client.ts';
export { connect, type Connection, type ConnectOptions } from './connect.ts';
export { PayoutApiError, isPayoutApiError, KEY_PROPAGATION_MESSAGE, type Outcome, type FailureKind, type FieldError } from './errors.ts';
export { ApiKey, ClientConfigError, loadApiKey, parseKeyFile, keyFingerprint } from './api-key.ts';
export {
  resolveEnvironment,
  assertKeyFitsEnvironment,
  ENVIRONMENTS,
  DEFAULT_ENVIRONMENT,
  type EnvironmentName,
  type ResolvedEnvironment,
} from './environment.ts';
export {
  decideRetry,
  parseRetryAfter,
  backoffMs,
  DEFAULT_RETRY_POLICY,
  type RetryPolicy,
  type RetryDecision,
  type AttemptFailure,
} from './retry.ts';
export { SlidingWindowLimiter } from './throttle.ts';
export { UsageCounter, defaultStateDir, quotaSentence, type UsageReport, type KeyEnvironment } from './quota.ts';
export type { ClientEvent, CallResult, RequestOptions } from './http.ts';
export { verifyWebhook, signPayload, WebhookVerificationError, type VerifiedDelivery, type WebhookFailure } from './webhooks.ts';

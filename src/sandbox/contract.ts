// The public face of the sandbox: what tests, the demo, the client's `local` environment and the
// `payout-batch sandbox` command rely on. The implementation may add to it, never break it.
import type { ServiceHeaderNames } from '../spec/http.ts';

/** Names of the spec's routes, used for fault targeting and the request log. */
export type RouteName =
  | 'quote' | 'initiate' | 'getPayout' | 'listPayouts' | 'patchDocuments' | 'uploadUrl'
  | 'swap' | 'listSwaps' | 'getSwap' | 'pairs' | 'togglePair' | 'methods' | 'wallets'
  | 'registerWebhook' | 'listWebhooks' | 'getWebhook' | 'updateWebhook' | 'deleteWebhook'
  | 'countries' | 'transactions' | 'storagePut' | 'control' | 'unknown';

export interface FaultConfig {
  /** Added before answering, uniform in [min, max] ms. */
  latencyMs: [number, number];
  /** Probability of a 500/502/503 before the route has any effect. */
  errorBeforeEffect: number;
  /** Probability that a creating route (initiate, swap) creates, then answers 5xx anyway. */
  errorAfterCreate: number;
  /** Probability that a creating route creates, then destroys the socket with no answer. */
  dropAfterCreate: number;
  /** Probability of a 429 that the limits did not call for (it still counts as a request). */
  spurious429: number;
  /** Routes the probabilistic faults apply to; undefined means all spec routes. */
  routes?: RouteName[];
}

export interface SandboxOptions {
  /** 0 (the default) picks a free port. The server listens on 127.0.0.1 only. */
  port?: number;
  /** Businesses, keys, wallets, pairs and countries; the shipped default seed when absent. */
  seed?: unknown;
  /** Requests per rolling second per key across all routes (spec §8: 5). null turns it off. */
  rateLimitPerSecond?: number | null;
  /** Requests per calendar month per key (spec §8: 10,000). null turns it off. */
  monthlyQuota?: number | null;
  /** Keys that still answer 403, as during the spec's 20-30 minute propagation. */
  propagatingKeys?: string[];
  faults?: Partial<FaultConfig>;
  /** Timed PENDING -> PROCESSING -> SUCCESSFUL; off by default so tests drive the lifecycle. */
  autoAdvance?: { toProcessingMs: number; toSuccessfulMs: number } | false;
  serviceHeaders?: ServiceHeaderNames;
  /** Seeded randomness for faults, so a failing campaign can be replayed. */
  randomSeed?: number;
}

export interface RequestLogEntry {
  /** Arrival time, ms since the epoch (Date.now()). */
  at: number;
  /** The x-api-key as sent ('' when missing). */
  apiKey: string;
  method: string;
  path: string;
  route: RouteName;
  status: number;
}

export interface RunningSandbox {
  /** {base_url}, for example http://127.0.0.1:40123 */
  url: string;
  /** The keys the seed accepts, with their business. */
  keys: { key: string; businessId: string; businessName: string }[];
  requestLog(): RequestLogEntry[];
  setFaults(faults: Partial<FaultConfig>): void;
  close(): Promise<void>;
}

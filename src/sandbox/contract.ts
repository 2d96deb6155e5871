// The public face of the sandbox: what tests, the demo, the client's `local` environment and the
// `payout-batch sandbox` command rely on. The implementation may add to it, never break it.
import { z } from 'zod';
import { DocumentContentType } from '../spec/codes.ts';
import type { ServiceHeaderNames } from '../spec/endpoints.ts';
import { ErrorBody } from '../spec/schemas.ts';

/** Names of the routes (routes/routes.ts), for fault targeting and the request log; 'unknown' for a path no route matches. */
// prettier-ignore
export const ROUTE_NAMES = [
  'quote', 'initiate', 'getPayout', 'listPayouts', 'patchDocuments', 'uploadUrl', 'swap', 'listSwaps', 'getSwap',
  'pairs', 'togglePair', 'methods', 'wallets', 'registerWebhook', 'listWebhooks', 'getWebhook', 'updateWebhook',
  'deleteWebhook', 'countries', 'transactions', 'storagePut', 'storageGet', 'control', 'unknown',
] as const;
export type RouteName = (typeof ROUTE_NAMES)[number];

const probability = z.number().min(0).max(1);
/** What a gateway or proxy answers in the service's place: a 4xx or 5xx. */
const gatewayStatus = z.number().int().min(400).max(599);

export const FaultConfigSchema = z.strictObject({
  /** Added before answering, uniform in [min, max] ms. */
  latencyMs: z
    .tuple([z.number().int().min(0), z.number().int().min(0)])
    .refine(([a, b]) => a <= b, 'latencyMs is [min, max] with min <= max')
    .default([0, 0]),
  /** Probability of a 500/502/503 before the route has any effect. */
  errorBeforeEffect: probability.default(0),
  /** Probability that a creating route (initiate, swap) creates, then answers 5xx anyway. */
  errorAfterCreate: probability.default(0),
  /** Probability that a creating route creates, then destroys the socket with no answer. */
  dropAfterCreate: probability.default(0),
  /** Probability of a 429 that the limits did not call for (it still counts as a request). */
  spurious429: probability.default(0),
  /**
   * With this probability a creating route's success (new or replayed: the service acted) reaches
   * the client as a gateway's answer: `status` (or one drawn from the list) with `body` ('json': not
   * the service's error body).
   */
  gatewayAfterCreate: z
    .strictObject({
      probability,
      status: z.union([gatewayStatus, z.array(gatewayStatus).min(1)]).default(502),
      body: z.enum(['html', 'json', 'text', 'empty']).default('html'),
    })
    .optional(),
  /**
   * The rate moves between a pairs read and the swap (spec §1.11, §7 'Invalid payout amount'): after
   * a GET pairs, the next new swap finds its pair's rate moved by `pct` percent, `times` times in all.
   * Deterministic: no draw.
   */
  rateMoveAfterPairsRead: z
    .strictObject({
      pct: z
        .number()
        .gt(-100)
        .refine((v) => v !== 0, 'pct is a move: not 0'),
      times: z.number().int().min(1).default(1),
    })
    .optional(),
  /** The next N new swaps answer 201 PROCESSING (spec §4.7) and are reversed at once (REJECTED, spec §3). Deterministic. */
  rejectNextSwaps: z.number().int().min(0).optional(),
  /** Routes the probabilistic faults apply to; undefined means all spec routes. */
  routes: z.array(z.enum(ROUTE_NAMES)).optional(),
});
export type FaultConfig = z.output<typeof FaultConfigSchema>;

/** The reading answers are given in where the spec says "not shown": strict (views.ts) or variant (shapes.ts); README "Readings of the spec". */
export type SandboxShapes = 'strict' | 'variant';

/** The body of a gateway's answer (FaultConfig.gatewayAfterCreate). */
export type GatewayBody = NonNullable<FaultConfig['gatewayAfterCreate']>['body'];

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
  /** Delays between webhook delivery attempts, ms; default [500, 2000, 10000] (4 attempts in all). */
  webhookRetryDelaysMs?: number[];
  /** Time allowed for one webhook delivery attempt, ms; default 5000. */
  webhookTimeoutMs?: number;
  /** Called once per answered request (the CLI prints a line per request with it). */
  onRequest?: (entry: RequestLogEntry) => void;
  /** The sandbox clock's time before advanceClock's offset (clock.ts); timers still run on real time. */
  now?: () => number;
  /** 'strict' by default. Requests are checked the same way in both. */
  shapes?: SandboxShapes;
  /** A refusal of initiate or swap binds its key (idempotency.ts); default: on in the variant reading only. */
  storeRefusals?: boolean;
  /** A snapshot of an earlier sandbox of the same seed to go on from (persist.ts; the CLI's `local`). */
  state?: SandboxState;
}

/** One attempt to deliver one webhook event (additions of the sandbox). */
export interface WebhookDeliveryAttempt {
  deliveryId: string;
  eventType: string;
  businessId: string;
  url: string;
  attempt: number;
  /** Receiver's HTTP status; 0 when the attempt failed without an answer (see `error`). */
  status: number;
  error?: string;
  at: number;
}

export interface RequestLogEntry {
  /** Arrival time, ms since the epoch (Date.now()). */
  at: number;
  /** The x-api-key as sent ('' when missing). */
  apiKey: string;
  method: string;
  /** The path without the query string. */
  path: string;
  route: RouteName;
  /** The status answered; 0 when the connection was dropped with no answer (fault dropAfterCreate). */
  status: number;
}

/** What startSandbox returns. */
export interface LocalSandbox {
  /** {base_url}, for example http://127.0.0.1:40123 */
  url: string;
  /** The keys the seed accepts, with their business. */
  keys: { key: string; businessId: string; businessName: string }[];
  requestLog(): RequestLogEntry[];
  /** Replaces the fault configuration: fields not given mean "no fault" (setFaults({}) clears). */
  setFaults(faults: Partial<FaultConfig>): void;
  close(): Promise<void>;
  /** The seed of the fault PRNG (the option, or a random one): pass it back to replay a campaign. */
  randomSeed: number;
  /** The options in force (SandboxOptions). */
  shapes: SandboxShapes;
  storeRefusals: boolean;
  /** The fault configuration in force. */
  faults(): FaultConfig;
  /** Every webhook delivery attempt so far, oldest first. */
  deliveries(): WebhookDeliveryAttempt[];
  /** Moves the sandbox's clock forward (upload expiry, monthly quota, timestamps). */
  advanceClock(ms: number): void;
  /** Requests received, not yet answered nor dropped: tests wait for 0 after killing a client before counting the next's. */
  inFlight(): number;
  /** Webhook delivery attempts scheduled (retries included) or under way: tests wait for 0 instead of sleeping. */
  pendingDeliveries(): number;
  /** The state a later sandbox can go on from (SandboxOptions.state). */
  snapshot(): SandboxState;
}

// ---------------------------------------------------------------- the state a sandbox keeps between processes (persist.ts)

export const STATE_VERSION = 1;

const Entries = z.array(z.record(z.string(), z.unknown()));

/** The state file's shape; records are the store's own, amounts as decimal strings. */
export const SandboxStateSchema = z.object({
  v: z.literal(STATE_VERSION),
  hosts: z.array(z.string()),
  wallets: z.array(z.object({ walletId: z.string(), balance: z.string() })),
  pairs: z.array(z.object({ currencyPairId: z.string(), rate: z.string(), enabled: z.boolean() })),
  payouts: Entries,
  swaps: Entries,
  transactions: Entries,
  idempotency: z.array(
    z.object({
      slot: z.string(),
      fingerprint: z.string(),
      recordId: z.string().optional(),
      refusal: z.object({ status: z.number(), body: ErrorBody }).optional(),
    }),
  ),
  documents: z.array(
    z.object({
      uploadToken: z.string(),
      documentToken: z.string(),
      businessId: z.string(),
      contentType: DocumentContentType,
      expiresAt: z.number(),
      uploaded: z.object({ base64: z.string(), at: z.string() }).optional(),
    }),
  ),
});
export type SandboxState = z.infer<typeof SandboxStateSchema>;

// The public face of the sandbox (tests, the demo, `--env local`, `payout-batch sandbox`): add to it, never break it.
import * as z from 'zod';
import { DocumentContentType } from '../spec/codes.ts';
import type { ServiceHeaderNames } from '../spec/endpoints.ts';
import { ErrorBody } from '../spec/schemas.ts';

/** Names of the routes (routes/routes.ts), for fault targeting and the request log. */
// prettier-ignore
export const ROUTE_NAMES = [
  'quote', 'initiate', 'getPayout', 'listPayouts', 'patchDocuments', 'uploadUrl', 'swap', 'listSwaps', 'getSwap',
  'pairs', 'togglePair', 'methods', 'wallets', 'registerWebhook', 'listWebhooks', 'getWebhook', 'updateWebhook',
  'deleteWebhook', 'countries', 'transactions', 'storagePut', 'storageGet', 'control', 'unknown',
] as const;
export type RouteName = (typeof ROUTE_NAMES)[number];

const probability = z.number().min(0).max(1);
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
  /** A creating route's success (new or replayed) reaches the client as a gateway's answer: `status` (or one drawn) with `body`. */
  gatewayAfterCreate: z
    .strictObject({
      probability,
      status: z.union([gatewayStatus, z.array(gatewayStatus).min(1)]).default(502),
      body: z.enum(['html', 'json', 'text', 'empty']).default('html'),
    })
    .optional(),
  /** After a GET pairs, the next new swap finds its pair's rate moved by `pct` percent (spec §1.11), `times` times. */
  rateMoveAfterPairsRead: z
    .strictObject({
      pct: z
        .number()
        .gt(-100)
        .refine((v) => v !== 0, 'pct is a move: not 0'),
      times: z.number().int().min(1).default(1),
    })
    .optional(),
  /** The next N new swaps answer 201 PROCESSING (§4.7) and are reversed at once (REJECTED, §3). */
  rejectNextSwaps: z.number().int().min(0).optional(),
  routes: z.array(z.enum(ROUTE_NAMES)).optional(),
});
export type FaultConfig = z.output<typeof FaultConfigSchema>;

/** The reading of "not shown" answers: strict (views.ts) or variant (shapes.ts). */
export type SandboxShapes = 'strict' | 'variant';

export type GatewayBody = NonNullable<FaultConfig['gatewayAfterCreate']>['body'];

export interface SandboxOptions {
  port?: number;
  seed?: unknown;
  /** Requests per rolling second per key across all routes (spec §8: 5). null turns it off. */
  rateLimitPerSecond?: number | null;
  /** Requests per calendar month per key (spec §8: 10,000). null turns it off. */
  monthlyQuota?: number | null;
  /** Keys that answer 403 for the first 30 minutes of the sandbox's clock, as during the spec's 20-30 minute propagation. */
  propagatingKeys?: string[];
  faults?: Partial<FaultConfig>;
  /** Timed PENDING -> PROCESSING -> SUCCESSFUL; off by default so tests drive the lifecycle. */
  autoAdvance?: { toProcessingMs: number; toSuccessfulMs: number } | false;
  serviceHeaders?: ServiceHeaderNames;
  randomSeed?: number;
  /** Delays between webhook delivery attempts, ms; default [500, 2000, 10000]. */
  webhookRetryDelaysMs?: number[];
  webhookTimeoutMs?: number;
  onRequest?: (entry: RequestLogEntry) => void;
  /** Before advanceClock's offset (clock.ts); timers still run on real time. */
  now?: () => number;
  shapes?: SandboxShapes;
  /** A refusal of initiate or swap binds its key (idempotency.ts); default: on in the variant reading only. */
  storeRefusals?: boolean;
  /** A snapshot of an earlier sandbox of the same seed to go on from (start-sandbox.ts restoreState). */
  state?: SandboxState;
}

export interface WebhookDeliveryAttempt {
  deliveryId: string;
  eventType: string;
  businessId: string;
  url: string;
  attempt: number;
  /** 0 when the attempt failed without an answer (see `error`). */
  status: number;
  error?: string;
  at: number;
}

export interface RequestLogEntry {
  at: number;
  apiKey: string;
  method: string;
  path: string;
  route: RouteName;
  /** 0 when the connection was dropped (fault dropAfterCreate). */
  status: number;
  /** The Idempotency-Key sent, if any: which retry resends which request. */
  idempotencyKey?: string;
}

export const STATE_VERSION = 1;

const Entries = z.array(z.record(z.string(), z.unknown()));

/** The state file's shape (start-sandbox.ts snapshotState); records are the store's own, amounts as decimal strings. */
export const SandboxStateSchema = z.object({
  v: z.literal(STATE_VERSION),
  hosts: z.array(z.string()),
  wallets: z.array(z.object({ walletId: z.string(), balance: z.string() })),
  pairs: z.array(z.object({ currencyPairId: z.string(), rate: z.string(), enabled: z.boolean() })),
  payouts: Entries,
  swaps: Entries,
  transactions: Entries,
  /** Each API key's requests this month (rate-limits.ts), by the key's hash; absent in a state written before it was kept. */
  quota: z.array(z.object({ key: z.string(), month: z.string(), count: z.number().int() })).optional(),
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

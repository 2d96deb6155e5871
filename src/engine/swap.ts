// A swap that funds a short wallet before a batch pays from it (spec §4.7 swap, §4.8 swaps list,
// §4.9 pairs). A swap is money moving too: planned, approved, sent at most once per batch and
// currency, and reconciled. This file holds what the plan proposes and approvers sign
// (`SwapProposal`), the swap's identity (its reference and keys), and the journal lines of its life.
import { z } from 'zod';
import { scanJournal } from '../journal/journal.ts';
import { sha256Hex } from './identity.ts';

/**
 * What the plan proposes to fund one short currency, and what approvers sign. Amounts are exact
 * decimal strings in their currency's minor units; the rate is the pairs route's as read (spec
 * §4.9: baseCurrency, quoteCurrency, rate: quoteCurrency units per baseCurrency unit).
 */
export const SwapProposalSchema = z.object({
  /** The swap's reference (spec §4.7 `reference`, returned as payoutRef): swapReference(batchId, currency). */
  reference: z.string(),
  /** The short currency: the swap's destination (currencyToBeSent). */
  currency: z.string(),
  /** The funding wallet's currency (swapCurrency). */
  fromCurrency: z.string(),
  sourceWalletId: z.string(),
  destinationWalletId: z.string(),
  /** Debited from the funding wallet, in fromCurrency. */
  swapAmount: z.string(),
  /** Credited to the short wallet, in currency: the shortfall plus the margin, at least. */
  amountToBeSent: z.string(),
  /** The pair as the pairs route gave it when the plan was made. */
  pair: z.object({ baseCurrency: z.string(), quoteCurrency: z.string(), rate: z.string() }),
  /** What the batch lacks in `currency` (amounts, fees and the fee margin, less the balance). */
  shortfall: z.string(),
  /** Added above the shortfall, in `currency`, so that a fee or rate move does not leave the wallet short. */
  margin: z.string(),
  /** Balances before and after the swap and the batch, per currency of the two wallets. */
  balances: z.array(z.object({ currency: z.string(), before: z.string(), afterSwap: z.string(), afterBatch: z.string() })),
});
export type SwapProposal = z.infer<typeof SwapProposalSchema>;

/** The version tag of swap references and keys: changing it would let a resumed run swap twice. */
export const SWAP_VERSION = 'pbs1';

/**
 * The swap's reference: one per batch and currency, `PBS-<24 hex>-<CUR>`. It is sent as the swap's
 * `reference` and comes back as its payoutRef (spec §4.7), so any process on any host finds the
 * batch's swap in the swaps list (spec §4.8) before it sends one.
 */
export function swapReference(batchId: string, currency: string): string {
  return `PBS-${sha256Hex(`${SWAP_VERSION}|${batchId}|${currency}`).slice(0, 24)}-${currency}`;
}

/**
 * The swap's Idempotency-Key (required, spec §4.7): of its reference and the attempt only. A new
 * attempt is taken only after the swaps list shows no swap with this reference ("Invalid payout
 * amount": the rate moved, recompute and use a new key, spec §7).
 */
export function swapKey(reference: string, attempt: number): string {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be a positive integer, not ${attempt}`);
  return `${SWAP_VERSION}-${sha256Hex(`${SWAP_VERSION}|${reference}|${attempt}`).slice(0, 32)}-${attempt}`;
}

/** The swap as the service answered (spec §2 Swap), as the journal, results, status and report keep it. */
export const SwapSnapshotSchema = z.object({
  id: z.string(),
  payoutRef: z.string().optional(),
  status: z.string(),
  sourceAmount: z.string().optional(),
  sourceCurrency: z.string().optional(),
  destinationAmount: z.string().optional(),
  destinationCurrency: z.string().optional(),
  exchangeRate: z.string().optional(),
  createdAt: z.string().optional(),
});
export type SwapSnapshot = z.infer<typeof SwapSnapshotSchema>;

/**
 * The journal lines of a swap, in the batch's journal beside its rows' (`t: 'swap'`), keyed by the
 * short currency. `initiating` is fsynced before the request leaves, with the exact body sent.
 * - created: the service answered 201, or the swaps list shows the swap with this reference;
 * - unknown: the service may have acted (timeout, 5xx...): settled through the swaps list, never by a second swap;
 * - rejected: the service refused with its own code (nothing moved); REJECTED status is a `status` line;
 * - stale-rate: 'Invalid payout amount' (the rate moved); a new attempt follows only after the list shows none;
 * - status: a later status of the created swap (PROCESSING, SUCCESSFUL, REJECTED).
 */
export const SwapEventSchema = z.discriminatedUnion('phase', [
  z.object({
    t: z.literal('swap'),
    phase: z.literal('initiating'),
    currency: z.string(),
    reference: z.string(),
    attempt: z.number().int(),
    key: z.string(),
    body: z.string(),
    at: z.string(),
  }),
  z.object({
    t: z.literal('swap'),
    phase: z.literal('created'),
    currency: z.string(),
    reference: z.string(),
    attempt: z.number().int(),
    key: z.string(),
    swap: SwapSnapshotSchema,
    at: z.string(),
  }),
  z.object({
    t: z.literal('swap'),
    phase: z.enum(['unknown', 'rejected', 'stale-rate']),
    currency: z.string(),
    reference: z.string(),
    attempt: z.number().int(),
    key: z.string(),
    error: z.object({ status: z.number().optional(), code: z.string().optional(), message: z.string() }),
    at: z.string(),
  }),
  z.object({
    t: z.literal('swap'),
    phase: z.literal('status'),
    currency: z.string(),
    reference: z.string(),
    swap: SwapSnapshotSchema,
    at: z.string(),
  }),
]);
export type SwapEvent = z.infer<typeof SwapEventSchema>;

/** Where a batch's swap for one currency stands, folded from its journal lines in order. */
export interface SwapState {
  currency: string;
  reference: string;
  /** The highest attempt journalled, and its key. */
  attempt: number;
  key: string;
  /** The last phase of that attempt ('status' lines update `swap`, not the phase). */
  phase: Exclude<SwapEvent['phase'], 'status'>;
  /** The exact body of the attempt's request, as journalled before it left. */
  body?: string;
  /** The swap as last known (created, or a later status). */
  swap?: SwapSnapshot;
  error?: { status?: number; code?: string; message: string };
}

/** Folds a journal's swap lines (any other line is ignored) into one state per short currency. */
export function foldSwaps(events: Iterable<{ t: string }>): Map<string, SwapState> {
  const states = new Map<string, SwapState>();
  for (const raw of events) {
    if (raw.t !== 'swap') continue;
    const parsed = SwapEventSchema.safeParse(raw);
    if (!parsed.success) continue;
    const e = parsed.data;
    const s = states.get(e.currency);
    if (e.phase === 'status') {
      if (s) s.swap = e.swap;
      continue;
    }
    const next: SwapState =
      s && s.attempt === e.attempt ? s : { currency: e.currency, reference: e.reference, attempt: e.attempt, key: e.key, phase: e.phase };
    next.phase = e.phase;
    if (e.phase === 'initiating') next.body = e.body;
    if (e.phase === 'created') next.swap = e.swap;
    if (e.phase === 'unknown' || e.phase === 'rejected' || e.phase === 'stale-rate') next.error = e.error;
    // a created swap stands whatever attempt came after it: the batch has its one swap
    if (!s || e.attempt >= s.attempt || e.phase === 'created') states.set(e.currency, next);
  }
  return states;
}

/** A batch journal's swaps: its `swap` lines folded (foldSwaps); a missing journal has none. */
export function journalSwaps(journalPath: string): Map<string, SwapState> {
  const lines: { t: string }[] = [];
  scanJournal(journalPath, (e) => {
    if (e.t === 'swap') lines.push(e);
  });
  return foldSwaps(lines);
}

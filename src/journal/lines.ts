// The journal's lines and their fold into each row's state, by reference. Monotonic where money is concerned: once
// `created`, no line makes a row look unsent, except `resend` of a FAILED or REJECTED payout whose refund is journalled.
import * as z from 'zod';
import { nextStatus } from '../spec/status-order.ts';

export const JOURNAL_VERSION = 1;

/** An amount as the service wrote it (money.ts ApiAmount): a JSON number, or a decimal string. */
const Amount = z.union([z.number(), z.string()]);

const BatchHeader = z.object({
  t: z.literal('batch'),
  v: z.number(),
  /** 64 hex (engine/identity.ts). */
  batchId: z.string(),
  batchIdSource: z.enum(['content', 'flag']),
  /** The --batch-id as given. */
  batchLabel: z.string().optional(),
  env: z.string(),
  account: z.string().optional(),
  /** Absolute path of the batch file when the journal was created. */
  file: z.string(),
  fileSha256: z.string(),
  /** How the run read the file (Excel: the sheet; CSV: --encoding): `retry` reads it again so, to find its rows as judged. */
  sheet: z.string().optional(),
  encoding: z.string().optional(),
  results: z.string().optional(),
  createdAt: z.string(),
});
export type BatchHeader = z.infer<typeof BatchHeader>;

/** A created payout, enough for the results file; what spec §4.2 does not promise is optional. */
const PayoutSnapshot = z.object({
  id: z.string(),
  payoutRef: z.string().optional(),
  status: z.string(),
  sourceAmount: Amount,
  sourceCurrency: z.string(),
  destinationAmount: Amount.optional(),
  destinationCurrency: z.string(),
  transactionFees: Amount.optional(),
  exchangeRate: Amount.optional(),
  updatedAt: z.string().optional(),
  documents: z.number(),
  statusDetail: z.string().optional(),
  /** Compact JSON, while ADDITIONAL_INFO_REQUIRED. */
  informationRequests: z.string().optional(),
  reason: z.string().optional(),
  /** Set by a `refund` line: the wallet's CREDIT for this FAILED/REJECTED payout (exact decimal). */
  refunded: z.string().optional(),
  /** Its createdAt, when before the attempt's `initiating` line: a payout this ledger never created (spec §4.2 rule 1). */
  existedBefore: z.string().optional(),
  /** The answer lacked what the results show: read later from the payout list (engine/execute.ts completeCreated). */
  incomplete: z.object({ sentAt: z.string(), fresh: z.boolean(), serviceSentAt: z.string().optional() }).optional(),
});
export type PayoutSnapshot = z.infer<typeof PayoutSnapshot>;

const ErrorSnapshot = z.object({
  status: z.number().optional(),
  code: z.string().optional(),
  message: z.string(),
  requestId: z.string().optional(),
});
export type ErrorSnapshot = z.infer<typeof ErrorSnapshot>;

/** A swap as the service answered (spec §2 Swap): amounts as exact decimal text. */
export const SwapSnapshot = z.object({
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
export type SwapSnapshot = z.infer<typeof SwapSnapshot>;

const at = z.string();
const row = { ref: z.string(), attempt: z.number().int() };
const step = { ...row, key: z.string() };
const ofPayout = { ref: z.string(), payoutId: z.string() };
/** The fingerprint of the API key that sent an `initiating` line (client/api-key.ts; none in older journals). */
const apiKeyFingerprint = z.string().optional();
const swapStep = { t: z.literal('swap'), currency: z.string(), reference: z.string(), attempt: z.number().int(), key: z.string() };

/** A swap's lines by short currency: a row's steps, and `stale-rate` (nothing moved; a new attempt once the list shows none). */
const SwapLine = z.discriminatedUnion('phase', [
  z.object({ ...swapStep, phase: z.literal('initiating'), body: z.string(), apiKeyFingerprint, at }),
  z.object({ ...swapStep, phase: z.literal('created'), swap: SwapSnapshot, at }),
  z.object({ ...swapStep, phase: z.enum(['unknown', 'rejected', 'conflict', 'stale-rate']), error: ErrorSnapshot, at }),
  z.object({ t: z.literal('swap'), phase: z.literal('status'), currency: z.string(), reference: z.string(), swap: SwapSnapshot, at }),
]);
export type SwapEvent = z.infer<typeof SwapLine>;

/** Every line of a journal but the header: the batch's, each row's and each swap's. */
const RowLine = z.discriminatedUnion('t', [
  z.object({ t: z.literal('run'), at, command: z.string(), pid: z.number() }),
  z.object({ t: z.literal('run-end'), at, kind: z.string() }),
  z.object({
    t: z.literal('quote'),
    ...row,
    rate: Amount.optional(),
    fee: Amount.optional(),
    totalDeductible: Amount.optional(),
    destinationAmount: Amount,
  }),
  /** A document uploaded once per batch, by the sha256 of the bytes sent; its documentUrl is reused (spec §4.6). */
  z.object({ t: z.literal('doc'), sha256: z.string(), url: z.string() }),
  z.object({ t: z.literal('initiating'), ...step, row: z.number(), body: z.string(), apiKeyFingerprint, at }),
  z.object({ t: z.literal('created'), ...step, requestId: z.string(), payout: PayoutSnapshot, at }),
  z.object({ t: z.enum(['rejected', 'unknown', 'conflict']), ...step, error: ErrorSnapshot, at }),
  z.object({ t: z.literal('patched'), ...ofPayout, documents: z.array(z.string()), at }),
  z.object({ t: z.literal('patch-failed'), ...ofPayout, error: ErrorSnapshot, at }),
  z.object({ t: z.literal('attach'), ...row, supportingDocument: z.string(), documents: z.array(z.string()), at }),
  /** A later status (`status` GET, `listen` webhook), folded forward only (spec/status-order.ts). */
  z.object({
    t: z.literal('status'),
    ...ofPayout,
    status: z.string(),
    statusDetail: z.string().optional(),
    informationRequests: z.string().optional(),
    changedAt: z.string().optional(),
    source: z.enum(['get', 'webhook']),
    deliveryId: z.string().optional(),
    reason: z.string().optional(),
    at,
  }),
  z.object({ t: z.literal('refund'), ...ofPayout, amount: z.string(), transactionId: z.string().optional(), at }),
  z.object({ t: z.literal('completed'), ...ofPayout, payout: PayoutSnapshot, at }),
  /** `retry --resend-failed`, before the new attempt's `initiating` (folded only as applyResend allows). */
  z.object({ t: z.literal('resend'), ...ofPayout, at }),
  /** `retry` of a refused row: key `attempt` proven to hold no payout, ever (engine/spent.ts): attempt + 1 may go. */
  z.object({ t: z.literal('key-spent'), ...step, proof: z.string(), at }),
  /** Sanctions screening held the row's payee (`payee`: screen-batch.ts payeeDigest), or passed one held before. */
  z.object({ t: z.literal('screened'), ref: z.string(), payee: z.string(), held: z.boolean(), at }),
  SwapLine,
]);
export type RowEvent = z.infer<typeof RowLine>;

export const JournalLine = z.union([BatchHeader, RowLine]);
export type JournalLine = z.infer<typeof JournalLine>;

export type RowPhase = 'none' | 'initiating' | 'unknown' | 'created' | 'rejected' | 'conflict';

export interface RowState {
  ref: string;
  row?: number;
  phase: RowPhase;
  /** The latest attempt journalled (0: never initiated), and its key. */
  attempt: number;
  key?: string;
  /** The latest attempt's exact body, resent byte for byte while unsettled; dropped once created. */
  body?: string;
  /** Which API key sent it (its `initiating` line's): only that one resends it (engine/send.ts I2). */
  apiKeyFingerprint?: string;
  /** The body the service last refused under `key` (spent.ts sends it again after a 409 to another). */
  refused?: { key: string; body: string; error: ErrorSnapshot };
  payout?: PayoutSnapshot;
  requestId?: string;
  error?: ErrorSnapshot;
  /** The documentUrls of the latest attempt with documents, in order (the initiate's first). */
  documents: string[];
  patched: boolean;
  patchError?: ErrorSnapshot;
  attach?: { attempt: number; documents: string[] };
  quote?: Omit<Extract<RowEvent, { t: 'quote' }>, 't' | 'ref'>;
  /** Earlier payouts, failed after creation, refunded and sent again (`resend`). */
  earlier?: PayoutSnapshot[];
  /** Held by the last screening of the row: a run that screens nobody keeps it held. */
  held?: { payee: string; at: string };
}

/** A created payout that failed after creation (refunded by the service), which `retry --resend-failed` may send again. */
export const isFailedAfterCreation = (status: string | undefined): boolean => status === 'FAILED' || status === 'REJECTED';

/** Reopened by `resend` (its failed payout refunded) and nothing sent since: a resend begun, its new attempt still to go. */
export const resendBegun = (s: RowState): boolean => s.phase === 'rejected' && !!s.earlier?.length && s.body === undefined;

export interface FoldedJournal {
  header: BatchHeader | undefined;
  rows: Map<string, RowState>;
  /** The documents uploaded for the batch: sha256 of the bytes sent → documentUrl (`doc` lines). */
  uploads: Map<string, string>;
  runs: number;
  /** A run started and never wrote its end: it crashed or was killed. */
  interrupted: boolean;
  swaps: Map<string, SwapState>;
}

/** Where a batch's swap for one currency stands: a row's steps (RowState), named by the short currency. */
export interface SwapState {
  currency: string;
  reference: string;
  attempt: number;
  key: string;
  /** The last step of that attempt (`status` lines update `swap`, not the phase). */
  phase: Exclude<SwapEvent['phase'], 'status'>;
  body?: string;
  apiKeyFingerprint?: string;
  swap?: SwapSnapshot;
  error?: ErrorSnapshot;
}

const fresh = (ref: string): RowState => ({ ref, phase: 'none', attempt: 0, documents: [], patched: false });

/** Applies one line to the states (mutating). Unknown event types are ignored (forward compatible). */
export function applyEvent(folded: FoldedJournal, e: JournalLine): void {
  // The latest header wins: a batch renamed before anything was sent records its new name.
  if (e.t === 'batch') return void (folded.header = e);
  if (e.t === 'run') folded.runs++;
  if (e.t === 'run' || e.t === 'run-end') return void (folded.interrupted = e.t === 'run');
  if (e.t === 'doc') return void folded.uploads.set(e.sha256, e.url);
  if (e.t === 'swap') return applySwap(folded.swaps, e);
  if (typeof e.ref !== 'string') return;
  const s = folded.rows.get(e.ref) ?? folded.rows.set(e.ref, fresh(e.ref)).get(e.ref)!;
  const created = s.phase === 'created';
  switch (e.t) {
    case 'quote': {
      const { attempt, rate, fee, totalDeductible, destinationAmount } = e;
      s.quote = { attempt, rate, fee, totalDeductible, destinationAmount };
      break;
    }
    case 'initiating':
      if (created) break;
      s.row = e.row;
      s.phase = 'initiating';
      s.attempt = Math.max(s.attempt, e.attempt);
      s.key = e.key;
      s.body = e.body;
      s.apiKeyFingerprint = e.apiKeyFingerprint;
      s.error = undefined;
      break;
    case 'created':
      s.phase = 'created';
      s.body = s.refused = undefined; // (never resent: most of a journal's bytes)
      s.payout = e.payout;
      s.requestId = e.requestId;
      s.attempt = Math.max(s.attempt, e.attempt);
      s.key = e.key;
      s.error = undefined;
      break;
    case 'rejected':
    case 'unknown':
    case 'conflict':
      if (created) break;
      if (e.t === 'rejected' && s.body !== undefined && s.key === e.key) s.refused = { key: e.key, body: s.body, error: e.error };
      s.phase = e.t;
      s.error = e.error;
      s.requestId = e.error.requestId;
      break;
    case 'patched':
      s.patched = true;
      s.patchError = undefined;
      break;
    case 'attach':
      if (created) break;
      s.attach = { attempt: e.attempt, documents: e.documents };
      s.documents = [e.supportingDocument, ...e.documents];
      break;
    case 'patch-failed':
      if (!s.patched) s.patchError = e.error;
      break;
    case 'status':
      if (created) applyStatus(s, e);
      break;
    case 'refund':
    case 'completed':
      if (created && s.payout?.id === e.payoutId) s.payout = e.t === 'refund' ? { ...s.payout, refunded: e.amount } : e.payout;
      break;
    case 'resend':
      if (created) applyResend(s, e);
      break;
    case 'screened':
      s.held = e.held ? { payee: e.payee, at: e.at } : undefined;
      break;
  }
}

/** A swap's line: as a row's, but a created swap stands whatever attempt came after it (the batch has its one swap). */
function applySwap(swaps: Map<string, SwapState>, e: SwapEvent): void {
  const s = swaps.get(e.currency);
  if (e.phase === 'status') {
    if (s) s.swap = e.swap;
    return;
  }
  const next: SwapState =
    s && s.attempt === e.attempt ? s : { currency: e.currency, reference: e.reference, attempt: e.attempt, key: e.key, phase: e.phase };
  next.phase = e.phase;
  if (e.phase === 'initiating') Object.assign(next, { body: e.body, apiKeyFingerprint: e.apiKeyFingerprint });
  else if (e.phase === 'created') next.swap = e.swap;
  else next.error = e.error;
  if (!s || e.attempt >= s.attempt || e.phase === 'created') swaps.set(e.currency, next);
}

/** A status of the created payout, forward only (status-order.ts): an older or equal one changes nothing. */
function applyStatus(s: RowState, ev: Extract<RowEvent, { t: 'status' }>): void {
  const p = s.payout;
  if (!p || p.id !== ev.payoutId) return;
  const from = { status: p.status, statusDetail: p.statusDetail, at: p.updatedAt };
  // (the service's time only: a list item has none (spec §2), and when it was journalled is not when it changed)
  if (!nextStatus(from, { status: ev.status, statusDetail: ev.statusDetail, at: ev.changedAt }).apply) return;
  s.payout = { ...p, status: ev.status, statusDetail: ev.statusDetail };
  if (ev.changedAt) s.payout.updatedAt = ev.changedAt;
  else delete s.payout.updatedAt;
  if (ev.reason) s.payout.reason = ev.reason;
  else if (ev.status !== p.status) delete s.payout.reason;
  if (ev.status === 'ADDITIONAL_INFO_REQUIRED') {
    if (ev.informationRequests) s.payout.informationRequests = ev.informationRequests;
  } else delete s.payout.informationRequests;
}

/** The one way out of `created`: only for this payout, failed after creation, its refund seen. */
function applyResend(s: RowState, ev: Extract<RowEvent, { t: 'resend' }>): void {
  const p = s.payout;
  if (!p || p.id !== ev.payoutId || !isFailedAfterCreation(p.status) || p.refunded === undefined) return;
  s.earlier = [...(s.earlier ?? []), p];
  s.phase = 'rejected';
  s.payout = undefined;
  s.patched = false;
  s.patchError = undefined;
  s.error = {
    code: `PAYOUT_${p.status}`,
    message: `payout ${p.payoutRef ?? p.id} ${p.status} after creation and was refunded (${p.refunded}); not sent again yet: payout-batch retry RESULTS sends it under attempt ${s.attempt + 1}`,
  };
}

export function emptyFold(): FoldedJournal {
  return { header: undefined, rows: new Map(), uploads: new Map(), runs: 0, interrupted: false, swaps: new Map() };
}

export function foldJournal(lines: Iterable<JournalLine>): FoldedJournal {
  const folded = emptyFold();
  for (const e of lines) applyEvent(folded, e);
  return folded;
}

/** The state of one row (a fresh one when the journal never named it). */
export function rowState(folded: FoldedJournal, ref: string): RowState {
  return folded.rows.get(ref) ?? fresh(ref);
}

/** The documentUrls a created payout still needs by PATCH: its attempt's `attach` line's, until `patched`. */
export function documentsToAttach(s: RowState): string[] {
  if (s.phase !== 'created' || s.patched || s.attach?.attempt !== s.attempt) return [];
  return s.attach.documents;
}

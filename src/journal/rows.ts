// The events the batch engine writes to a journal, and the fold that turns them back into each
// row's state. A row is named by its reference (the row identity of the idempotency key).
//
// The fold is monotonic where money is concerned: once a row is `created` no later line can make
// it look unsent, so a resumed run can never send it again. The one exception is `resend`
// (`retry --resend-failed`), folded only when that payout FAILED or was REJECTED and its refund is
// journalled: the row may then go again under attempt + 1, the old payout kept in `earlier`.
import { scanJournal, type JournalEvent, type JournalScan } from './journal.ts';
import { nextStatus } from '../interface/status-order.ts';
import type { ApiAmount } from '../money.ts';

export const JOURNAL_VERSION = 1;

/** The first line of a journal: which batch this is. */
export interface BatchHeader extends JournalEvent {
  t: 'batch';
  v: number;
  /** 64 hex: sha256 of the file's bytes, or of "pb1-batch-id|" + the --batch-id given (engine/identity.ts). */
  batchId: string;
  batchIdSource: 'content' | 'flag';
  /** The --batch-id as given, when one was. */
  batchLabel?: string;
  /** Environment name (local, sandbox, production, custom). */
  env: string;
  /** Absolute path of the batch file when the journal was created. */
  file: string;
  /** sha256 of the file's bytes (equals batchId when batchIdSource is content). */
  fileSha256: string;
  /** Where the results file was written. */
  results?: string;
  createdAt: string;
}

/**
 * What the journal keeps of a created payout: enough for the results file without asking again.
 * Amounts as the service wrote them (JSON numbers, or decimal strings in some readings); the ones
 * the service's answer may lack (spec §4.2 promises only id, status, payoutRef, sourceAmount,
 * destinationAmount and exchangeRate) are optional, and the currencies and sourceAmount fall back
 * on the request that created the payout.
 */
export interface PayoutSnapshot {
  id: string;
  payoutRef?: string;
  status: string;
  sourceAmount: ApiAmount;
  sourceCurrency: string;
  destinationAmount?: ApiAmount;
  destinationCurrency: string;
  transactionFees?: ApiAmount;
  exchangeRate?: ApiAmount;
  updatedAt?: string;
  documents: number;
  /** Set by later `status` lines (status refresh, webhooks): ADDITIONAL_INFO_UNDER_REVIEW. */
  statusDetail?: string;
  /** Compact JSON of the payout's informationRequests while ADDITIONAL_INFO_REQUIRED. */
  informationRequests?: string;
  /** The service's reason for the latest status (webhook data.reason), when one was given. */
  reason?: string;
  /** Set by a `refund` line: the CREDIT the wallet's transactions show for this FAILED/REJECTED payout (exact decimal). */
  refunded?: string;
  /**
   * The payout's createdAt when it is before the `initiating` line of the attempt that received
   * it: the service answered the key with a payout this ledger never created (spec §4.2 rule 1),
   * already paid at this account (engine/execute.ts).
   */
  existedBefore?: string;
  /**
   * The initiate answer lacked what the results show, or the createdAt of a fresh attempt (sent at
   * `sentAt`): read later from the payout list (engine/execute.ts completeCreated).
   */
  incomplete?: { sentAt: string; fresh: boolean };
}

export interface ErrorSnapshot {
  status?: number;
  code?: string;
  message: string;
  requestId?: string;
}

export type RowEvent =
  | { t: 'run'; at: string; command: string; pid: number }
  | { t: 'run-end'; at: string; kind: string }
  | {
      t: 'quote';
      ref: string;
      attempt: number;
      rate?: ApiAmount;
      fee?: ApiAmount;
      totalDeductible?: ApiAmount;
      destinationAmount: ApiAmount;
    }
  /**
   * A line of the batch, not of a row: a document uploaded, once per batch, by the sha256 of the
   * bytes sent (for --merge-documents, of the merged PDF), and its documentUrl, reused by every
   * row, attempt and run sending the same bytes (spec §4.6: the documentUrl is stable).
   */
  | { t: 'doc'; sha256: string; url: string }
  /** Written and fsynced before initiate leaves: the key and the exact body text. */
  | { t: 'initiating'; ref: string; row: number; attempt: number; key: string; body: string; at: string }
  | { t: 'created'; ref: string; attempt: number; key: string; requestId: string; payout: PayoutSnapshot; at: string }
  /**
   * rejected: a definitive refusal (4xx other than 409): the row may be edited and sent under attempt + 1.
   * unknown: the answer never came or was a 5xx: resend the same key and body until known.
   * conflict: 409 IDEMPOTENCY_KEY_CONFLICT: for a person to resolve, never resent under a new key.
   */
  | { t: 'rejected' | 'unknown' | 'conflict'; ref: string; attempt: number; key: string; error: ErrorSnapshot; at: string }
  | { t: 'patched'; ref: string; payoutId: string; documents: string[]; at: string }
  | { t: 'patch-failed'; ref: string; payoutId: string; error: ErrorSnapshot; at: string }
  /**
   * Written before a fresh attempt's initiate, for a row with documents: the documentUrl sent on
   * initiate (`supportingDocument`; absent in earlier versions' lines) and those its payout is to
   * get by PATCH once created (all the others; none when merged). Until a `patched` line, every
   * later run attaches them (documentsToAttach).
   */
  | { t: 'attach'; ref: string; attempt: number; supportingDocument?: string; documents: string[]; at: string }
  /**
   * A later status of a created payout, learnt by `status` (GET) or `listen` (webhook). Folded
   * forward only (interface/status-order.ts), so a resumed run or a retry writes the latest status known
   * and never moves a row back.
   */
  | {
      t: 'status';
      ref: string;
      payoutId: string;
      status: string;
      statusDetail?: string;
      informationRequests?: string;
      changedAt?: string;
      source: 'get' | 'webhook';
      deliveryId?: string;
      reason?: string;
      at: string;
    }
  /**
   * The refund of a FAILED or REJECTED payout, seen in the wallet's transactions (a CREDIT
   * referencing it): its amount as an exact decimal string in the source currency.
   */
  | { t: 'refund'; ref: string; payoutId: string; amount: string; transactionId?: string; at: string }
  /** The payout of a `created` line marked `incomplete`, completed from the payout list (engine/execute.ts completeCreated). */
  | { t: 'completed'; ref: string; payoutId: string; payout: PayoutSnapshot; at: string }
  /**
   * `retry --resend-failed`, just before the new attempt's `initiating`: the row's payout FAILED or
   * was REJECTED and its refund is journalled, so the row is open again for attempt + 1. Folded only
   * under those conditions (never for a payout in progress or paid); the old payout is kept in `earlier`.
   */
  | { t: 'resend'; ref: string; payoutId: string; at: string }
  /**
   * `retry` of a refused row: the service showed that key `attempt` holds no payout and never will
   * (it holds a stored refusal: engine/spent.ts), so attempt + 1 may go under a new key. Written
   * after the sends that prove it (their own initiating and answer lines) and before that attempt.
   */
  | { t: 'key-spent'; ref: string; attempt: number; key: string; proof: string; at: string };

export type JournalLine = BatchHeader | RowEvent;

export type RowPhase = 'none' | 'initiating' | 'unknown' | 'created' | 'rejected' | 'conflict';

export interface RowState {
  ref: string;
  row?: number;
  phase: RowPhase;
  /** The latest attempt journalled (0: never initiated). */
  attempt: number;
  /** Key of the latest attempt. */
  key?: string;
  /**
   * The exact body text of the latest attempt, kept while the row is unsettled (initiating or
   * unknown: resent byte for byte) and after a refusal or conflict; dropped once the row is
   * created, which is never sent again.
   */
  body?: string;
  payout?: PayoutSnapshot;
  requestId?: string;
  error?: ErrorSnapshot;
  /** The documentUrls of the latest attempt with documents, in order (the initiate's first). */
  documents: string[];
  patched: boolean;
  patchError?: ErrorSnapshot;
  /** The `attach` line of the latest attempt that had documents. */
  attach?: { attempt: number; documents: string[] };
  quote?: { attempt: number; rate?: ApiAmount; fee?: ApiAmount; totalDeductible?: ApiAmount; destinationAmount: ApiAmount };
  /** Payouts of earlier attempts that FAILED or were REJECTED, were refunded and were sent again (`resend`). */
  earlier?: PayoutSnapshot[];
}

/** A created payout that failed after creation (refunded by the service), which `retry --resend-failed` may send again. */
export const isFailedAfterCreation = (status: string | undefined): boolean => status === 'FAILED' || status === 'REJECTED';

export interface FoldedJournal {
  header: BatchHeader | undefined;
  rows: Map<string, RowState>;
  /** The documents uploaded for the batch: sha256 of the bytes sent → documentUrl (`doc` lines). */
  uploads: Map<string, string>;
  runs: number;
  /** A run started and never wrote its end: it crashed or was killed. */
  interrupted: boolean;
}

const fresh = (ref: string): RowState => ({ ref, phase: 'none', attempt: 0, documents: [], patched: false });

/** Applies one line to the states (mutating). Unknown event types are ignored (forward compatible). */
export function applyEvent(folded: FoldedJournal, e: JournalLine): void {
  if (e.t === 'batch' || e.t === 'run' || e.t === 'run-end') return applyBatchLine(folded, e);
  if (e.t === 'doc' && typeof e.sha256 === 'string') return void folded.uploads.set(e.sha256, e.url);
  // (a `doc` line with a `ref`: an earlier version's, one row's upload named by its file)
  const ev = e as (RowEvent | { t: 'doc'; ref: string; url: string }) & { ref?: string };
  if (typeof ev.ref !== 'string') return;
  let s = folded.rows.get(ev.ref);
  if (!s) {
    s = fresh(ev.ref);
    folded.rows.set(ev.ref, s);
  }
  const created = s.phase === 'created';
  switch (ev.t) {
    case 'quote': {
      const { attempt, rate, fee, totalDeductible, destinationAmount } = ev;
      s.quote = { attempt, rate, fee, totalDeductible, destinationAmount };
      break;
    }
    case 'doc':
      if (!s.documents.includes(ev.url)) s.documents.push(ev.url);
      break;
    case 'initiating':
      if (created) break;
      s.row = ev.row;
      s.phase = 'initiating';
      s.attempt = Math.max(s.attempt, ev.attempt);
      s.key = ev.key;
      s.body = ev.body;
      s.error = undefined;
      break;
    case 'created':
      s.phase = 'created';
      // Never needed again (a created row is never resent), and most of a journal's bytes.
      s.body = undefined;
      s.payout = ev.payout;
      s.requestId = ev.requestId;
      s.attempt = Math.max(s.attempt, ev.attempt);
      s.key = ev.key;
      s.error = undefined;
      break;
    case 'rejected':
    case 'unknown':
    case 'conflict':
      if (created) break;
      s.phase = ev.t;
      s.error = ev.error;
      s.requestId = ev.error.requestId;
      break;
    case 'patched':
      s.patched = true;
      s.patchError = undefined;
      break;
    case 'attach':
      if (created) break;
      s.attach = { attempt: ev.attempt, documents: ev.documents };
      if (ev.supportingDocument) s.documents = [ev.supportingDocument, ...ev.documents];
      break;
    case 'patch-failed':
      if (!s.patched) s.patchError = ev.error;
      break;
    case 'status':
      if (created) applyStatus(s, ev);
      break;
    case 'refund':
      if (created && s.payout && s.payout.id === ev.payoutId) s.payout = { ...s.payout, refunded: ev.amount };
      break;
    case 'completed':
      if (created && s.payout && s.payout.id === ev.payoutId) s.payout = ev.payout;
      break;
    case 'resend':
      if (created) applyResend(s, ev);
      break;
  }
}

/** A line about the batch, not a row: its header, and the start and end of each run. */
function applyBatchLine(folded: FoldedJournal, e: Extract<JournalLine, { t: 'batch' | 'run' | 'run-end' }>): void {
  // The latest header wins: a batch renamed before anything was sent records its new name.
  if (e.t === 'batch') folded.header = e;
  else if (e.t === 'run') {
    folded.runs++;
    folded.interrupted = true;
  } else folded.interrupted = false;
}

/** A status of the created payout, forward only (status-order.ts): an older or equal one changes nothing. */
function applyStatus(s: RowState, ev: Extract<RowEvent, { t: 'status' }>): void {
  const p = s.payout;
  if (!p || p.id !== ev.payoutId) return;
  const when = ev.changedAt ?? ev.at;
  const from = { status: p.status, statusDetail: p.statusDetail, at: p.updatedAt };
  if (!nextStatus(from, { status: ev.status, statusDetail: ev.statusDetail, at: when }).apply) return;
  s.payout = { ...p, status: ev.status, statusDetail: ev.statusDetail, updatedAt: when };
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
    message: `payout ${p.payoutRef ?? p.id} ${p.status} after creation and was refunded (${p.refunded}); sent again under attempt ${s.attempt + 1}`,
  };
}

export function emptyFold(): FoldedJournal {
  return { header: undefined, rows: new Map(), uploads: new Map(), runs: 0, interrupted: false };
}

/** Folds lines, in order, into every row's state. */
export function foldJournal(lines: Iterable<JournalLine>): FoldedJournal {
  const folded = emptyFold();
  for (const e of lines) applyEvent(folded, e);
  return folded;
}

export interface FoldedJournalFile extends JournalScan {
  folded: FoldedJournal;
}

/**
 * Reads and folds a journal file in one pass: each line is applied as it is read, so no array of
 * events is built and memory holds only the row states (the same states as
 * foldJournal(readJournal(path).events)). The journal is the only state: every resume folds it
 * whole.
 */
export function foldJournalFile(path: string): FoldedJournalFile {
  const folded = emptyFold();
  const scan = scanJournal<JournalLine>(path, (e) => applyEvent(folded, e));
  return { folded, ...scan };
}

/** The state of one row (a fresh one when the journal never named it). */
export function rowState(folded: FoldedJournal, ref: string): RowState {
  return folded.rows.get(ref) ?? fresh(ref);
}

/**
 * The documentUrls a created payout still needs attached by PATCH: those its attempt's `attach`
 * line named, until a `patched` line. A row with documents always has one (written before its
 * initiate); a row without has nothing to attach.
 */
export function documentsToAttach(s: RowState): string[] {
  if (s.phase !== 'created' || s.patched || s.attach?.attempt !== s.attempt) return [];
  return s.attach.documents;
}

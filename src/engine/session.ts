// Opening a batch's state: find its journal, recognise a batch seen before (I4), fold what the last runs did, report it.
import { basename } from 'node:path';
import {
  JOURNAL_VERSION,
  applyEvent,
  resendBegun,
  type BatchHeader,
  type FoldedJournal,
  type JournalLine,
  type RowEvent,
  type RowState,
  type SwapEvent,
  type SwapState,
} from '../journal/lines.ts';
import { BatchRefused, foldBatch, type BatchFold, type JournalAppender, type Ledger, type Reservation } from '../ledger/account-ledger.ts';
import type { BatchIdentity } from './identity.ts';

export interface ResumeReport {
  /** The journal existed: this run continues an earlier one. */
  resumed: boolean;
  /** The last run never finished (crash, kill): wait before the first request. */
  interrupted: boolean;
  runs: number;
  created: number;
  /** Rows whose outcome must be settled first (same key, same body). */
  toSettle: number;
  rejected: number;
  conflicts: number;
  /** Rows a retry --resend-failed reopened (their failed payout refunded) and stopped before sending again. */
  resending: number;
  /** Journal lines skipped as torn or unreadable. */
  skippedLines: number;
}

export interface BatchSession {
  /** Where the journal is, for messages. */
  journalPath: string;
  ledger: Ledger;
  header: BatchHeader;
  folded: FoldedJournal;
  writer: JournalAppender;
  report: ResumeReport;
  /** When the journal was last written before this run (ms since the epoch; 0 when new). */
  lastWriteMs: number;
  /** How far the journal has been folded (catchUpStatuses). */
  readOffset: number;
  /** This run's reservation of its references in the account's ledger, once taken. */
  reservation?: Pick<Reservation, 'guard' | 'release'>;
}

/** `sheet`, `encoding`: how the run read the batch file, for its header. */
export interface OpenSessionOptions extends Pick<BatchHeader, 'sheet' | 'encoding'> {
  identity: BatchIdentity;
  env: string;
  ledger: Ledger;
  /** Absolute path of the batch file. */
  file: string;
  /** 'run' refuses a file seen under another name; 'retry' takes the journal as it is. */
  command: 'run' | 'retry';
  resultsPath?: string;
  /** The journal as read already (foldBatch), when the caller needed its states first. */
  read?: BatchFold;
}

/** A batch's journal states by reference, once its identity is known. */
export type JournalLookup = (identity: BatchIdentity) => Promise<((reference: string) => RowState | undefined) | undefined>;

/** For loadBatch: reads the journal once the identity is known, and keeps that read for the session to open on. */
export function journalReader(ledger: Ledger): { lookup: JournalLookup; read: () => BatchFold | undefined } {
  let read: BatchFold | undefined;
  const lookup: JournalLookup = async (identity) => {
    read = await foldBatch(ledger, identity.batchId);
    const rows = read.folded.rows;
    return (reference) => rows.get(reference);
  };
  return { lookup, read: () => read };
}

/** The ResumeReport count each phase adds to (none: a row not sent). */
const COUNTED: Partial<Record<RowState['phase'], 'created' | 'toSettle' | 'rejected' | 'conflicts'>> = {
  created: 'created',
  initiating: 'toSettle',
  unknown: 'toSettle',
  rejected: 'rejected',
  conflict: 'conflicts',
};

function reportOf(folded: FoldedJournal, resumed: boolean, skipped: number): ResumeReport {
  const n = { created: 0, toSettle: 0, rejected: 0, conflicts: 0, resending: 0 };
  for (const s of folded.rows.values()) {
    const k = resendBegun(s) ? 'resending' : COUNTED[s.phase];
    if (k) n[k]++;
  }
  return { resumed, interrupted: folded.interrupted, runs: folded.runs, ...n, skippedLines: skipped };
}

/** I4: the same content under another file name is refused once anything was sent; the same name is a resume (false: no journal yet). */
export function checkSameBatch(folded: FoldedJournal, file: string, identity: BatchIdentity, env: string, journal: string): boolean {
  const { header } = folded;
  if (!header) return false;
  const sent = folded.uploads.size > 0 || [...folded.rows.values()].some((s) => s.phase !== 'none' || s.documents.length > 0);
  const renamed = basename(header.file) !== basename(file);
  if (identity.source === 'content' && renamed && sent) {
    throw new BatchRefused(
      `this file has the same content as ${header.file}, already processed on ${header.createdAt.slice(0, 10)} (UTC) in ${env}` +
        `${header.results ? ` (results: ${header.results})` : ''} (journal ${journal}). Nothing was sent. ` +
        'Running it again under another name would pay the same rows twice. To continue that batch, run the original file again; ' +
        'a reference is paid once per account: to pay the same people again, give the rows new references.',
      'same-content-other-name',
    );
  }
  // (the environment label is not checked: the same service under another label is the same batch)
  return renamed;
}

/** Opens (or creates) the journal of a batch for appending. */
export async function openSession(o: OpenSessionOptions): Promise<BatchSession> {
  const { ledger } = o;
  const path = ledger.journalOf(o.identity.batchId);
  const read = o.read?.ledger === ledger && o.read.batchId === o.identity.batchId ? o.read : await foldBatch(ledger, o.identity.batchId);
  const folded = read.folded;
  const resumed = !!folded.header;
  const renamed = o.command === 'run' && checkSameBatch(folded, o.file, o.identity, o.env, path);
  const writer = ledger.open(o.identity.batchId);
  let header = folded.header;
  // (and a run reading it another way: the latest header says how to read its rows again)
  if (!header || renamed || (o.command === 'run' && (header.sheet !== o.sheet || header.encoding !== o.encoding))) {
    header = {
      t: 'batch',
      v: JOURNAL_VERSION,
      batchId: o.identity.batchId,
      batchIdSource: o.identity.source,
      ...(o.identity.label ? { batchLabel: o.identity.label } : {}),
      env: o.env,
      account: ledger.account,
      file: o.file,
      fileSha256: o.identity.fileSha256,
      sheet: o.sheet,
      encoding: o.encoding,
      ...(o.resultsPath ? { results: o.resultsPath } : {}),
      createdAt: header?.createdAt ?? new Date().toISOString(),
    };
    writer.append(header, { sync: true });
    folded.header = header;
  }
  return {
    journalPath: path,
    ledger,
    header,
    folded,
    writer,
    report: reportOf(folded, resumed, read.skipped),
    lastWriteMs: read.lastWriteMs,
    readOffset: read.next,
  };
}

/** A row's or swap's attempt sent with no answer recorded: settled with its journalled key and body (I2). */
export const unsettled = (s: Pick<RowState | SwapState, 'phase'> | undefined): boolean =>
  s?.phase === 'initiating' || s?.phase === 'unknown';

/** The body an earlier run sent for a row or swap whose outcome is not known: the send step resends it as it is (I2). */
export const unsettledBody = <T>(s: RowState | SwapState | undefined): T | undefined =>
  s?.body && unsettled(s) ? (JSON.parse(s.body) as T) : undefined;

/** Appends a line of this run to its journal and folds it into the states (they stay the journal's fold). */
export function record(session: BatchSession, e: JournalLine, options: { sync?: boolean } = {}): void {
  session.writer.append(e, options);
  applyEvent(session.folded, e);
}

/**
 * Journals a fresh attempt's `initiating` line (a row's or a swap's), fsynced, before its request leaves: with a reservation,
 * under the ledger's lock while it still holds the reference (a swap: is still this run's), so two processes never both send
 * it. Throws otherwise, and after `stop`: nothing is written.
 */
export async function recordInitiating(
  session: BatchSession,
  e: Extract<RowEvent, { t: 'initiating' }> | Extract<SwapEvent, { phase: 'initiating' }>,
  stop?: AbortSignal,
): Promise<void> {
  const write = () => {
    stop?.throwIfAborted();
    record(session, e, { sync: true });
  };
  if (session.reservation) await session.reservation.guard(e.t === 'initiating' ? e.ref : null, write);
  else write();
}

/** Folds the `status` lines `listen`, `status` appended since the journal was read (the other lines are this run's); how many. */
export async function catchUpStatuses(session: BatchSession): Promise<number> {
  let n = 0;
  const { next } = await session.ledger.read(
    session.header.batchId,
    (e) => {
      if (e.t !== 'status') return;
      applyEvent(session.folded, e as JournalLine);
      n++;
    },
    session.readOffset,
  );
  session.readOffset = next;
  return n;
}

// Status changes (from GET payout or a webhook) and refunds applied to a results file, forward
// only, for `status` and `listen`. Under the results file's lock (shared with a run's own writes:
// engine/pipeline.ts), so no writer loses another's update; the batch's journal gets one line per
// change before the file is written, so a run rewriting it meanwhile starts from the journal's
// latest state and no write moves a status backward.
import type { Logger } from 'pino';
import type { Connection } from '../client/connect.ts';
import { eachBatch, type Ledger } from '../ledger/account-ledger.ts';
import { ledgersIn } from '../ledger/open.ts';
import { defaultStateDir } from '../client/quota.ts';
import { readResults, writeResults } from '../results/results.ts';
import { resultsLockPath } from '../results/paths.ts';
import type { ResultRow, ResultsTable } from '../results/types.ts';
import type { InformationRequestAnswer as InformationRequest } from '../client/answers.ts';
import { withLock } from '../files/lock.ts';
import { nextStatus, type StatusDecision } from '../spec/status-order.ts';
import { nextStepOf } from '../engine/outcome.ts';
import type { RowEvent } from '../journal/lines.ts';
import type { JournalEvent } from '../journal/journal.ts';

export interface StatusUpdate {
  payoutId: string;
  status: string;
  statusDetail?: string;
  informationRequests?: InformationRequest[];
  /** When the service says it changed (changedAt / updatedAt). */
  at?: string;
  source: 'get' | 'webhook';
  deliveryId?: string;
  reason?: string;
  requestId?: string;
}

export interface RowChange {
  file: string;
  rowNumber: number;
  reference?: string;
  payoutId: string;
  from: string;
  to: string;
  statusDetail?: string;
  decision: StatusDecision;
}

export interface ApplyResult {
  /** Rows changed. */
  applied: RowChange[];
  /** Rows matched but left as they were (older, same, final). */
  ignored: RowChange[];
}

function setRowStatus(row: ResultRow, u: StatusUpdate): void {
  const r = row.result;
  const moved = r.status !== u.status;
  r.status = u.status;
  if (u.statusDetail) r.statusDetail = u.statusDetail;
  else delete r.statusDetail;
  if (u.status === 'ADDITIONAL_INFO_REQUIRED' && u.informationRequests?.length)
    r.informationRequests = JSON.stringify(u.informationRequests);
  else if (u.status !== 'ADDITIONAL_INFO_REQUIRED') delete r.informationRequests;
  // the service's reason (webhook data.reason) belongs to the status it came with
  if (u.reason) r.statusReason = u.reason;
  else if (moved) delete r.statusReason;
  if (u.at) r.updatedAt = u.at;
  setNextStep(row);
}

function setNextStep(row: ResultRow): void {
  const r = row.result;
  const step = nextStepOf(r.status, { payoutId: r.payoutId, refunded: r.refunded });
  if (step) r.nextStep = step;
  else delete r.nextStep;
}

/** A change the status column shows (not a refresh of the same status's details): what `status` reports as moved. */
export const isRealMove = (c: Pick<RowChange, 'from' | 'to' | 'decision'>): boolean =>
  c.decision.why !== 'newer-details' || c.from !== c.to;

export function applyToTable(table: ResultsTable, file: string, updates: StatusUpdate[]): ApplyResult {
  const byId = new Map<string, ResultRow[]>();
  for (const row of table.rows) if (row.result.payoutId) byId.set(row.result.payoutId, [...(byId.get(row.result.payoutId) ?? []), row]);
  const out: ApplyResult = { applied: [], ignored: [] };
  for (const u of updates) {
    for (const row of byId.get(u.payoutId) ?? []) {
      const current = { status: row.result.status ?? '', statusDetail: row.result.statusDetail, at: row.result.updatedAt };
      const decision = nextStatus(current, { status: u.status, statusDetail: u.statusDetail, at: u.at });
      const change: RowChange = {
        file,
        rowNumber: row.rowNumber,
        reference: row.cells.reference,
        payoutId: u.payoutId,
        from: current.status,
        to: u.status,
        ...(u.statusDetail ? { statusDetail: u.statusDetail } : {}),
        decision,
      };
      if (decision.apply) {
        setRowStatus(row, u);
        out.applied.push(change);
      } else out.ignored.push(change);
    }
  }
  return out;
}

/**
 * Where the batch's journal (the one holding the payout ids) is searched, in this order: `ledgers`
 * (the account's, when known), the ledgers of `stateDirs` (`--state-dir`, a watch's "stateDir"),
 * of `stateRoots` (default: the per-user one) and of the team ledger (`shared`, --ledger).
 */
export interface ApplyOptions {
  ledgers?: Ledger[];
  shared?: Connection['shared'];
  stateDirs?: string[];
  stateRoots?: string[];
  logger?: Logger;
}

/** The journal line of a payout's change, once the journal of the row holding it is found. */
type LineOf = (payoutId: string, ref: string) => RowEvent | undefined;

/**
 * Reads the results file under its lock and lets `update` change its rows; when it changed some,
 * the payouts' lines go to the batch's journal first, then the file is written back.
 */
function updateResultsFile<T>(
  file: string,
  o: ApplyOptions,
  update: (table: ResultsTable) => { out: T; journal?: { payoutIds: string[]; line: LineOf } },
): Promise<T> {
  return underResultsLock(file, async () => {
    const table = await readResults(file);
    const { out, journal } = update(table);
    if (journal) {
      await appendToBatchJournal(file, journal.payoutIds, journal.line, o);
      await writeResults(file, table);
    }
    return out;
  });
}

/** `fn` under the results file's lock: one writer of a results file at a time. */
export const underResultsLock = <T>(file: string, fn: () => Promise<T>): Promise<T> =>
  withLock(resultsLockPath(file), fn, { purpose: 'results update' });

/** Applies the updates to the results file forward only; writes it back when a row changed. */
export function applyToResultsFile(file: string, updates: StatusUpdate[], o: ApplyOptions = {}): Promise<ApplyResult> {
  return updateResultsFile(file, o, (table) => {
    const r = applyToTable(table, file, updates);
    const line: LineOf = (payoutId, ref) =>
      statusLine(
        ref,
        r.applied.find((c) => c.payoutId === payoutId)!,
        updates,
      );
    return { out: r, journal: r.applied.length ? { payoutIds: r.applied.map((c) => c.payoutId), line } : undefined };
  });
}

/** The journal's `status` line of an applied change (with what its update said). */
function statusLine(ref: string, c: Pick<RowChange, 'payoutId' | 'to' | 'statusDetail'>, updates: StatusUpdate[]): RowEvent {
  const u = updates.find((x) => x.payoutId === c.payoutId && x.status === c.to);
  return {
    t: 'status',
    ref,
    payoutId: c.payoutId,
    status: c.to,
    ...(c.statusDetail ? { statusDetail: c.statusDetail } : {}),
    ...(u?.informationRequests?.length && c.to === 'ADDITIONAL_INFO_REQUIRED'
      ? { informationRequests: JSON.stringify(u.informationRequests) }
      : {}),
    ...(u?.at ? { changedAt: u.at } : {}),
    source: u?.source ?? 'get',
    ...(u?.deliveryId ? { deliveryId: u.deliveryId } : {}),
    ...(u?.reason ? { reason: u.reason } : {}),
    at: new Date().toISOString(),
  };
}

/**
 * Status updates of payouts no results file holds yet: a run still sending writes its results
 * file once, at its end, from its journal, so the lines go to the journal of the batch that holds
 * each payout (the fold moves a status forward only). Best effort: never throws.
 */
export function applyToJournals(updates: StatusUpdate[], o: ApplyOptions = {}): Promise<void> {
  const line: LineOf = (payoutId, ref) => {
    const u = updates.find((x) => x.payoutId === payoutId)!;
    return statusLine(ref, { payoutId, to: u.status, statusDetail: u.statusDetail }, updates);
  };
  return appendToBatchJournal('(no results file yet)', [...new Set(updates.map((u) => u.payoutId))], line, o);
}

/**
 * Appends one line per payout to the journal of the batch that holds the payouts (found by their
 * ids among the state folders' journals: a key names no batch). Best effort: never throws.
 */
async function appendToBatchJournal(file: string, payoutIds: string[], line: LineOf, o: ApplyOptions): Promise<void> {
  try {
    const roots = [...(o.stateDirs ?? []), ...(o.stateRoots ?? [defaultStateDir()])];
    // (the same file sent to two services has a journal in each one's ledger: only one knows the id)
    for await (const { ledger, batchId, folded } of eachBatch([...(o.ledgers ?? []), ...(await ledgersIn(roots, o.shared))])) {
      const refOf = new Map<string, string>();
      for (const s of folded.rows.values()) if (s.payout) refOf.set(s.payout.id, s.ref);
      if (!payoutIds.some((id) => refOf.has(id))) continue;
      const lines = payoutIds.flatMap((id) => (refOf.has(id) ? (line(id, refOf.get(id)!) ?? []) : []));
      return appendLines(ledger, batchId, lines);
    }
  } catch (e) {
    o.logger?.warn({ file, err: (e as Error).message }, 'change not recorded in the journal');
  }
}

/** A refund seen in the wallet's transactions, for the row(s) of a payout. */
export interface RefundSeen {
  payoutId: string;
  amount: string;
  transactionId?: string;
}

/** Writes `refunded` (and the next step) into the rows of the refunded payouts, under the results file's lock, and journals them. */
export async function applyRefundsToResultsFile(file: string, refunds: RefundSeen[], o: ApplyOptions = {}): Promise<number> {
  if (!refunds.length) return 0;
  const byId = new Map(refunds.map((r) => [r.payoutId, r]));
  const line = (payoutId: string, ref: string): RowEvent => {
    const { amount, transactionId } = byId.get(payoutId)!;
    return { t: 'refund', ref, payoutId, amount, ...(transactionId ? { transactionId } : {}), at: new Date().toISOString() };
  };
  return updateResultsFile(file, o, (table) => {
    let n = 0;
    for (const row of table.rows) {
      const r = row.result.payoutId ? byId.get(row.result.payoutId) : undefined;
      if (!r || row.result.refunded === r.amount) continue;
      row.result.refunded = r.amount;
      setNextStep(row);
      n++;
    }
    return { out: n, journal: n ? { payoutIds: [...byId.keys()], line } : undefined };
  });
}

/** Lines appended to a batch's journal, in order. */
export function appendLines(ledger: Ledger, batchId: string, lines: readonly JournalEvent[]): void {
  if (!lines.length) return;
  const w = ledger.open(batchId);
  try {
    for (const l of lines) w.append(l);
  } finally {
    w.close();
  }
}

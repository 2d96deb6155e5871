// Status changes and refunds applied to a results file, forward only, under its lock (shared with a
// run's own writes). The journal gets each change before the file is written, so a run rewriting
// the file meanwhile starts from the journal's latest state and no write moves a status backward.
import type { Logger } from 'pino';
import type { Connection } from '../client/connect.ts';
import { appendToBatch, eachJournal, foldBatch, type Ledger } from '../ledger/account-ledger.ts';
import { ledgersIn } from '../ledger/open.ts';
import { defaultStateDir } from '../client/quota.ts';
import { ResultsError, streamResults, writeResults } from '../results/results.ts';
import { batchColumns } from '../results/read.ts';
import { SpillList } from '../files/spill.ts';
import { resultsLockPath } from '../results/paths.ts';
import type { ResultRow } from '../results/types.ts';
import type { InformationRequestAnswer as InformationRequest } from '../client/answers.ts';
import { withLock } from '../files/lock.ts';
import { nextStatus, nextStatusUndated, type StatusDecision } from '../spec/status-order.ts';
import { nextStepOf } from '../engine/outcome.ts';
import type { Refund } from '../engine/refund.ts';
import type { RowEvent } from '../journal/lines.ts';

export interface StatusUpdate {
  payoutId: string;
  status: string;
  statusDetail?: string;
  informationRequests?: InformationRequest[];
  /** changedAt / updatedAt */
  at?: string;
  source: 'get' | 'webhook';
  deliveryId?: string;
  reason?: string;
}

/** A row's change by an update (before it is applied, if it is: `decision`); `deliveryId`: `listen`'s delivery that brought it. */
const changeOf = (file: string, row: ResultRow, column: string, u: StatusUpdate, decision: StatusDecision) => ({
  file,
  rowNumber: row.rowNumber,
  reference: row.cells[column],
  payoutId: u.payoutId,
  from: row.result.status ?? '',
  to: u.status,
  ...(u.statusDetail ? { statusDetail: u.statusDetail } : {}),
  ...(u.deliveryId ? { deliveryId: u.deliveryId } : {}),
  decision,
});
export type RowChange = ReturnType<typeof changeOf>;

export interface ApplyResult {
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
  // (an update without its time, as a list item (spec §2), leaves the cell empty: the old one was the old status's)
  if (u.at) r.updatedAt = u.at;
  else delete r.updatedAt;
  setNextStep(row);
}

function setNextStep(row: ResultRow): void {
  const r = row.result;
  const step = nextStepOf(r.status, { payoutId: r.payoutId, refunded: r.refunded });
  if (step) r.nextStep = step;
  else delete r.nextStep;
}

/** A change the status column shows, not a refresh of the same status's details. */
export const isRealMove = (c: Pick<RowChange, 'from' | 'to' | 'decision'>): boolean =>
  c.decision.why !== 'newer-details' || c.from !== c.to;

/** Applies `updates` to each row given to `row`, in turn; `done`: the changes in the updates' order, and the journal's lines of the updates applied to a row, each once, in order. */
export function statusApplier(file: string, updates: StatusUpdate[]) {
  const byId = new Map<string, number[]>();
  updates.forEach((u, i) => byId.set(u.payoutId, [...(byId.get(u.payoutId) ?? []), i]));
  const changes: [update: number, change: RowChange, journal: boolean][] = [];
  /** `referenceColumn`: the batch's own name for it ("Payment Reference"). */
  const row = (row: ResultRow, referenceColumn = 'reference'): void => {
    for (const i of (row.result.payoutId && byId.get(row.result.payoutId)) || []) {
      const u = updates[i]!;
      const current = { status: row.result.status ?? '', statusDetail: row.result.statusDetail, at: row.result.updatedAt };
      const incoming = { status: u.status, statusDetail: u.statusDetail, at: u.at };
      const decision = nextStatus(current, incoming);
      // (to the journal when applied, or refused only for want of the row's time, cleared by a person: the journal keeps one and judges)
      changes.push([i, changeOf(file, row, referenceColumn, u, decision), nextStatusUndated(current, incoming).apply]);
      if (decision.apply) setRowStatus(row, u);
    }
  };
  const done = (): { out: ApplyResult; lines: Lines; changed: boolean } => {
    const inOrder = changes.sort(([a], [b]) => a - b); // (stable: a payout's rows in file order)
    const used = new Set(inOrder.flatMap(([i, , journal]) => (journal ? [i] : [])));
    const out = {
      applied: inOrder.flatMap(([, c]) => (c.decision.apply ? [c] : [])),
      ignored: inOrder.flatMap(([, c]) => (c.decision.apply ? [] : [c])),
    };
    return { out, lines: statusLines(updates.filter((_, i) => used.has(i))), changed: out.applied.length > 0 };
  };
  return { row, done };
}

/** Where the batch's journal is searched, in this order (`stateRoots` defaults to the per-user one). */
export interface ApplyOptions {
  ledgers?: Ledger[];
  shared?: Connection['shared'];
  stateDirs?: string[];
  stateRoots?: string[];
  logger?: Logger;
}

/** The journal's line for each change, by payout id, but the row's ref and the time, added as it is appended. */
type Lines = [string, LineBody<RowEvent>][];
type LineBody<E> = E extends unknown ? Omit<E, 'ref' | 'at'> : never;

/**
 * `update.row` is given each row in turn, then `update.done` says what changed: when rows did, the payouts' lines go to the journal
 * first, then the file is written a row at a time, its rows waiting in a file (spill.ts), not in memory (XLSX: SheetJS holds it whole).
 */
async function updateResultsFile<T>(
  file: string,
  o: ApplyOptions,
  update: { row: (row: ResultRow, referenceColumn?: string) => void; done: () => { out: T; lines: Lines; changed?: boolean } },
): Promise<T> {
  return underResultsLock(file, async () => {
    const { rows, ...table } = await streamResults(file);
    const kept = new SpillList<ResultRow>((r) => r as ResultRow);
    const column = batchColumns(table).reference;
    for await (const row of rows) {
      update.row(row, column);
      kept.push(row);
    }
    const { out, lines, changed = lines.length > 0 } = update.done();
    if (lines.length) await appendToBatchJournal(file, lines, o);
    if (changed) await writeResults(file, { ...table, rows: kept, resultAt: (i) => kept.at(i)!.result });
    return out;
  });
}

/** The row of `payoutId` no longer says its extra documents are missing (`attach` attached the last of them). */
export const clearDocumentsError = (file: string, payoutId: string): Promise<boolean> => {
  let changed = false;
  const row = (r: ResultRow) => {
    if (r.result.payoutId !== payoutId || r.result.errorCode !== 'DOCUMENTS_NOT_ATTACHED') return;
    delete r.result.errorCode;
    delete r.result.errorMessage;
    changed = true;
  };
  return updateResultsFile(file, {}, { row, done: () => ({ out: changed, lines: [], changed }) });
};

export const underResultsLock = <T>(file: string, fn: () => Promise<T>): Promise<T> =>
  withLock(resultsLockPath(file), fn, { purpose: 'results update' });

const statusLines = (updates: StatusUpdate[]): Lines => updates.map((u) => [u.payoutId, statusLine(u)]);

/** A results file, and where its batch's journal is besides `ApplyOptions`' roots. */
export type StatusTarget = { file: string; stateDirs?: string[] };

/**
 * The one apply path of `status`, `listen` and `attach`: each file (one a watch moved meanwhile is
 * skipped), each change logged; payouts no file holds go to their batch's journal (`o.stateDirs`).
 */
export async function applyStatus(targets: StatusTarget[], updates: StatusUpdate[], o: ApplyOptions = {}): Promise<ApplyResult> {
  const out: ApplyResult = { applied: [], ignored: [] };
  if (!updates.length) return out;
  for (const t of targets) {
    try {
      const r = await updateResultsFile(t.file, { ...o, stateDirs: t.stateDirs }, statusApplier(t.file, updates));
      // (concat, not a spread: a file of 125,000 rows moved would pass more arguments than a call takes)
      [out.applied, out.ignored] = [out.applied.concat(r.applied), out.ignored.concat(r.ignored)];
    } catch (e) {
      // (one file no longer a results file, e.g. re-saved without a column, is said; its payouts still reach their journal)
      if (!(e instanceof ResultsError) || e.code === 'WRITE_FAILED') throw e;
      if (e.code !== 'FILE_NOT_FOUND') o.logger?.warn({ file: t.file, err: e.message }, 'results file not brought up to date');
    }
  }
  for (const c of [...out.applied, ...out.ignored.filter((c) => c.decision.why !== 'same')]) {
    const { file, rowNumber: row, payoutId, from, to, statusDetail, deliveryId, decision } = c;
    const what = !decision.apply
      ? 'status not applied: the row holds a later or final one'
      : isRealMove(c)
        ? 'status moved'
        : 'status details updated';
    o.logger?.info({ deliveryId, file, row, payoutId, from, to, statusDetail, why: decision.why }, what);
  }
  // (a row of our words holding the payout, ALREADY_PAID, is not its batch's: its journal still gets the change)
  const held = new Set([...out.applied, ...out.ignored.filter((c) => c.decision.why !== 'not-a-payout-status')].map((c) => c.payoutId));
  const rest = updates.filter((u) => !held.has(u.payoutId));
  if (rest.length) {
    o.logger?.info({ payoutIds: rest.map((u) => u.payoutId) }, 'no results file holds the payout: to its journal');
    // (a run still sending writes its results file at its end, from its journal)
    await appendToBatchJournal('(no results file yet)', statusLines(rest), o);
  }
  return out;
}

function statusLine(u: StatusUpdate) {
  return {
    t: 'status' as const,
    payoutId: u.payoutId,
    status: u.status,
    statusDetail: u.statusDetail || undefined,
    informationRequests:
      u.status === 'ADDITIONAL_INFO_REQUIRED' && u.informationRequests?.length ? JSON.stringify(u.informationRequests) : undefined,
    changedAt: u.at || undefined,
    source: u.source,
    deliveryId: u.deliveryId || undefined,
    reason: u.reason || undefined,
  };
}

/** To the journal of the batch holding the payout ids (a key names no batch). Best effort: never throws. */
async function appendToBatchJournal(file: string, lines: Lines, o: ApplyOptions): Promise<void> {
  try {
    const roots = [...(o.stateDirs ?? []), ...(o.stateRoots ?? [defaultStateDir()])];
    // (one batch's fold at a time: the account's whole history is never held at once)
    for await (const { ledger, batchId } of eachJournal([...(o.ledgers ?? []), ...(await ledgersIn(roots, o.shared))])) {
      const { folded } = await foldBatch(ledger, batchId);
      const refOf = new Map<string, string>();
      for (const s of folded.rows.values()) if (s.payout) refOf.set(s.payout.id, s.ref);
      const at = new Date().toISOString();
      appendToBatch(
        ledger,
        batchId,
        lines.flatMap(([id, l]) => (refOf.has(id) ? [{ ...l, ref: refOf.get(id)!, at }] : [])),
      );
      // (the changes of several deliveries may be several batches')
      lines = lines.filter(([id]) => !refOf.has(id));
      if (!lines.length) return;
    }
  } catch (e) {
    o.logger?.warn({ file, err: (e as Error).message }, 'change not recorded in the journal');
  }
}

export type RefundSeen = Refund & { payoutId: string };

export async function applyRefundsToResultsFile(file: string, refunds: RefundSeen[], o: ApplyOptions = {}): Promise<number> {
  if (!refunds.length) return 0;
  const byId = new Map(refunds.map((r) => [r.payoutId, r]));
  const lines: Lines = refunds.map(({ payoutId, amount, transactionId }) => [payoutId, { t: 'refund', payoutId, amount, transactionId }]);
  let n = 0;
  return updateResultsFile(file, o, {
    row: (row) => {
      const r = row.result.payoutId ? byId.get(row.result.payoutId) : undefined;
      if (!r || row.result.refunded === r.amount) return;
      row.result.refunded = r.amount;
      setNextStep(row);
      n++;
    },
    done: () => ({ out: n, lines: n ? lines : [] }),
  });
}

// Applying status changes (from GET payout or from a webhook) to a results file, forward only, and
// recording them in the batch's journal. Shared by `status` and `listen`.
//
// A results file is read, changed and replaced atomically under a lock beside it
// (".<name>.lock"), so `status` and `listen` (and two listeners) never lose each other's updates.
// The journal gets one `{t: "status", ...}` line per applied change: the engine's fold ignores
// event types it does not know, so the line is an audit trail that never disturbs a resume.
import { basename, dirname, join, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import { JournalWriter } from '../journal/journal.ts';
import { foldJournalFile } from '../journal/rows.ts';
import { findJournals, parseIdempotencyKey } from '../engine/identity.ts';
import { readResults, writeResults } from '../results/index.ts';
import type { ResultRow, ResultsTable } from '../results/types.ts';
import type { InformationRequestAnswer as InformationRequest } from '../client/answers.ts';
import { withLock } from './lock.ts';
import { nextStatus, type StatusDecision } from '../spec/status-order.ts';

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
  /** payoutIds of the updates that matched no row of the file. */
  unmatched: string[];
}

export const lockPathFor = (resultsPath: string) => join(dirname(resolve(resultsPath)), `.${basename(resultsPath)}.lock`);

/** Writes one applied update into a row's result values (mutating). */
export function setRowStatus(row: ResultRow, u: StatusUpdate): void {
  const r = row.result;
  r.status = u.status;
  if (u.statusDetail) r.statusDetail = u.statusDetail;
  else delete r.statusDetail;
  if (u.status === 'ADDITIONAL_INFO_REQUIRED' && u.informationRequests?.length)
    r.informationRequests = JSON.stringify(u.informationRequests);
  else if (u.status !== 'ADDITIONAL_INFO_REQUIRED') delete r.informationRequests;
  if (u.at) r.updatedAt = u.at;
}

/** Decides and applies updates to a table in memory. */
export function applyToTable(table: ResultsTable, file: string, updates: StatusUpdate[]): ApplyResult {
  const byId = new Map<string, ResultRow[]>();
  for (const row of table.rows) {
    const id = row.result.payoutId;
    if (!id) continue;
    const list = byId.get(id) ?? [];
    list.push(row);
    byId.set(id, list);
  }
  const out: ApplyResult = { applied: [], ignored: [], unmatched: [] };
  for (const u of updates) {
    const rows = byId.get(u.payoutId);
    if (!rows) {
      out.unmatched.push(u.payoutId);
      continue;
    }
    for (const row of rows) {
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

export interface ApplyOptions {
  /** Folders searched for the batch's journal (by the batch id inside the idempotency keys). */
  stateDirs?: string[];
  logger?: Logger;
}

/** Reads the results file under its lock, applies the updates forward only, writes it back when a row changed. */
export async function applyToResultsFile(file: string, updates: StatusUpdate[], o: ApplyOptions = {}): Promise<ApplyResult> {
  const result = await withLock(
    lockPathFor(file),
    async () => {
      const table = await readResults(file);
      const r = applyToTable(table, file, updates);
      if (r.applied.length) await writeResults(file, table);
      return { r, table };
    },
    { purpose: 'results update' },
  );
  if (result.r.applied.length) await recordInJournal(file, result.table, result.r.applied, updates, o);
  return result.r;
}

/** Appends `status` lines to the batch's journal, when it can be found. Best effort: never throws. */
export async function recordInJournal(
  file: string,
  table: ResultsTable,
  applied: RowChange[],
  updates: StatusUpdate[],
  o: ApplyOptions,
): Promise<void> {
  try {
    const prefixes = new Set<string>();
    for (const row of table.rows) {
      const k = row.result.idempotencyKey ? parseIdempotencyKey(row.result.idempotencyKey) : undefined;
      if (k) prefixes.add(k.batchPrefix);
    }
    if (prefixes.size !== 1) return;
    const prefix = [...prefixes][0]!;
    const dirs = o.stateDirs?.length ? o.stateDirs : [join(dirname(resolve(file)), '.payout-batch')];
    for (const dir of dirs) {
      if (!existsSync(dir)) continue;
      for (const { path } of await findJournals(dir, prefix)) {
        const { folded } = foldJournalFile(path);
        const refOf = new Map<string, string>();
        for (const s of folded.rows.values()) if (s.payout) refOf.set(s.payout.id, s.ref);
        const w = JournalWriter.open(path);
        try {
          for (const c of applied) {
            const ref = refOf.get(c.payoutId);
            if (!ref) continue;
            const u = updates.find((x) => x.payoutId === c.payoutId && x.status === c.to);
            w.append({
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
              at: new Date().toISOString(),
            });
          }
        } finally {
          w.close();
        }
        return;
      }
    }
  } catch (e) {
    o.logger?.warn({ file, err: (e as Error).message }, 'status change not recorded in the journal');
  }
}

// `retry RESULTS`: a results file, perhaps edited, back through the pipeline. Rows whose payout
// exists are left exactly as they are; the others (invalid, not sent, refused, unknown) go again:
//   - an unknown outcome is settled first with its original key and journalled body (I2), edits
//     to it wait until its outcome is known;
//   - a row the service refused is validated again as edited and sent under attempt + 1 (I3);
//   - a conflict stays a conflict (I5).
// The batch is found through the batch id inside the keys (pb2-<batch>-...), its journal in the
// account's ledger (ledger.ts).
//
// The journal decides, not the results file's cells (design.md "Idempotency keys"): a row is matched
// to its journal state by its key cell, else its payoutId, else its row number; a row whose
// payout exists or whose outcome is unknown keeps the journalled reference, key and body whatever
// was edited or cleared in its cells.
import { dirname, resolve } from 'node:path';
import type { Connection } from '../client/connect.ts';
import { mapColumns } from '../input/columns.ts';
import { foldJournalFile, isFailedAfterCreation, type RowEvent, type RowState } from '../journal/rows.ts';
import { JournalWriter } from '../journal/journal.ts';
import { PayoutApiError } from '../client/errors.ts';
import { snapshotOfError } from './send.ts';
import { findRefund } from './refund.ts';
import { readResults } from '../results/read.ts';
import { resultsPathFor } from '../results/paths.ts';
import type { ResultValues } from '../results/types.ts';
import { fingerprintingChecker } from '../validation/documents.ts';
import { parseRow, probableDuplicateKey } from '../validation/row.ts';
import { loadBatch, type EngineRow, type LoadedBatch } from './batch.ts';
import { fileSha256, parseIdempotencyKey } from './identity.ts';
import { findBatchJournal, ledgerOf } from './ledger.ts';
import { isCreatedStatus } from './outcome.ts';
import { runPipeline, type PipelineOptions, type PipelineResult } from './pipeline.ts';
import { reservedSession } from './run.ts';
import { BatchRefused, openSession } from './session.ts';

export interface RetryOptions extends Omit<PipelineOptions, 'results' | 'only' | 'keep' | 'mode' | 'quotedFees' | 'conn'> {
  resultsFile: string;
  conn: Connection;
  /** The state folder whose ledger holds the journal (default the per-user one); see RunOptions.stateDir. */
  stateDir?: string;
  /** Where the new results go (default <results>.retry-N beside it). */
  resultsPath?: string;
  /**
   * `--resend-failed`: rows whose payout FAILED or was REJECTED after creation are sent again under
   * attempt + 1, each only once its refund shows in the wallet's transactions. Without it such rows
   * are kept as they are, however their cells were edited.
   */
  resendFailed?: boolean;
}

/** A failed row `--resend-failed` did not send again, and why. */
export interface NotResent {
  rowNumber: number;
  reference: string;
  payoutId: string;
  status: string;
  reason: string;
}

export interface RetryResult extends PipelineResult {
  batchId: string;
  journalPath: string;
  /** Rows sent again / settled / left as created. */
  retried: number;
  kept: number;
  /** Rows whose payout failed after creation and that were sent again under a new attempt. */
  resent: number;
  /** Failed rows left as they were under --resend-failed (refund not seen yet, row invalid...). */
  notResent: NotResent[];
}

export async function retryResults(o: RetryOptions): Promise<RetryResult> {
  const resultsFile = resolve(o.resultsFile);
  const table = await readResults(resultsFile);
  const env = o.conn.environment.name;
  const ledger = ledgerOf(o.conn, { root: o.stateDir });

  // Find the batch: through the keys, else a journal whose results are this file.
  const prefixes = new Set<string>();
  for (const r of table.rows) {
    const k = r.result.idempotencyKey ? parseIdempotencyKey(r.result.idempotencyKey) : undefined;
    if (k) prefixes.add(k.batchPrefix);
  }
  if (prefixes.size > 1)
    throw new BatchRefused(
      `${o.resultsFile} holds keys of ${prefixes.size} different batches: retry one batch's results at a time`,
      'mixed-batches',
    );
  let journalFile: string | undefined;
  if (prefixes.size === 1) {
    const prefix = [...prefixes][0]!;
    journalFile = findBatchJournal(ledger, prefix);
    if (!journalFile) {
      throw new BatchRefused(
        `no journal of batch ${prefix} for ${ledger.account} in ${ledger.dir}: ` +
          'use the same --base-url (or --env) as the run, and its --state-dir if it was given one',
        'journal-not-found',
      );
    }
  } else {
    throw new BatchRefused(
      `${o.resultsFile} holds no idempotency key of this tool: no row was ever sent, so run the batch itself instead`,
      'no-keys',
    );
  }
  let { folded } = foldJournalFile(journalFile);
  const notResent: NotResent[] = [];
  if (o.resendFailed) {
    // Failed after creation, by the journal or the results file: confirmed with the service (GET),
    // and the refund looked up in the wallet's transactions; both journalled, so the journal decides.
    const lines = await checkFailedRows(o.conn, table.rows, folded.rows, notResent);
    if (lines.length) {
      const w = JournalWriter.open(journalFile);
      try {
        for (const e of lines) w.append(e, { sync: true });
      } finally {
        w.close();
      }
      folded = foldJournalFile(journalFile).folded;
    }
  }
  const header = folded.header;
  if (!header) throw new BatchRefused(`the journal ${journalFile} has no header line`, 'bad-journal');

  const byKey = new Map<string, RowState>();
  const byPayout = new Map<string, RowState>();
  const byRow = new Map<number, RowState>();
  for (const s of folded.rows.values()) {
    if (s.key) byKey.set(s.key, s);
    if (s.payout) byPayout.set(s.payout.id, s);
    if (s.row !== undefined && s.phase !== 'none') byRow.set(s.row, s);
  }
  /** A row's journal state: by its key cell, else its payoutId cell, else its row number (cells cleared or edited). */
  const journalledOf = (r: (typeof table.rows)[number]): RowState | undefined =>
    (r.result.idempotencyKey ? byKey.get(r.result.idempotencyKey) : undefined) ??
    (r.result.payoutId ? byPayout.get(r.result.payoutId) : undefined) ??
    byRow.get(r.rowNumber);

  // The original batch, when it is still there unchanged: a row not edited since keeps its
  // original verdict (cross-row problems such as a probable duplicate, and a row whose cells
  // spilled over its columns, cannot be judged again from the results file alone).
  const mapping = mapColumns(table.inputColumns, resultsFile);
  const refHeader = mapping.fields.reference;
  const original = new Map<string, EngineRow>();
  try {
    if ((await fileSha256(header.file)) === header.fileSha256) {
      for (const r of (await loadBatch(header.file)).rows) {
        const ref = r.payout?.reference ?? (refHeader ? r.cells[refHeader] : undefined);
        if (ref && !original.has(ref)) original.set(ref, r);
      }
    }
  } catch {
    // moved, changed or unreadable: every row is validated again from its cells
  }

  // Rows: created ones kept untouched; the others parsed again from their (edited) cells.
  const sameCells = (a: Record<string, string>, b: Record<string, string>) =>
    table.inputColumns.every((h) => (a[h] ?? '').trim() === (b[h] ?? '').trim());
  const docs = fingerprintingChecker();
  const ctx = { file: o.resultsFile, fields: mapping.fields, baseDir: dirname(header.file), checkDocument: docs.check };
  const rows: EngineRow[] = [];
  const keep = new Map<number, ResultValues>();
  const only = new Set<number>();
  const settling = new Set<number>();
  /** References to send again after a failed, refunded payout. */
  const resend = new Set<string>();
  const failedPayout = new Map<string, string>();
  for (const r of table.rows) {
    const cells = Object.fromEntries(Object.entries(r.cells).map(([k, v]) => [k, v.trim()]));
    const orig = refHeader ? original.get(cells[refHeader] ?? '') : undefined;
    let row: EngineRow;
    if (orig && !orig.payout && sameCells(orig.cells, cells)) {
      // Not edited since the batch judged it invalid: the verdict stands.
      row = { rowNumber: r.rowNumber, cells: r.cells, payout: undefined, problems: orig.problems };
    } else {
      const parsed = parseRow({ rowNumber: r.rowNumber, cells }, ctx);
      row = { rowNumber: r.rowNumber, cells: r.cells, payout: parsed.payout, problems: parsed.problems };
      if (parsed.problems.some((p) => p.severity === 'error')) row.payout = undefined;
    }
    const journalled = journalledOf(r);
    if (o.resendFailed && journalled && resendable(journalled)) {
      if (row.payout) {
        resend.add(journalled.ref);
        failedPayout.set(journalled.ref, journalled.payout!.id);
        only.add(r.rowNumber);
      } else {
        keep.set(r.rowNumber, r.result);
        notResent.push({
          rowNumber: r.rowNumber,
          reference: journalled.ref,
          payoutId: journalled.payout!.id,
          status: journalled.payout!.status,
          reason: `the row is not valid as it stands: ${row.problems.find((p) => p.severity === 'error')?.message ?? 'invalid'}`,
        });
      }
    } else if (isCreatedStatus(r.result.status)) keep.set(r.rowNumber, r.result);
    else only.add(r.rowNumber); // (a row the journal knows as created is reported from the journal, not sent)
    if (journalled && ['initiating', 'unknown', 'created'].includes(journalled.phase)) settling.add(r.rowNumber);
    // The row identity is the reference the journal knows for its key: an edited reference cannot
    // turn an unknown outcome into a second payout.
    if (
      row.payout &&
      journalled &&
      journalled.ref !== row.payout.reference &&
      journalled.phase !== 'rejected' &&
      journalled.phase !== 'none'
    ) {
      row.payout = { ...row.payout, reference: journalled.ref };
    }
    // An unsettled row edited into an invalid one is still settled (its journalled body is what
    // goes), as the original file's row when that is still there.
    if (!row.payout && journalled && (journalled.phase === 'initiating' || journalled.phase === 'unknown')) {
      const first = original.get(journalled.ref)?.payout;
      if (first) row = { ...row, payout: first, problems: [] };
    }
    rows.push(row);
  }
  // The checks across rows, the created rows first: a row to send must not repeat a reference,
  // nor the account, amount and currencies of another row (a settling row goes regardless: its
  // journalled body is what is resent).
  const refs = new Map<string, number>();
  // the same account, amount and currencies as validateBatch's probable-duplicate rule
  const dupKeys = new Map<string, number>();
  for (const row of rows) {
    if (!row.payout || only.has(row.rowNumber)) continue;
    refs.set(row.payout.reference, row.rowNumber);
    dupKeys.set(probableDuplicateKey(row.payout), row.rowNumber);
  }
  for (const row of rows) {
    if (!row.payout || !only.has(row.rowNumber)) continue;
    const sameRef = refs.get(row.payout.reference);
    const sameRow = dupKeys.get(probableDuplicateKey(row.payout));
    if (!settling.has(row.rowNumber)) {
      if (sameRef !== undefined) {
        row.problems = [
          ...row.problems,
          {
            severity: 'error',
            code: 'DUPLICATE_REFERENCE',
            file: o.resultsFile,
            row: row.rowNumber,
            message: `the reference is already used on row ${sameRef}`,
          },
        ];
        row.payout = undefined;
        continue;
      }
      if (sameRow !== undefined) {
        row.problems = [
          ...row.problems,
          {
            severity: 'error',
            code: 'PROBABLE_DUPLICATE',
            file: o.resultsFile,
            row: row.rowNumber,
            message: `same beneficiary account, amount and currency as row ${sameRow}: a probable duplicate`,
          },
        ];
        row.payout = undefined;
        continue;
      }
    }
    refs.set(row.payout.reference, row.rowNumber);
    dupKeys.set(probableDuplicateKey(row.payout), row.rowNumber);
  }

  const batch: LoadedBatch = {
    file: header.file,
    format: table.format,
    delimiter: table.delimiter,
    inputColumns: table.inputColumns,
    rows,
    fileProblems: [],
    identity: { batchId: header.batchId, source: header.batchIdSource, label: header.batchLabel, fileSha256: header.fileSha256 },
    documents: docs.fingerprints,
  };
  const results = resultsPathFor(resultsFile, o.resultsPath);
  // Refused here, nothing sent, while a run of this batch goes on, or when another batch sent or
  // is sending a reference to send again (ledger.ts).
  const { reservation, session } = await reservedSession(
    ledger,
    batch,
    folded.rows,
    { command: 'retry', results: results.path, only, resend },
    () =>
      openSession({ identity: batch.identity, env, account: ledger.account, file: header.file, journal: journalFile, command: 'retry' }),
  );
  try {
    const result = await runPipeline(batch, session, {
      ...o,
      results: { ...results, delimiter: table.delimiter },
      only,
      keep,
      mode: 'retry',
      resend,
    });
    return {
      ...result,
      batchId: header.batchId,
      journalPath: session.journalPath,
      retried: only.size,
      kept: keep.size,
      resent: [...resend].filter((ref) => session.folded.rows.get(ref)?.earlier?.some((p) => p.id === failedPayout.get(ref))).length,
      notResent,
    };
  } finally {
    reservation.release();
  }
}

/** Created, failed after creation, and its refund journalled: `retry --resend-failed` may send it again. */
export const resendable = (s: RowState): boolean =>
  s.phase === 'created' && !!s.payout && isFailedAfterCreation(s.payout.status) && s.payout.refunded !== undefined;

/**
 * For --resend-failed: the journal lines that confirm which created rows failed (GET payout, when
 * the journal does not know it yet) and that their refund shows in the wallet's transactions.
 * Rows whose refund is not there yet are added to `notResent`. Throws the service's error when it
 * cannot be reached (nothing sent).
 */
async function checkFailedRows(
  conn: Connection,
  rows: { rowNumber: number; result: ResultValues }[],
  states: Map<string, RowState>,
  notResent: NotResent[],
): Promise<RowEvent[]> {
  const byPayout = new Map<string, RowState>();
  for (const s of states.values()) if (s.phase === 'created' && s.payout) byPayout.set(s.payout.id, s);
  const lines: RowEvent[] = [];
  const at = () => new Date().toISOString();
  for (const r of rows) {
    const s = r.result.payoutId ? byPayout.get(r.result.payoutId) : undefined;
    if (!s?.payout) continue;
    let p = s.payout;
    if (!isFailedAfterCreation(p.status) && !isFailedAfterCreation(r.result.status)) continue;
    try {
      if (!isFailedAfterCreation(p.status)) {
        const now = await conn.client.getPayout(p.id);
        if (!isFailedAfterCreation(now.status)) continue; // the results file says so, the service does not
        const e: RowEvent = {
          t: 'status',
          ref: s.ref,
          payoutId: p.id,
          status: now.status,
          source: 'get',
          at: at(),
          ...(now.updatedAt ? { changedAt: now.updatedAt } : {}),
        };
        lines.push(e);
        p = { ...p, status: now.status };
      }
      if (p.refunded !== undefined) continue;
      const refund = await findRefund(conn.client, { id: p.id, payoutRef: p.payoutRef, currency: p.sourceCurrency });
      if (refund) {
        lines.push({
          t: 'refund',
          ref: s.ref,
          payoutId: p.id,
          amount: refund.amount,
          ...(refund.transactionId ? { transactionId: refund.transactionId } : {}),
          at: at(),
        });
      } else {
        notResent.push({
          rowNumber: r.rowNumber,
          reference: s.ref,
          payoutId: p.id,
          status: p.status,
          reason: `payout ${p.payoutRef ?? p.id} ${p.status}, but its refund is not in the wallet's transactions yet: not sent again; run retry --resend-failed again once it shows`,
        });
      }
    } catch (e) {
      if (e instanceof PayoutApiError && !e.serviceTrouble) {
        notResent.push({
          rowNumber: r.rowNumber,
          reference: s.ref,
          payoutId: p.id,
          status: p.status,
          reason: `could not be checked: ${snapshotOfError(e).message}`,
        });
        continue;
      }
      throw e;
    }
  }
  return lines;
}

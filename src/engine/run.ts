// `run` as a function: load the batch, open (or resume) its journal, refuse a batch seen under
// another name (I4), then the pipeline. The CLI supplies the connection, the confirmation and
// the event sinks.
import { statSync } from 'node:fs';
import type { Connection } from '../client/connect.ts';
import { resultsPathFor } from '../results/paths.ts';
import { loadBatch, type LoadOptions } from './batch.ts';
import { ledgerJournalPath, ledgerOf } from './ledger.ts';
import { reservedSession, runPipeline, type PipelineOptions, type PipelineResult } from './pipeline.ts';
import { journalReader, openSession, record, type BatchSession, type BatchJournalRead } from './session.ts';
import { readPlanFile, verifyPlan, verifyPlannedRows, type PlanFile } from './plan-file.ts';
import { Dec, type Dec as DecT } from '../money.ts';

export interface RunOptions extends LoadOptions, Omit<PipelineOptions, 'results' | 'only' | 'keep' | 'mode' | 'quotedFees' | 'conn'> {
  file?: string;
  conn: Connection;
  /**
   * The state folder whose ledger of the account holds the journals (ledger.ts; default the
   * per-user one, quota.ts defaultStateDir).
   */
  stateDir?: string;
  resultsPath?: string;
  /** A plan written by `payout-batch plan --out`: run exactly it. */
  planFile?: string;
}

export interface RunResult extends PipelineResult {
  batchId: string;
  journalPath: string;
  /** The plan file's content this run executed (`run --plan`; planFile is its path). */
  executedPlan?: PlanFile;
}

/** prepare (the plan file, the batch, its journal, the reservation) -> the pipeline. */
export async function runBatch(o: RunOptions): Promise<RunResult> {
  const { batch, session, reservation, planned, results, only } = await prepareRun(o);
  let quotedFees: Map<number, DecT> | undefined;
  try {
    if (planned) quotedFees = recordPlannedQuotes(session, planned);
  } catch (e) {
    session.writer.close(); // (from runPipeline on, the journal is closed however the run ends)
    reservation.release();
    throw e;
  }
  try {
    const result = await runPipeline(batch, session, {
      ...o,
      quote: planned ? false : o.quote,
      results: { ...results, delimiter: batch.delimiter },
      only,
      quotedFees,
      mode: 'run',
    });
    return { ...result, batchId: batch.identity.batchId, journalPath: session.journalPath, executedPlan: planned };
  } finally {
    reservation.release();
  }
}

/**
 * The plan file (checked against the batch file and the service), the batch loaded with its
 * journal, and the session opened under this run's reservation.
 */
async function prepareRun(o: RunOptions) {
  const planned = o.planFile ? await readPlanFile(o.planFile) : undefined;
  const file = o.file ?? planned?.file;
  if (!file) throw new RangeError('name the batch file (or --plan PLAN)');
  const env = o.conn.environment.name;
  if (planned) await verifyPlan(planned, file, env, o.conn.environment.baseUrl);
  const ledger = ledgerOf(o.conn, { root: o.stateDir });
  const journal = journalReader((identity) => ledgerJournalPath(ledger, identity.batchId));
  const batchId = planned ? planned.batchLabel : o.batchId;
  const batch = await loadBatch(
    file,
    { encoding: o.encoding, sheet: o.sheet, allowDuplicateRows: o.allowDuplicateRows, batchId, stop: o.stop },
    journal.lookup,
  );
  if (planned) verifyPlannedRows(planned, batch.identity.fileSha256, new Map(batch.rows.map((r) => [r.rowNumber, r.payout])));
  const results = resultsPathFor(batch.file, o.resultsPath, { inputFormat: batch.format });
  const only = planned ? new Set(planned.rows.map((r) => r.rowNumber)) : undefined;
  // Before the journal is written: a batch another process is sending, or whose references
  // another batch sent or is sending, is refused here with nothing sent (ledger.ts).
  const { reservation, session } = await reservedSession(
    ledger,
    batch,
    journal.read()?.scan.folded.rows,
    { command: 'run', results: results.path, only },
    () =>
      openSession({
        identity: batch.identity,
        env,
        account: ledger.account,
        file: batch.file,
        journal: ledgerJournalPath(ledger, batch.identity.batchId),
        command: 'run',
        resultsPath: results.path,
        // (read again when another process appended to it since: a run of this batch that ended
        // meanwhile created rows this one must not send again)
        read: unchanged(journal.read()),
      }),
  );
  return { batch, session, reservation, planned, results, only };
}

/** The plan file's quotes, journalled for the rows the journal has none for; returns the quoted fees (row number → fee). */
function recordPlannedQuotes(session: BatchSession, planned: PlanFile): Map<number, DecT> {
  for (const r of planned.rows) {
    if (r.rate === undefined || session.folded.rows.get(r.reference)?.quote) continue;
    record(session, {
      t: 'quote',
      ref: r.reference,
      attempt: 1,
      rate: r.rate,
      fee: r.fee,
      totalDeductible: r.totalDeductible,
      destinationAmount: r.destinationAmount ?? '0',
    });
  }
  return new Map(planned.rows.filter((r) => r.fee !== undefined).map((r) => [r.rowNumber, new Dec(r.fee!)]));
}

/** The journal as read, when it has not grown since (else undefined: openSession reads it again). */
function unchanged(read: BatchJournalRead | undefined): BatchJournalRead | undefined {
  if (!read) return undefined;
  let size = 0;
  try {
    size = statSync(read.path).size;
  } catch {
    // still none
  }
  return size === read.size ? read : undefined;
}

// `run` as a function: load the batch, open (or resume) its journal, refuse a batch seen under
// another name (I4), then the pipeline. The CLI supplies the connection, the confirmation and
// the event sinks.
import type { Connection } from '../client/connect.ts';
import { resultsPathFor } from '../results/paths.ts';
import { loadBatch, type LoadOptions } from './batch.ts';
import { stateDirFor } from './identity.ts';
import { runPipeline, type PipelineOptions, type PipelineResult } from './pipeline.ts';
import { checkOtherBatches, journalReader, openSession, record, BatchRefused } from './session.ts';
import { readPlanFile, verifyPlan, type PlanFile } from './planfile.ts';
import { Dec, type Dec as DecT } from '../money.ts';

export interface RunOptions extends LoadOptions, Omit<PipelineOptions, 'results' | 'only' | 'keep' | 'mode' | 'quotedFees' | 'conn'> {
  file?: string;
  conn: Connection;
  stateDir?: string;
  resultsPath?: string;
  /** A plan written by `payout-batch plan --out`: run exactly it. */
  planFile?: string;
}

export interface RunResult extends PipelineResult {
  batchId: string;
  journalPath: string;
  plan_?: PlanFile;
}

export async function runBatch(o: RunOptions): Promise<RunResult> {
  let planned: PlanFile | undefined;
  let file = o.file;
  let batchIdFlag = o.batchId;
  if (o.planFile) {
    planned = await readPlanFile(o.planFile);
    file ??= planned.file;
    batchIdFlag = planned.batchLabel;
  }
  if (!file) throw new RangeError('name the batch file (or --plan PLAN)');
  const env = o.conn.environment.name;
  if (planned) await verifyPlan(planned, file, env);
  const stateDir = stateDirFor(file, o.stateDir);
  const journal = journalReader(stateDir, env);
  const batch = await loadBatch(
    file,
    { encoding: o.encoding, sheet: o.sheet, allowDuplicateRows: o.allowDuplicateRows, batchId: batchIdFlag, stop: o.stop },
    journal.lookup,
  );
  const results = resultsPathFor(batch.file, o.resultsPath, { inputFormat: batch.format });
  const session = openSession({
    identity: batch.identity,
    env,
    file: batch.file,
    stateDir,
    command: 'run',
    resultsPath: results.path,
    read: journal.read(),
  });
  let only: Set<number> | undefined;
  let quotedFees: Map<number, DecT> | undefined;
  try {
    if (!session.report.resumed && batch.identity.source === 'content') {
      const refs = new Set(batch.rows.flatMap((r) => (r.payout ? [r.payout.reference] : [])));
      await checkOtherBatches(stateDir, env, session.journalPath, refs);
    }
    if (planned) {
      only = new Set(planned.rows.map((r) => r.rowNumber));
      quotedFees = new Map(planned.rows.filter((r) => r.fee !== undefined).map((r) => [r.rowNumber, new Dec(r.fee!)]));
      for (const r of planned.rows) {
        const s = session.folded.rows.get(r.reference);
        if (r.rate !== undefined && !s?.quote) {
          const e = {
            t: 'quote' as const,
            ref: r.reference,
            attempt: 1,
            rate: r.rate,
            fee: r.fee,
            totalDeductible: r.totalDeductible,
            destinationAmount: r.destinationAmount ?? '0',
          };
          record(session, e);
        }
      }
    }
  } catch (e) {
    session.writer.close(); // (from runPipeline on, the journal is closed however the run ends)
    throw e;
  }
  const result = await runPipeline(batch, session, {
    ...o,
    quote: planned ? false : o.quote,
    results: { ...results, delimiter: batch.delimiter },
    only,
    quotedFees,
    mode: 'run',
  });
  return { ...result, batchId: batch.identity.batchId, journalPath: session.journalPath, plan_: planned };
}

export { BatchRefused };

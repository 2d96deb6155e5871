// One pass of the pipeline over a loaded batch and its open journal, shared by `run` and
// `retry`: preflight -> plan -> approval guards -> rows -> results file -> summary. Returns values
// and emits events; never prints, never exits.
import type { Connection } from '../client/connect.ts';
import { PayoutApiError } from '../client/errors.ts';
import { documentsToAttach, rowState, type RowState } from '../journal/rows.ts';
import { Dec, type ApiAmount, type Dec as DecT } from '../money.ts';
import { writeResults } from '../results/write.ts';
import { resultsLockPath } from '../results/paths.ts';
import { withLock } from '../files/lock.ts';
import type { ResultValues, ResultsSource } from '../results/types.ts';
import type { ResultsFormat } from '../results/paths.ts';
import { decideApproval, type MoneyFlag } from './approval.ts';
import { firstError, referenceOf, type EngineRow, type LoadedBatch } from './batch.ts';
import { executeRows, errorSnapshot, type EngineEvent, type FinishItem, type WorkItem } from './execute.ts';
import { buildPlan, payableTotals, type BatchPlan } from './plan.ts';
import { preflight, type PreflightResult } from './preflight.ts';
import {
  ENGINE_STATUSES,
  isCreatedStatus,
  outcomeFromState,
  resultValues,
  summarise,
  type RowOutcome,
  type RunSummary,
} from './outcome.ts';
import { FailedAfterSending, catchUpStatuses, record, type BatchSession, type ResumeReport } from './session.ts';

export interface GuardOptions {
  envFlag?: string;
  yes: boolean;
  interactive: boolean;
  allowPartial: boolean;
  enablePairs: boolean;
  expectRows?: number;
  expectTotals: MoneyFlag[];
  maxTotals: MoneyFlag[];
}

export interface PipelineOptions extends GuardOptions {
  conn: Connection;
  quote: boolean;
  mergeDocuments: boolean;
  concurrency?: number;
  results: { path: string; format: ResultsFormat; delimiter?: string };
  /** Rows to consider (retry, or a plan file): default every row. */
  only?: Set<number>;
  /** Result values kept as they are (retry: the created rows of the results file). */
  keep?: Map<number, ResultValues>;
  quotedFees?: Map<number, DecT>;
  mode: 'run' | 'retry';
  /** Asked on a terminal when no --yes; false declines (exit 3). */
  confirm?: (plan: BatchPlan) => Promise<boolean>;
  onPlan?: (plan: BatchPlan) => void;
  /** What the journal showed of earlier runs, before the first request. */
  onResume?: (report: ResumeReport) => void;
  onEvent?: (e: EngineEvent) => void;
  stop?: AbortSignal;
  /** Wait before the first request when the last run was killed (default 1100 ms). */
  crashWaitMs?: number;
  checkpointMs?: number;
  settleDelayMs?: number;
  /** Writes a row's `initiating` record under the ledger's lock and reservation (ledger.ts Reservation.guard). */
  guard?: (ref: string, write: () => void) => Promise<void>;
  /** retry --resend-failed: references whose payout failed after creation and was refunded, sent again under attempt + 1. */
  resend?: Set<string>;
}

export interface PipelineResult {
  exitCode: 0 | 1 | 3 | 4;
  report: ResumeReport;
  plan?: BatchPlan;
  /** Why nothing was sent (exit 3), or why the run stopped (exit 4). */
  refused?: string[];
  halted?: string;
  stopped?: boolean;
  summary: RunSummary;
  resultsPath: string;
  outcomes: Map<number, RowOutcome>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The pipeline, after which the journal is closed however it ended (finish closes it when it ends well). */
export async function runPipeline(batch: LoadedBatch, session: BatchSession, o: PipelineOptions): Promise<PipelineResult> {
  try {
    return await pipeline(batch, session, o);
  } finally {
    try {
      session.writer.close();
    } catch {
      // (a failed fsync here: the error the run ended with, if any, is the one to report)
    }
  }
}

async function pipeline(batch: LoadedBatch, session: BatchSession, given: PipelineOptions): Promise<PipelineResult> {
  // (own copies of the rows in scope and kept: rows whose documents this run finishes move from kept to in scope)
  const o: PipelineOptions = { ...given, only: given.only && new Set(given.only), keep: given.keep && new Map(given.keep) };
  const { conn } = o;
  const { client } = conn;
  const env = session.header.env;
  const batchId = session.header.batchId;
  const inScope = (n: number) => !o.only || o.only.has(n);
  const { writer, folded } = session;
  record(session, { t: 'run', at: new Date().toISOString(), command: o.mode, pid: process.pid }, { sync: true });

  const executed = new Map<number, RowOutcome>();
  let plan: BatchPlan | undefined = undefined; // read by outcomeOf before preflight has made it
  let started = false;
  let finished = false;
  let ended = false;

  // Each row's journal state, found once by its position: a state the fold holds is a live object
  // (applyEvent changes it in place, never replaces it), so it stays current; a row the journal
  // has not named yet is looked up again next time.
  const states = new Array<RowState | undefined>(batch.rows.length);
  const stateAt = (i: number, ref: string): RowState => states[i] ?? (states[i] = folded.rows.get(ref)) ?? rowState(folded, ref);
  let toSendSet: Set<number> | undefined;

  /** Every row's outcome now (the row at position i): executed, from the journal, invalid, left out, or queued. */
  const outcomeOf = (r: LoadedBatch['rows'][number], i: number): RowOutcome => {
    const done = executed.get(r.rowNumber);
    const ref = referenceOf(r);
    // A row created in this run is read from its journal state, which status lines of `listen`
    // or `status` may have moved on since (catchUpStatuses); the two are otherwise the same.
    if (done && !(ref && stateAt(i, ref).phase === 'created')) return done;
    if (!ref) {
      const e = plan?.invalidRows.get(r.rowNumber) ?? firstError(r.problems) ?? { code: 'INVALID', message: 'invalid row' };
      return { status: ENGINE_STATUSES.INVALID, documents: [], error: { code: e.code, message: e.message } };
    }
    const s = stateAt(i, ref);
    const inv = plan?.invalidRows.get(r.rowNumber);
    if (inv && s.phase === 'none') return { status: ENGINE_STATUSES.INVALID, documents: [], error: inv };
    const ns = plan?.notSent.get(r.rowNumber);
    const fallback: RowOutcome = ns
      ? { status: ENGINE_STATUSES.NOT_SENT, documents: [], error: { code: ns.code, message: ns.message } }
      : started && !finished && plan && (toSendSet ??= new Set(plan.toSend)).has(r.rowNumber) // a Set: a checkpoint asks for every row
        ? { status: ENGINE_STATUSES.QUEUED, documents: [] }
        : {
            status: ENGINE_STATUSES.NOT_SENT,
            documents: [],
            error: { code: 'NOT_SENT', message: 'not sent: the run was refused or stopped before this row' },
          };
    if (ns && s.phase === 'rejected') return fallback;
    return outcomeFromState(s, fallback);
  };

  /**
   * The results table, each row's values made as the writer reaches it; `now` holds each row's
   * outcome when the caller has them already (finish).
   */
  const table = (now?: (RowOutcome | undefined)[]): ResultsSource => ({
    format: o.results.format,
    inputColumns: batch.inputColumns,
    rows: batch.rows,
    delimiter: o.results.delimiter,
    resultAt: (i) => {
      const r = batch.rows[i]!;
      return o.keep?.get(r.rowNumber) ?? resultValues(now?.[i] ?? outcomeOf(r, i));
    },
  });
  // One writer of the results file at a time (`status` and `listen` take the same lock, and record
  // a status in the journal before they write the file): each write starts from the journal's
  // latest state, caught up under the lock, so it never moves a row's status backward.
  const lockedWrite = <T>(job: () => Promise<T>) => withLock(resultsLockPath(o.results.path), job, { purpose: 'results write' });
  const writeAll = () =>
    lockedWrite(() => {
      catchUpStatuses(session);
      return writeResults(o.results.path, table());
    });
  const finish = async (exitCode: PipelineResult['exitCode'], extra: Partial<PipelineResult>): Promise<PipelineResult> => {
    finished = true;
    // every row's outcome once, for the results file and the summary (100,000 rows on a resume)
    const now = await lockedWrite(async () => {
      catchUpStatuses(session);
      const rows = batch.rows.map((r, i) => (o.keep?.has(r.rowNumber) ? undefined : outcomeOf(r, i)));
      await writeResults(o.results.path, table(rows));
      return rows;
    });
    const outcomes = new Map<number, RowOutcome>();
    for (let i = 0; i < batch.rows.length; i++) {
      const r = batch.rows[i]!;
      if (!inScope(r.rowNumber) && !o.keep?.has(r.rowNumber)) continue;
      const kept = o.keep?.get(r.rowNumber);
      outcomes.set(r.rowNumber, kept ? keptOutcome(kept, r.payout?.sourceCurrency ?? '') : now[i]!);
    }
    const summary = summarise([...outcomes.values()]);
    let code = exitCode;
    // (a payout that failed after creation, or waits for information, is a row that needs someone too)
    if (code === 0 && (summary.notCreated > 0 || summary.outcomes.failed > 0 || summary.outcomes.waiting > 0)) code = 1;
    record(session, { t: 'run-end', at: new Date().toISOString(), exitCode: code }, { sync: true });
    ended = true;
    writer.close();
    return { exitCode: code, report: session.report, plan, summary, resultsPath: o.results.path, outcomes, ...extra };
  };

  if (session.report.resumed) o.onResume?.(session.report);
  // The last run's last requests and ours must not share a rolling second: after a crash wait the
  // whole pause; after a run that ended, what is left of it since its last journal line.
  const pause = o.crashWaitMs ?? 1100;
  if (session.report.interrupted) await sleep(pause);
  else if (session.report.resumed) await sleep(Math.max(0, session.lastWriteMs + pause - Date.now()));

  let pf: PreflightResult;
  try {
    const toCheck = batch.rows
      .filter(
        (r, i) =>
          r.payout && inScope(r.rowNumber) && (stateAt(i, r.payout.reference).phase !== 'created' || !!o.resend?.has(r.payout.reference)),
      )
      .map((r) => ({ rowNumber: r.rowNumber, payout: r.payout! }));
    pf = await preflight(client, toCheck, { enablePairs: o.enablePairs });
  } catch (e) {
    if (e instanceof PayoutApiError) return finish(4, { halted: `preflight: ${errorSnapshot(e).message}` });
    throw e;
  }
  await conn.usage?.flush().catch(() => undefined);
  const usage = await client.quotaUsage().catch(() => undefined);
  plan = buildPlan(batch, pf, folded, env, {
    allowPartial: o.allowPartial,
    quote: o.quote,
    mergeDocuments: o.mergeDocuments,
    usage,
    only: o.only,
    quotedFees: o.quotedFees,
    resend: o.resend,
  });
  o.onPlan?.(plan);

  // a created row's fee is the journalled API number (summed exactly as fromApi reads it)
  const estimated = new Map<number, DecT>([...pf.estimatedFees, ...(o.quotedFees ?? [])]);
  const feeOf = (r: EngineRow, i: number): DecT | ApiAmount | undefined => {
    const ref = referenceOf(r);
    const p = ref ? stateAt(i, ref).payout : undefined;
    return p ? p.transactionFees : estimated.get(r.rowNumber);
  };
  const decision = decideApproval({
    plan,
    payable: payableTotals(batch, plan, feeOf),
    env,
    envFlag: o.envFlag,
    yes: o.yes,
    interactive: o.interactive,
    allowPartial: o.allowPartial,
    expectRows: o.expectRows,
    expectTotals: o.expectTotals,
    maxTotals: o.maxTotals,
  });
  if (!decision.ok) return finish(3, { refused: decision.reasons });
  if (decision.confirm && plan.toSend.length > 0) {
    const yes = o.confirm ? await o.confirm(plan) : false;
    if (!yes) return finish(3, { refused: ['declined at the confirmation: nothing was sent'] });
  }

  // (no map of every row when nothing is left to send: a resume of 100,000 created rows)
  const byNumber = plan.toSend.length ? new Map(batch.rows.map((r) => [r.rowNumber, r])) : undefined;
  const items: WorkItem[] = plan.toSend.map((n) => ({ rowNumber: n, payout: byNumber!.get(n)!.payout! }));
  // Created rows whose payouts still lack documents (a run stopped between initiate and PATCH, or
  // the PATCH failed): this run attaches them (finish-documents.ts), and reports them from the
  // journal even where `retry` keeps a created row's results as they were.
  const finishing: FinishItem[] = [];
  for (let i = 0; i < batch.rows.length; i++) {
    const r = batch.rows[i]!;
    const ref = referenceOf(r);
    if (!ref || !(inScope(r.rowNumber) || o.keep?.has(r.rowNumber))) continue;
    const s = stateAt(i, ref);
    if (s.phase !== 'created' || !documentsToAttach(s).length || o.resend?.has(ref)) continue;
    finishing.push({ rowNumber: r.rowNumber, reference: ref });
    o.keep?.delete(r.rowNumber);
    o.only?.add(r.rowNumber);
  }
  started = true;
  // From here requests may have gone out: whatever fails (a results file that cannot be written, a
  // full disk, a bug) is no longer "nothing was sent" but exit 4, resume is safe.
  try {
    const res = await executeRows(items, {
      client,
      writer,
      folded,
      batchId,
      env,
      mode: o.mode,
      quote: o.quote,
      mergeDocuments: o.mergeDocuments,
      documents: batch.documents,
      concurrency: o.concurrency,
      onEvent: o.onEvent,
      stop: o.stop,
      checkpoint: writeAll,
      checkpointMs: o.checkpointMs,
      settleDelayMs: o.settleDelayMs,
      finish: finishing,
      guard: o.guard,
      resend: o.resend,
    });
    for (const [n, out] of res.outcomes) executed.set(n, out);
    if (res.halted) return await finish(4, { halted: res.halted, stopped: res.stopped });
    return await finish(0, { stopped: res.stopped });
  } catch (e) {
    if (!ended) {
      try {
        record(session, { t: 'run-end', at: new Date().toISOString(), exitCode: 4 }, { sync: true });
      } catch {
        // the journal itself may be what failed: without run-end the next run treats this one as killed
      }
    }
    throw new FailedAfterSending(session.journalPath, e);
  }
}

/** A kept row of a retried results file, as an outcome for the summary. */
function keptOutcome(v: ResultValues, currency: string): RowOutcome {
  const status = v.status ?? ENGINE_STATUSES.NOT_SENT;
  if (!isCreatedStatus(status) || !v.totalDeductible || !v.payoutId) return { status, documents: [] };
  const fee = v.fee ?? '0';
  return {
    status,
    documents: [],
    payout: {
      id: v.payoutId,
      payoutRef: v.payoutRef ?? '',
      status,
      sourceAmount: Number(new Dec(v.totalDeductible).minus(new Dec(fee)).toFixed()),
      sourceCurrency: currency,
      destinationAmount: Number(v.destinationAmount ?? 0),
      destinationCurrency: '',
      transactionFees: Number(fee),
      exchangeRate: Number(v.appliedRate ?? 0),
      updatedAt: v.updatedAt ?? '',
      documents: 0,
      ...(v.refunded !== undefined ? { refunded: v.refunded } : {}),
    },
  };
}

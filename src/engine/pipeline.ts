// The stages of `run`, `retry` and `plan`: prepare -> plan (planStage, then the guards) -> execute
// -> finish (the results file, the summary, how the run ended). Never prints, never exits.
import { statSync } from 'node:fs';
import { ResultsError } from '../results/results-errors.ts';
import type { Connection } from '../client/connect.ts';
import { PayoutApiError } from '../client/errors.ts';
import { attempt } from '../files/attempt.ts';
import { withLock } from '../files/lock.ts';
import { documentsToAttach, rowState, type BatchHeader, type FoldedJournal, type PayoutSnapshot } from '../journal/lines.ts';
import { Dec, formatAmount, fromApi, type Dec as DecT } from '../money.ts';
import { writeResults } from '../results/write.ts';
import { freeResultsPath, resultsLockPath, resultsPathFor } from '../results/paths.ts';
import { batchColumns, streamResults } from '../results/read.ts';
import { plural } from '../text.ts';
import type { ResultValues, ResultsFormat, ResultsSource } from '../results/types.ts';
import type { SwapLine } from '../results/swap-summary.ts';
import {
  clearanceLapsed,
  controlTotalNotes,
  decideApproval,
  payoutsOf,
  policyRefusalOf,
  type ApprovalDecision,
  type GuardOptions,
} from './guards.ts';
import { STOPPED_BEFORE_ROW, executeRows, initiateBody, type EngineEvent, type RunSettings } from './execute.ts';
import type { PayoutRow } from '../validation/row-schemas.ts';
import type { InitiateRequest } from '../spec/schemas.ts';
export type { EngineEvents, RunSettings } from './execute.ts';
import { snapshotOfError } from './send.ts';
import type { KeyProof } from './spent.ts';
import { BatchRefused, foldAll, sentByOtherBatches, type Ledger } from '../ledger/account-ledger.ts';
import { ledgerOf } from '../ledger/open.ts';
import { parseEarlierPayouts, readAmount } from './money-totals.ts';
import { isPlainDecimal } from '../results/numbers.ts';
import {
  defined,
  ENGINE_STATUSES,
  isCreatedStatus,
  outcomeFromState,
  resultValues,
  summarise,
  swapLinesOf,
  type RowOutcome,
  type RunSummary,
} from './outcome.ts';
import { buildPlan, feeForTotals, NOT_DUE, payableTotals, type BatchPlan, type PlanOptions } from './batch-plan.ts';
import { refuseRecentDuplicates } from './duplicates.ts';
import { fundBySwaps, type Stopped, type SwapFunding } from './swap-send.ts';
import { bodyDigest, readPlanFile, screeningChanged, verifyPlan, verifyPlannedRows, type PlanFile } from './plan-file.ts';
import { listedPairs, preflight, type PreflightStep } from './preflight.ts';
import {
  firstError,
  loadBatch,
  referenceOf,
  rowByNumber,
  reservedSession,
  validReferences,
  type DuplicateOptions,
  type EngineRow,
  type LoadedBatch,
  type LoadOptions,
} from './prepare.ts';
import { BatchUnusable, FailedAfterSending } from './engine-errors.ts';
import { catchUpStatuses, journalReader, record, unsettled, unsettledBody, type BatchSession, type ResumeReport } from './session.ts';
import { sleep } from '../sleep.ts';
import { listView } from '../files/spill.ts';
import { payeeDigest, screenRows, type ScreeningOptions } from './screen-batch.ts';

/** What `run` and `retry` share. */
export interface SendOptions extends DuplicateOptions {
  conn: Connection;
  guards: GuardOptions;
  settings: RunSettings;
  /** The state folder holding the account's ledger (default the per-user one). */
  stateDir?: string;
  /** Sanctions screening (--sanctions-list, the account's policy): a hit is held, never sent. */
  screening?: ScreeningOptions;
}

/** Set by `run` (prepareRun) and `retry`: which rows, and where the results go. */
export interface PipelineOptions extends SendOptions, Pick<PlanOptions, 'only' | 'resend'> {
  mode: 'run' | 'retry';
  results: { path: string; format: ResultsFormat; delimiter?: string };
  /** retry: the created rows' result values, kept as they are. */
  keep?: Map<number, ResultValues>;
  /** retry: unsettled rows edited into invalid ones, settled as first sent (planStage adds the edited valid ones). */
  asFirstSent?: Set<number>;
  /** `run --plan`: its quotes, its swaps and screening (the approved ones), and only its rows. */
  planned?: PlanFile;
}

/** How a command ended, least urgent first (cli/exit-codes.ts); `halted`: stopped part way, resume is safe. */
export const RUN_KINDS = ['ok', 'not-finished', 'rows-failed', 'unusable', 'refused', 'halted'] as const;
export type RunKind = (typeof RUN_KINDS)[number];

export interface PipelineResult {
  kind: RunKind;
  batchId: string;
  journalPath: string;
  report: ResumeReport;
  plan?: BatchPlan;
  /** Why nothing was sent (refused), or why the run stopped (halted). */
  refused?: string[];
  halted?: string;
  /** Halted by a payout answered of another amount or currency than sent (execute.ts): running again is not safe. */
  answerNotAsSent?: boolean;
  /** Stopped on request (Ctrl-C): before sending (with `refused`), or while sending. */
  stopped?: boolean;
  /** retry: what the refused rows' keys showed before a new key (spent.ts). */
  keyProofs?: KeyProof[];
  summary: RunSummary;
  resultsPath: string;
  /** False when the run sent nothing: an earlier run's results file is left as it is. */
  resultsWritten: boolean;
  outcomes: Map<number, RowOutcome>;
}

/** A batch prepared to be sent. Nothing is sent until `execute(prepared)`, which must follow: it closes the journal. */
export interface Prepared<R> {
  resume: ResumeReport;
  plan?: BatchPlan;
  refused?: string[];
  notes: string[];
  confirm: boolean;
  readonly go: (answer: Answer) => Promise<R>;
}

/** Confirmed on the terminal (needed when `confirm`), or refused for the caller's own reason. */
type Answer = { confirmed?: boolean; refused?: string };

export const execute = <R>(prepared: Prepared<R>, answer: Answer = {}): Promise<R> => prepared.go(answer);

type Scope = Pick<PipelineOptions, 'only' | 'keep'>;

/** A row going under a new key (a failed one paid again too; one settling its outcome goes with its journalled key). */
const underNewKey = (o: Pick<PipelineOptions, 'only' | 'resend'>, folded: FoldedJournal) => (r: EngineRow) =>
  !!r.payout &&
  (!o.only || o.only.has(r.payout.rowNumber)) &&
  (['none', 'rejected'].includes(rowState(folded, r.payout.reference).phase) || !!o.resend?.has(r.payout.reference));

/** What a row's outcome depends on besides its journal state. */
export interface RunView {
  plan?: BatchPlan;
  /** The outcomes of the rows this run did not leave created (a created row's is its journal state's). */
  executed: ReadonlyMap<number, RowOutcome>;
  stopped?: boolean;
  /** Rows settled with their journalled body, their cells edited since (planStage): the results say the edit is not paid. */
  asFirstSent?: ReadonlySet<number>;
}

interface Run {
  batch: LoadedBatch;
  session: BatchSession;
  o: PipelineOptions;
}

/**
 * Plans a batch and judges the plan by the guards; executed, it sends and finishes, then `complete`
 * makes the caller's result. The session's reservation is released however it ends.
 */
export async function preparePipeline<R>(
  batch: LoadedBatch,
  session: BatchSession,
  o: PipelineOptions,
  complete: (r: PipelineResult) => Promise<R>,
): Promise<Prepared<R>> {
  const run: Run = { batch, session, o };
  const close = async () => {
    // (a failed fsync here: the error the run ended with, if any, is the one to report)
    attempt(() => session.writer.close());
    await release().catch(() => undefined);
  };
  const release = () => session.reservation?.release() ?? Promise.resolve();
  let done = false;
  const once = (finishing: (answer: Answer) => Promise<PipelineResult>) => (answer: Answer) => {
    if (done) return Promise.reject(new Error('a prepared batch is executed once'));
    done = true;
    return finishing(answer)
      .then(async (r) => {
        // (a retry's results put in place under the reservation: a second retry of the file never takes their name)
        const made = await complete(r);
        // (every line of the run recorded in the ledger, or the run is not done)
        await release().catch((e: unknown) => {
          throw new FailedAfterSending(session.journalPath, e);
        });
        return made;
      })
      .finally(close);
  };
  const resume = session.report;
  const { planned } = o;
  try {
    const quotedFees = planned && recordPlannedQuotes(session, planned);
    // (a plan's rows another batch sent say why they are left out)
    const sentElsewhere = planned && (await sentByOtherBatches(session.ledger, batch.identity.batchId, validReferences(batch.rows)));
    // (the account's policy on the file's amounts of the rows going under a new key: a batch it refuses costs no request)
    const fresh = underNewKey(o, session.folded);
    const unsent = batch.rows.flatMap((r) => (fresh(r) && !sentElsewhere?.has(r.payout!.reference) ? [r.rowNumber] : []));
    const early = policyRefusalOf(o.guards, unsent, batch.rows);
    if (early) {
      const go = once(() => finish(run, o, { executed: new Map() }, 'refused', { refused: [early] }, false));
      return { resume, refused: [early], notes: [], confirm: false, go };
    }
    record(session, { t: 'run', at: new Date().toISOString(), command: o.mode, pid: process.pid }, { sync: true });
    // (the last run's requests and ours must not share a second of the key's rate, spec §8)
    const pauseMs = o.settings.crashWaitMs ?? 1100;
    if (session.report.interrupted) await sleep(pauseMs);
    else if (session.report.resumed) await sleep(Math.max(0, session.lastWriteMs + pauseMs - Date.now()));
    let staged: Awaited<ReturnType<typeof planStage>>;
    try {
      staged = await planStage(o.conn, batch, session.folded, session.header.env, {
        ...o,
        ...o.guards,
        quotedFees,
        sentElsewhere,
        // (a plan file's swaps are the approved ones: none, when it holds none)
        approvedSwaps: planned && (planned.swaps ?? []),
        ledger: session.ledger,
        mergeDocuments: o.settings.mergeDocuments,
        onEvent: o.settings.events && ((e: EngineEvent) => o.settings.events!.emit('event', e)),
      });
    } catch (e) {
      if (!(e instanceof PayoutApiError)) throw e;
      const halted = `preflight: ${snapshotOfError(e).message}`;
      const go = once(() => finish(run, o, { executed: new Map() }, 'halted', { halted }, false));
      return { resume, notes: [], confirm: false, go };
    }
    const { plan } = staged;
    recordHolds(session, batch, plan, o);
    const fees = new Map([...staged.preflight.estimatedFees, ...(quotedFees ?? [])]);
    const payable = payableTotals(batch, plan, feeForTotals(session.folded, fees));
    const approval = decideApproval({ ...o.guards, plan, payable, env: session.header.env, rows: batch.rows });
    // (`run --plan`: the screening its approvers signed, or nothing is sent)
    const changed = planned && screeningChanged(planned.screening, plan.screening, o.guards.allowPartial);
    const decision: ApprovalDecision = changed ? { ok: false, reasons: [...(approval.ok ? [] : approval.reasons), changed] } : approval;
    const confirm = decision.ok && decision.confirm && plan.toSend.length > 0;
    const go = once(async (answer) => {
      const stopped = !!o.settings.stop?.aborted;
      const why = stopped
        ? 'stopped on request (Ctrl-C) before the first payout: nothing was sent'
        : (answer.refused ?? (confirm && !answer.confirmed ? 'declined at the confirmation: nothing was sent' : undefined));
      const refused = decision.ok ? (why === undefined ? undefined : [why]) : decision.reasons;
      // (the last checks: the clearances, then the account's approval policy, read again, and what it lets go without approval today)
      const spent =
        !refused && plan.toSend.length
          ? (clearanceLapsed(plan) ?? (await o.guards.spend?.(session.ledger, payoutsOf(plan.toSend, batch.rows))))
          : undefined;
      if (refused || spent)
        return finish(run, o, { plan, executed: new Map(), stopped }, 'refused', { refused: refused ?? [spent!], stopped }, false);
      return send(run, plan, fees, staged.asFirstSent);
    });
    if (!decision.ok) return { resume, plan, refused: decision.reasons, notes: [], confirm: false, go };
    return { resume, plan, notes: controlTotalNotes({ ...o.guards, payable }), confirm, go };
  } catch (e) {
    await close();
    throw e;
  }
}

export type PlanStageOptions = Omit<PlanOptions, 'usage' | 'screened'> &
  DuplicateOptions &
  Pick<PipelineOptions, 'asFirstSent'> & {
    enablePairs: boolean;
    onEvent?: (e: EngineEvent) => void;
    ledger: Ledger;
    screening?: ScreeningOptions;
  };

/** The preflight for the rows with no payout yet (or sent again), then the plan. Throws PayoutApiError from the preflight. */
export async function planStage(conn: Connection, batch: LoadedBatch, folded: FoldedJournal, env: string, o: PlanStageOptions) {
  const inScope = (p: PayoutRow) => !o.only || o.only.has(p.rowNumber);
  const validInScope = (r: EngineRow) => !!r.payout && inScope(r.payout);
  const phase = (p: PayoutRow) => rowState(folded, p.reference).phase;
  const fresh = underNewKey(o, folded);
  await refuseRecentDuplicates(o.ledger, batch, fresh, o);
  // A row settling its outcome is resent as journalled, whatever its cells say now (I2): screened, planned and totalled so
  // (after the duplicates check, which reads this batch's rows as validation did, by their cells).
  const edited: string[] = [];
  // (those rows: refused once settled, the edit, never planned nor screened, waits for the next retry)
  const asFirstSent = new Set(o.asFirstSent);
  // (a pass over the rows only when the journal has a row to settle)
  if ([...folded.rows.values()].some((s) => !!s.body && unsettled(s)))
    batch.rows.forEach((r, i) => {
      const body = r.payout && unsettledBody<InitiateRequest & Pick<PayoutRow, 'method'>>(rowState(folded, r.payout.reference));
      if (!body) return;
      const { supportingDocument: _url, ...sent } = body;
      if (bodyDigest(sent) === bodyDigest(initiateBody(r.payout!))) return;
      const payout = { ...r.payout!, remitterAddress: undefined, ...sent, sourceAmount: fromApi(sent.sourceAmount) };
      batch.rows.set(i, { ...r, payout });
      asFirstSent.add(r.rowNumber);
      edited.push(
        `row ${r.rowNumber} (${formatAmount(payout.sourceAmount, sent.sourceCurrency)} ${sent.sourceCurrency} to ${sent.beneficiary.accountName})`,
      );
    });
  // (offline, before any request: a list that cannot be read stops the command here)
  const screened = o.screening && (await screenRows(batch.rows.filter(validInScope), o.screening));
  // (the places of the rows to check, not the rows: they are read again one at a time)
  const places = batch.rows.flatMap(({ payout: p }, i) =>
    p && inScope(p) && (phase(p) !== 'created' || o.resend?.has(p.reference)) ? [i] : [],
  );
  const toCheck = listView(places.length, (i) => batch.rows.at(places[i]!)!.payout!);
  const onStep = o.onEvent && ((step: PreflightStep) => o.onEvent!({ type: 'preflight', step }));
  const pf = await preflight(conn.client, toCheck, { enablePairs: o.enablePairs, onStep });
  if (edited.length)
    pf.warnings.push(`${edited.join(', ')}: edited since sent, outcome not known: the edit is not applied, resent as first sent`);
  const planned = async () => {
    await conn.usage?.flush().catch(() => undefined);
    const usage = await conn.client.quotaUsage().catch(() => undefined);
    return { plan: buildPlan(batch, pf, folded, env, { ...o, usage, screened }), preflight: pf, usage, asFirstSent };
  };
  const first = await planned();
  // A wallet is short and no pair was read: the pairs price its swap (spec §4.9), one request.
  if (!first.plan.swapRefusals.length || pf.pairs || o.approvedSwaps) return first;
  pf.requests++;
  pf.pairs = (await listedPairs(conn.client)) ?? [];
  return planned();
}

/**
 * Journals each row the screening held (or the approved plan's screening, which left it out of `only`), and each held
 * before that passes now: a run that screens nobody keeps it held.
 */
function recordHolds(session: BatchSession, batch: LoadedBatch, plan: BatchPlan, { only, planned }: PipelineOptions): void {
  const at = new Date().toISOString();
  for (const { payout: p } of plan.screening?.lists.length ? batch.rows : []) {
    const held = !!p && (plan.screening!.held.has(p.rowNumber) || !!planned?.screening?.held.some((h) => h.rowNumber === p.rowNumber));
    if (!p || (!held && only && !only.has(p.rowNumber))) continue;
    if (held || rowState(session.folded, p.reference).held)
      record(session, { t: 'screened', ref: p.reference, payee: payeeDigest(p), held, at });
  }
}

/** Sends the plan's rows (execute.ts) and attaches the documents created rows still lack, then finishes. */
async function send(run: Run, approved: BatchPlan, fees: ReadonlyMap<number, DecT>, asFirstSent: Set<number>): Promise<PipelineResult> {
  let plan = approved;
  const { batch, session, o } = run;
  const { settings } = o;
  const { client } = o.conn;
  const rowOf = rowByNumber(batch.rows);
  const payoutOf = (n: number) => rowOf(n)!.payout!;
  const { finishing, scope } = rowsToFinish(batch, session.folded, o);
  // From here requests may have gone out: whatever fails is no longer "nothing was sent" but exit 4.
  try {
    // The approved swaps go before the rows of their currencies; a currency whose swap stopped
    // keeps its rows NOT_SENT, the others go at once (spec §4.7).
    const swaps = plan.fundedBySwaps ? plan.swaps : [];
    const need = needOf(plan, payoutOf, session.folded, fees);
    // (a swap not as sent stops the waiting rows at once, whose first halts the run, not once every swap is done)
    let notAsSent: (f: SwapFunding) => void = () => undefined;
    const early = new Promise<Stopped>((resolve) => (notAsSent = (f) => !f.funded && resolve(f)));
    const rateTolerance = settings.swapRateTolerance ?? new Dec('0.01');
    const funding = fundBySwaps({ client, session, need, rateTolerance, stop: settings.stop, notAsSent }, swaps);
    funding.catch(() => undefined); // (awaited below, also when no row waits for it)
    // (and the rows of a swap an earlier run left unsettled, --fund-by-swap or not: the list must show it as sent first)
    const leftover = [...session.folded.swaps.values()].filter(unsettled).map((s) => s.currency);
    const waiting = new Set([...swaps.flatMap((p) => [p.currency, p.fromCurrency]), ...leftover]);
    const before = {
      waits: (p: PayoutRow) => waiting.has(p.sourceCurrency),
      funded: async (p: PayoutRow) => {
        const f = await Promise.race([funding.then((m) => m.get(p.sourceCurrency)), early]);
        return f && !f.funded ? f : undefined;
      },
    };
    const res = await executeRows(
      listView(approved.toSend.length, (i) => payoutOf(approved.toSend[i]!)),
      {
        client,
        session,
        mode: o.mode,
        settings,
        documents: batch.documents,
        finish: finishing,
        resend: o.resend,
        asFirstSent,
        fees,
        ...(waiting.size ? { before, halts: early.then((f) => f.error.message) } : {}),
        held: (p) => clearanceLapsed({ screening: plan.screening, toSend: [p.rowNumber] }),
      },
    );
    const stopped = [...(await funding).values()].filter((f): f is Stopped => !f.funded);
    plan = withoutStoppedCurrencies(plan, stopped, payoutOf);
    const view: RunView = { plan, executed: res.outcomes, stopped: res.stopped, asFirstSent };
    // (an answer not as sent is said first, a payout's or a swap's: running again would not be safe)
    const swapNotAsSent = res.answerNotAsSent ? undefined : stopped.find((f) => f.notAsSent)?.error.message;
    const halted = swapNotAsSent ?? res.halted ?? stopped.find((f) => f.halt)?.error.message;
    const answerNotAsSent = res.answerNotAsSent || !!swapNotAsSent;
    const ran = { stopped: res.stopped, keyProofs: res.keyProofs };
    if (halted) return await finish(run, scope, view, 'halted', { halted, answerNotAsSent, ...ran }, true);
    // (refused: nothing was sent; once rows of other currencies went, the run stopped part way)
    const why = stopped.map((f) => f.error.message);
    const extra = stopped.length ? (res.created ? { halted: why.join('; ') } : { refused: why }) : {};
    return await finish(run, scope, view, stopped.length ? 'refused' : 'ok', { ...extra, ...ran }, true);
  } catch (e) {
    // (best effort: the error is the one to report)
    await writeResultsFile(run, scope, { plan, executed: new Map(), stopped: true }).catch(() => undefined);
    // (the journal may be what failed: without run-end the next run treats this one as killed)
    attempt(() => record(session, { t: 'run-end', at: new Date().toISOString(), kind: 'halted' }, { sync: true }));
    throw new FailedAfterSending(session.journalPath, e);
  }
}

/**
 * What the rows of a currency sent under a new key need in its wallet (the swap's credit must show
 * that much), fee margin included: never sent, refused, or refunded and sent again (retry). Rows of
 * unknown outcome are left out: they may be paid already, and a resend of one that was not is
 * refused (INSUFFICIENT_FUNDS), never paid twice.
 */
function needOf(plan: BatchPlan, payoutOf: (n: number) => PayoutRow, folded: FoldedJournal, fees: ReadonlyMap<number, DecT>) {
  return (currency: string): DecT | undefined => {
    const c = plan.currencies.find((x) => x.currency === currency);
    if (!c) return undefined;
    let need = new Dec(c.feeMargin ?? 0);
    for (const n of plan.toSend) {
      const p = payoutOf(n);
      if (p.sourceCurrency === currency && !unsettled(rowState(folded, p.reference)))
        need = need.plus(p.sourceAmount).plus(fees.get(n) ?? 0);
    }
    return need;
  };
}

/** The plan with the rows of each stopped currency moved from toSend to notSent, saying why. */
function withoutStoppedCurrencies(plan: BatchPlan, stopped: readonly Stopped[], payoutOf: (n: number) => PayoutRow): BatchPlan {
  if (!stopped.length) return plan;
  const why = new Map(stopped.map((f) => [f.currency, f]));
  const notSent = new Map(plan.notSent);
  const toSend = plan.toSend.filter((n) => {
    const f = why.get(payoutOf(n).sourceCurrency);
    if (f) notSent.set(n, { status: 'NOT_SENT', code: f.error.code!, message: f.error.message });
    return !f;
  });
  return { ...plan, toSend, notSent };
}

/** Created rows whose payouts still lack documents: attached by this run, so moved from `retry`'s kept rows into scope. */
function rowsToFinish(batch: LoadedBatch, folded: FoldedJournal, o: PipelineOptions): { finishing: string[]; scope: Scope } {
  const scope: Scope = { only: o.only && new Set(o.only), keep: o.keep && new Map(o.keep) };
  const finishing: string[] = [];
  for (const r of batch.rows) {
    const ref = referenceOf(r);
    if (!ref || !(!o.only || o.only.has(r.rowNumber) || o.keep?.has(r.rowNumber))) continue;
    const s = rowState(folded, ref);
    if (s.phase !== 'created' || !documentsToAttach(s).length || o.resend?.has(ref)) continue;
    finishing.push(ref);
    scope.keep?.delete(r.rowNumber);
    scope.only?.add(r.rowNumber);
  }
  return { finishing, scope };
}

/** The results file (`write`: once the run may have sent something), outcomes, summary, run-end; the journal closed. */
async function finish(
  run: Run,
  scope: Scope,
  view: RunView,
  kind: RunKind,
  extra: Partial<PipelineResult>,
  write: boolean,
): Promise<PipelineResult> {
  const { batch, session, o } = run;
  const swaps = swapLinesOf(session.folded.swaps.values());
  const now = write ? await writeResultsFile(run, scope, view, swaps) : await outcomesNow(run, scope, view);
  const outcomes = new Map<number, RowOutcome>();
  batch.rows.forEach((r, i) => {
    const kept = scope.keep?.get(r.rowNumber);
    if (kept) outcomes.set(r.rowNumber, keptOutcome(kept, keptCurrency(r, session.folded)));
    else if (!scope.only || scope.only.has(r.rowNumber)) outcomes.set(r.rowNumber, now[i]!);
  });
  const summary = { ...summarise([...outcomes.values()]), ...(swaps.length ? { swaps } : {}) };
  const ended = kindOf(kind, summary, [...outcomes.values()].filter((x) => x.error?.code === NOT_DUE).length);
  record(session, { t: 'run-end', at: new Date().toISOString(), kind: ended }, { sync: true });
  session.writer.close();
  return {
    kind: ended,
    batchId: batch.identity.batchId,
    journalPath: session.journalPath,
    report: session.report,
    plan: view.plan,
    summary,
    resultsPath: o.results.path,
    resultsWritten: write,
    outcomes,
    ...extra,
  };
}

/** A run that went through: rows-failed when a row needs someone, not-finished when the rest wait for their day (NOT_DUE). */
export function kindOf(kind: RunKind, summary: RunSummary, notDue = 0): RunKind {
  if (kind !== 'ok') return kind;
  if (summary.notCreated > notDue || summary.outcomes.failed > 0 || summary.outcomes.waiting > 0) return 'rows-failed';
  return notDue ? 'not-finished' : 'ok';
}

/** Writes the results file under the lock `status` and `listen` take, statuses caught up first: none moves backward. */
function writeResultsFile(run: Run, scope: Scope, view: RunView, swaps?: SwapLine[]): Promise<(RowOutcome | undefined)[]> {
  const { batch, o } = run;
  return withLock(
    resultsLockPath(o.results.path),
    async () => {
      const now = await outcomesNow(run, scope, view);
      const table: ResultsSource = {
        format: o.results.format,
        inputColumns: batch.inputColumns,
        rows: batch.rows,
        delimiter: o.results.delimiter,
        // (a kept row has no outcome now: only then is its row read again, for its number)
        resultAt: (i) => (now[i] ? resultValues(now[i]) : scope.keep!.get(batch.rows.at(i)!.rowNumber)!),
        ...(swaps?.length ? { swaps } : {}),
      };
      await writeResults(o.results.path, table);
      return now;
    },
    { purpose: 'results write' },
  );
}

/** Each row's outcome now (undefined for a kept row), the journal's latest statuses caught up first. */
async function outcomesNow({ batch, session, o }: Run, scope: Scope, view: RunView): Promise<(RowOutcome | undefined)[]> {
  await catchUpStatuses(session);
  const v = o.planned && view.plan ? { ...view, plan: withPlanReasons(view.plan, o.planned) } : view;
  return batch.rows.map((r) => (scope.keep?.has(r.rowNumber) ? undefined : rowOutcome(r, session.folded, v)));
}

/** `run --plan`: the rows its plan left out (invalid, a duplicate, held...) say the plan's reason, this run not judging them. */
function withPlanReasons(plan: BatchPlan, { notSent, invalidRows }: PlanFile): BatchPlan {
  const note = ({ code, message }: PlanFile['notSent'][number]) => ({ status: 'NOT_SENT' as const, code, message });
  return {
    ...plan,
    notSent: new Map([...notSent.map((n) => [n.rowNumber, note(n)] as const), ...plan.notSent]),
    invalidRows: new Map([...invalidRows.map((n) => [n.rowNumber, note(n)] as const), ...plan.invalidRows]),
  };
}

/** A row's outcome now: what this run did, else its journal state, else invalid, left out or not sent. */
export function rowOutcome(r: EngineRow, folded: FoldedJournal, v: RunView): RowOutcome {
  const ref = referenceOf(r);
  const invalid = v.plan?.invalidRows.get(r.rowNumber);
  if (!ref) {
    const error = invalid ?? firstError(r.problems) ?? { code: 'INVALID', message: 'invalid row' };
    return { status: ENGINE_STATUSES.INVALID, documents: [], error };
  }
  const s = rowState(folded, ref);
  // (a created row is read from its journal state, which `listen` or `status` may have moved on)
  const done = v.executed.get(r.rowNumber);
  if (done && s.phase !== 'created') return done;
  // (a row refused before and invalid now says why now, not its old refusal; its key and the payouts it replaced are kept)
  if (invalid && (s.phase === 'none' || s.phase === 'rejected'))
    return { status: ENGINE_STATUSES.INVALID, documents: [], error: invalid, key: s.key, earlier: s.earlier };
  const left = v.plan?.notSent.get(r.rowNumber);
  const fallback: RowOutcome = left
    ? {
        // (ALREADY_PAID: its reference was paid by another batch of the account, whose payout it shows)
        status:
          left.code === ENGINE_STATUSES.ALREADY_PAID || left.code === ENGINE_STATUSES.HELD_SCREENING ? left.code : ENGINE_STATUSES.NOT_SENT,
        ...(left.payout ? { payout: left.payout } : {}),
        documents: [],
        error: { code: left.code, message: left.message },
      }
    : {
        status: ENGINE_STATUSES.NOT_SENT,
        documents: [],
        error: v.stopped ? STOPPED_BEFORE_ROW : { code: 'NOT_SENT', message: 'not sent: the run was refused or stopped before this row' },
      };
  // (the plan's reason, and what the journal holds of it: its key, which ties the row to its payment, and the payouts it replaced)
  if (left && s.phase === 'rejected') return { ...fallback, key: s.key, earlier: s.earlier };
  const settled = outcomeFromState(s, fallback);
  const p = r.payout;
  // (the row's cells are the edit; its payout, this journalled body)
  const o =
    p && v.asFirstSent?.has(r.rowNumber) && isCreatedStatus(settled.status) && !settled.error
      ? {
          ...settled,
          error: {
            code: 'EDIT_NOT_APPLIED',
            message: `the payout was sent as first journalled, ${formatAmount(p.sourceAmount, p.sourceCurrency)} ${p.sourceCurrency} to ${p.beneficiary.accountName}: the edit of this row is not paid`,
          },
        }
      : settled;
  const cleared = v.plan?.screening?.cleared.get(r.rowNumber);
  if (!cleared) return o;
  const clearance = cleared.map((c) => `${c.id} (${c.list}:${c.entryId}, signed by ${c.signedBy.join(', ')}, until ${c.expiresAt})`);
  return { ...o, clearance: clearance.join('; ') };
}

/** A kept row's currency: its journalled payout's (a row edited into an invalid one has no other), else its cells'. */
const keptCurrency = (r: EngineRow, folded: FoldedJournal): string => {
  const ref = referenceOf(r);
  return (ref && rowState(folded, ref).payout?.sourceCurrency) || (r.payout?.sourceCurrency ?? '');
};

/** A kept row of a retried results file, as an outcome for the summary: an amount that cannot be read is left out, never guessed. */
export function keptOutcome(v: ResultValues, currency: string): RowOutcome {
  const status = v.status ?? ENGINE_STATUSES.NOT_SENT;
  const total = readAmount(v.totalDeductible);
  const earlier = keptEarlier(v.earlierPayouts);
  if (!isCreatedStatus(status) || !total || !v.payoutId) return { status, documents: [], ...earlier };
  const fee = readAmount(v.fee) ?? new Dec(0);
  const destination = readAmount(v.destinationAmount);
  // (a rate is written plain, never grouped: 1,085 is a decimal comma, no rate to guess)
  const rate = v.appliedRate !== undefined && isPlainDecimal(v.appliedRate.trim()) ? new Dec(v.appliedRate.trim()) : undefined;
  return {
    status,
    documents: [],
    ...earlier,
    payout: {
      id: v.payoutId,
      payoutRef: v.payoutRef ?? '',
      status,
      sourceAmount: total.minus(fee).toFixed(),
      sourceCurrency: currency,
      ...(destination ? { destinationAmount: destination.toFixed() } : {}),
      destinationCurrency: '',
      transactionFees: fee.toFixed(),
      ...(rate ? { exchangeRate: rate.toFixed() } : {}),
      updatedAt: v.updatedAt ?? '',
      documents: 0,
      ...(v.refunded !== undefined ? { refunded: v.refunded } : {}),
    },
  };
}

/** The payouts a kept row replaced, as its earlierPayouts cell names them (a cell that cannot be read: none). */
function keptEarlier(cell: string | undefined): Pick<RowOutcome, 'earlier'> {
  const amount = (text: string | undefined) => (text === undefined ? undefined : readAmount(text)?.toFixed());
  const earlier = parseEarlierPayouts(cell).payouts.map((e): PayoutSnapshot => ({
    id: e.payoutId ?? '',
    status: e.status,
    sourceAmount: amount(e.amount)!,
    sourceCurrency: e.currency,
    destinationCurrency: '',
    documents: 0,
    ...defined({ payoutRef: e.payoutRef, transactionFees: amount(e.fee), refunded: amount(e.refunded) }),
  }));
  return earlier.length ? { earlier } : {};
}

// ---- `run`: load the batch, open (or resume) its journal, refuse a batch seen under another name (I4), then the pipeline.

export interface RunOptions extends SendOptions, Omit<LoadOptions, 'stop'> {
  file?: string;
  resultsPath?: string;
  /** A plan written by `payout-batch plan --out`: run exactly it. */
  planFile?: string;
}

export type RunResult = PipelineResult;

/** `run` unattended: prepare, then execute (nothing is sent when the plan needs a person's confirmation). */
export const runBatch = async (o: RunOptions): Promise<RunResult> => execute(await prepareRun(o));

/** Prepare `run`: the plan file checked, the batch loaded with its journal, the session opened under this run's reservation. */
export async function prepareRun(o: RunOptions): Promise<Prepared<RunResult>> {
  const planned = o.planFile ? await readPlanFile(o.planFile) : undefined;
  // (the plan's reading, as its sheet's: the journal records it for retry)
  o = { ...o, encoding: o.encoding ?? planned?.encoding, allowDuplicateRows: o.allowDuplicateRows || planned?.allowDuplicateRows };
  const file = o.file ?? planned?.file;
  if (!file) throw new BatchUnusable('NO_BATCH_FILE', 'name the batch file (or --plan PLAN)');
  const env = o.conn.environment.name;
  if (planned) await verifyPlan(planned, file, env, o.conn.environment.baseUrl, o.sheet, o.settings.mergeDocuments);
  const ledger = ledgerOf(o.conn, { root: o.stateDir });
  const journal = journalReader(ledger);
  const batch = await loadBatch(
    file,
    {
      ...o,
      sheet: planned ? planned.sheet : o.sheet,
      documents: o.documents ?? planned?.documents,
      batchId: planned ? planned.batchLabel : o.batchId,
      stop: o.settings.stop,
    },
    journal.lookup,
  );
  const read = journal.read();
  if (planned) verifyPlannedRows(planned, batch, read?.folded);
  const results = resultsPathFor(batch.file, o.resultsPath, { inputFormat: batch.format, sheet: batch.identity.ownSheet });
  await refuseAnotherRunsResults(results.path, read?.folded, ledger, batch);
  const only = planned ? new Set(planned.rows.map((r) => r.rowNumber)) : undefined;
  // (a batch another process is sending, or whose references another batch sent, is refused here)
  const session = await reservedSession(batch, read?.folded.rows, { ...o, ledger, env, command: 'run', results: results.path, only, read });
  const pipeline: PipelineOptions = { ...o, results: { ...results, delimiter: batch.delimiter }, only, mode: 'run', planned };
  return preparePipeline(batch, session, pipeline, async (result) => result);
}

/**
 * A results file is replaced only by a run of the batch it records; another's is refused, never replaced: one holding
 * payouts this account's ledger does not know (another service, key or state folder), or payouts of another batch's
 * file (or sheet) on rows this batch has none of (`flag`: how the run names its results file).
 */
export async function refuseAnotherRunsResults(
  path: string,
  folded: FoldedJournal | undefined,
  ledger: Ledger,
  batch: Pick<LoadedBatch, 'rows' | 'file' | 'sheet'>,
  flag = '--results',
): Promise<void> {
  const apart = `Nothing was sent; write this run's results apart: ${flag} ${freeResultsPath(path)}`;
  const st = statSync(path, { throwIfNoEntry: false });
  // (a folder is never written over: refused before sending, not by the write after it)
  if (st?.isDirectory()) throw new ResultsError('BAD_RESULTS_PATH', path, `${path}: a folder has that name, not a results file. ${apart}`);
  if (!st?.isFile()) return; // (none)
  const known = new Map<string, BatchHeader | undefined>(); // the payout ids and references this account's ledger holds → their batch
  const learn = (f: FoldedJournal | undefined) => {
    for (const [reference, s] of f?.rows ?? []) {
      known.set(reference, f!.header);
      for (const p of [s.payout, ...(s.earlier ?? [])]) if (p) known.set(p.id, f!.header);
    }
  };
  learn(folded);
  const seen = new Map<string, string>(); // payout id → reference (read a row at a time: a results file of any size)
  try {
    const table = await streamResults(path);
    const column = batchColumns(table).reference ?? 'reference';
    for await (const r of table.rows) {
      const ref = r.cells[column] ?? '';
      if (r.result.payoutId && !known.has(r.result.payoutId) && !known.has(ref)) seen.set(r.result.payoutId, ref);
    }
  } catch {
    // (another batch's file, one that breaks part way (ours are written whole), anything else not ours: never written over)
    throw new BatchRefused(`${path} is there and is not a results file, so it is not written over. ${apart}`, 'results-of-another-run');
  }
  if (!seen.size) return;
  for (const b of await foldAll([ledger])) learn(b.folded);
  const theirs = new Set(seen.values()); // (left: the references no row of this batch has)
  for (const r of batch.rows) theirs.delete(referenceOf(r) ?? '');
  const whose = ([id, ref]: [string, string]) => known.get(id) ?? known.get(ref);
  // (the batch file written over by the next batch, payroll.csv each month: its results file goes with it)
  const elsewhere = (h?: BatchHeader) => !!h && (h.file !== batch.file || h.sheet !== batch.sheet);
  const unknown = ([id, ref]: [string, string]) => !known.has(id) && !known.has(ref);
  const others = [...seen].filter((x) => (theirs.has(x[1]) && elsewhere(whose(x))) || unknown(x));
  if (others.length)
    throw new BatchRefused(
      `${path} holds ${plural(others.length, 'payout')} ` +
        (others.some(unknown)
          ? "this account's ledger does not know: the record of another run (another service, key or state folder)"
          : `of another batch of this account, ${whose(others[0]!)?.file}: its record`) +
        `. ${apart}`,
      'results-of-another-run',
    );
}

/** The plan file's quotes, journalled where the journal has none; returns the quoted fees by row number. */
function recordPlannedQuotes(session: BatchSession, planned: PlanFile): Map<number, DecT> {
  for (const { reference: ref, rate, fee, totalDeductible, destinationAmount = '0' } of planned.rows) {
    if (rate === undefined || session.folded.rows.get(ref)?.quote) continue;
    record(session, { t: 'quote', ref, attempt: 1, rate, fee, totalDeductible, destinationAmount });
  }
  return new Map(planned.rows.filter((r) => r.fee !== undefined).map((r) => [r.rowNumber, new Dec(r.fee!)]));
}

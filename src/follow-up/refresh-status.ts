// `status RESULTS`: rows brought up to the ledger's latest state (matched by key, payout id or
// reference, never line number), payouts not final refreshed from the list (spec §4.4; get-payout
// only where the list cannot answer), refunds found (§4.15), the file rewritten forward only.
import { resolve } from 'node:path';
import { PayoutApiError } from '../client/errors.ts';
import type { UsageReport } from '../client/quota.ts';
import type { PayoutAnswer, WalletTransactionAnswer } from '../client/answers.ts';
import { spillResults, writeResults } from '../results/results.ts';
import { batchColumns, copiedPayouts } from '../results/read.ts';
import type { ResultRow, ResultValues, ResultsList } from '../results/types.ts';
import { isFailedAfterCreation, type RowState } from '../journal/lines.ts';
import { nextStatusUndated } from '../spec/status-order.ts';
import { utcTime } from '../text.ts';
import { foldAll, type Ledger } from '../ledger/account-ledger.ts';
import { ledgerStates, namedReferences, refuseRowApart } from '../engine/retry-batch.ts';
import type { RunKind } from '../engine/pipeline.ts';
import { NOT_DUE, SENT_ELSEWHERE } from '../engine/batch-plan.ts';
import { Dec } from '../money.ts';
import { LIST_MAX_LIMIT, isFinalStatus } from '../spec/codes.ts';
import {
  applyRefundsToResultsFile,
  applyStatus,
  underResultsLock,
  isRealMove,
  type ApplyOptions,
  type RefundSeen,
  type StatusUpdate,
} from './apply-status.ts';
import {
  countGroups,
  ENGINE_STATUSES,
  isCreatedStatus,
  outcomeCounts,
  outcomeFromState,
  resultValues,
  statusGroup,
  type StatusGroup,
} from '../engine/outcome.ts';
import { moneyEntryOfEarlier, moneyTotals, parseEarlierPayouts, readAmount, type MoneyEntry } from '../engine/money-totals.ts';
import { amountAsRead } from '../validation/amount.ts';
import { findRefund, isRefundOf, refundIn, type PayoutToRefund, type Refund } from '../engine/refund.ts';
import { readPages } from '../client/pages.ts';
import { counted, failureOf, readPayouts, requestsTotal, type FetchOptions, type RequestCounts } from './reconcile-fetch.ts';
import { statusOfSwaps } from './swap-views.ts';

interface StatusOptions extends ApplyOptions, FetchOptions {
  resultsFile: string;
  /** Called once before the first request. */
  onPlan?: (p: { requests: number; usage?: UsageReport }) => void;
}

export type StatusResult = Awaited<ReturnType<typeof refreshStatus>>;
type StatusKind = Extract<RunKind, 'ok' | 'rows-failed' | 'halted' | 'not-finished'>;

/** The first row holding a payout to ask about, and its status. */
type Asked = { rowNumber: number; status: string };

function refundsSought(t: ResultsList): Map<string, PayoutToRefund> {
  const sought = new Map<string, PayoutToRefund>();
  const currencyOfRow = currencyOf(t);
  for (const row of t.rows) {
    const { payoutId, payoutRef, status, refunded } = row.result;
    if (payoutId && statusGroup(status) === 'failed' && refunded === undefined)
      sought.set(payoutId, { id: payoutId, payoutRef, currency: currencyOfRow(row) });
  }
  return sought;
}

/**
 * List items carry no informationRequests nor statusDetail (spec §2): a payout waiting for us, or a
 * PENDING after a request for information (under review?), needs a get-payout.
 */
const needsGet = (listed: PayoutAnswer, held: string): boolean =>
  listed.status === 'ADDITIONAL_INFO_REQUIRED' ||
  (listed.status === 'PENDING' && held === 'ADDITIONAL_INFO_REQUIRED') ||
  (isFailedAfterCreation(listed.status) && !failureReasonOf(listed));

/** Spec §2 shows no reason field on a payout (only the event's data.reason, §6): the plausible names. */
function failureReasonOf(p: PayoutAnswer): string | undefined {
  const o = p as Record<string, unknown>;
  const r = ['failureReason', 'reason', 'statusReason', 'rejectionReason'].map((k) => o[k]).find((v) => typeof v === 'string' && v.trim());
  return r as string | undefined;
}

export const updateOf = (p: PayoutAnswer): StatusUpdate => {
  const { id: payoutId, status, statusDetail, informationRequests, updatedAt } = p;
  return { payoutId, status, statusDetail, informationRequests, at: updatedAt, reason: failureReasonOf(p), source: 'get' };
};

async function readStatuses(o: StatusOptions, todo: ReadonlyMap<string, Asked>, requests: RequestCounts) {
  const read = await readPayouts(todo.keys(), o, requests, (p) => needsGet(p, todo.get(p.id)!.status));
  const updates: StatusUpdate[] = [];
  for (const [payoutId, held] of todo) {
    const listed = read.listed.get(payoutId);
    const p = read.got.get(payoutId) ?? (listed?.status !== held.status ? listed : undefined);
    if (p) updates.push(updateOf(p));
  }
  const failures = [...read.errors].map(([payoutId, e]) => ({
    rowNumber: todo.get(payoutId)!.rowNumber,
    payoutId,
    ...failureOf(e),
  }));
  if (read.halted) o.logger?.error({ requestId: read.halted.requestId, status: read.halted.status }, 'status refresh halted');
  const createdAt = new Map<string, string>();
  for (const [id, p] of [...read.listed, ...read.got]) if (p.createdAt) createdAt.set(id, p.createdAt);
  return { updates, failures, halted: read.halted?.message, createdAt };
}

/**
 * The wallet's transactions (spec §4.15), newest first, down to the oldest failed payout less a
 * margin (pages.ts); only when the pages stopped short is a payout looked up by payoutRef.
 */
async function findRefunds(
  o: StatusOptions,
  file: string,
  table: ResultsList,
  createdAt: ReadonlyMap<string, string>,
  requests: RequestCounts,
) {
  const sought = refundsSought(table);
  const refundsFound: RefundSeen[] = [];
  if (!sought.size) return { refundsFound };
  const found = (p: PayoutToRefund, r: Refund | undefined) => r && refundsFound.push({ payoutId: p.id, ...r });
  let halted: string | undefined;
  const times = [...sought.keys()].map((id) => utcTime(createdAt.get(id)));
  const wanted = new Set(sought.keys());
  try {
    const listing = await readPages<WalletTransactionAnswer>({
      fetch: counted(requests, 'transactionPages', (page: number) =>
        o.client.listTransactions({ page, limit: LIST_MAX_LIMIT }, { signal: o.stop }),
      ),
      wanted,
      settles: (t) => [...sought.values()].find((p) => isRefundOf(t, p))?.id,
      stopBelow: times.every((t) => t !== undefined) ? times.reduce((x, y) => Math.min(x, y)) : undefined,
      what: 'transactions',
      logger: o.logger,
      stop: o.stop,
    });
    for (const p of sought.values()) found(p, refundIn(listing.items, p));
    const short = listing.ended === 'budget' || listing.ended === 'repeated page';
    const lookUp = counted(requests, 'transactionPages', (p: PayoutToRefund) => findRefund(o.client, p));
    for (const id of short ? wanted : []) found(sought.get(id)!, await lookUp(sought.get(id)!));
  } catch (e) {
    if (!(e instanceof PayoutApiError)) throw e;
    o.logger?.warn({ requestId: e.requestId, errorCode: e.code }, 'transactions could not be read');
    if (e.serviceTrouble) halted = e.message;
  }
  await applyRefundsToResultsFile(file, refundsFound, o);
  return { refundsFound, halted };
}

export async function refreshStatus(o: StatusOptions) {
  const file = resolve(o.resultsFile);
  const { todo, final, rows, expected } = await toAsk(file, o);
  o.onPlan?.({ requests: expected, usage: await o.client.quotaUsage().catch(() => undefined) });
  const requests: RequestCounts = { payoutPages: 0, getPayout: 0, transactionPages: 0, total: 0 };
  const read = await readStatuses(o, todo, requests);

  // applied even when the refresh stopped early; then the file is read once for the steps after
  const apply = await applyStatus([{ file }], read.updates, o);
  const table = await spillResults(file);
  const refunds = read.halted || o.stop?.aborted ? { refundsFound: [] } : await findRefunds(o, file, table, read.createdAt, requests);
  const swaps =
    read.halted || refunds.halted || o.stop?.aborted
      ? { swaps: [], moved: [], failures: [], halted: undefined }
      : await statusOfSwaps(o, file, table, o.ledgers ?? [], requests);
  const halted = read.halted ?? refunds.halted ?? swaps.halted;
  requests.total = requestsTotal(requests);

  const after = refunds.refundsFound.length ? await spillResults(file) : table;
  const statuses = after.rows.map((r) => r.result.status);
  const byStatus: Record<string, number> = {};
  for (const s of statuses) byStatus[s ?? '(none)'] = (byStatus[s ?? '(none)'] ?? 0) + 1;
  const groups = countGroups(statuses);
  const moneyProblems: string[] = [];
  const money = moneyTotals(moneyEntries(after, moneyProblems));
  const finished = groups.paid === after.rows.length;
  // a row with no payout needs a person (one not due yet waits for its day, as for run), as do unreadable money cells
  const needsUs =
    read.failures.length ||
    swaps.failures.length ||
    groups.failed ||
    groups.waiting ||
    moneyProblems.length ||
    after.rows.some((r) => !isCreatedStatus(r.result.status) && r.result.errorCode !== NOT_DUE);
  // rows-failed: a row failed, waits for us, has no payout or could not be read; not-finished: poll again
  const kind: StatusKind = halted ? 'halted' : needsUs ? 'rows-failed' : finished ? 'ok' : 'not-finished';
  return {
    kind,
    /** Every row paid: nothing left to poll or to do. */
    finished,
    outcomes: outcomeCounts(statuses),
    groups,
    money,
    moneyProblems,
    moved: apply.applied.filter(isRealMove),
    refundsFound: refunds.refundsFound,
    ...rowsNeedingUs(after),
    rows,
    asked: todo.size,
    final,
    requests,
    apply,
    failures: read.failures,
    halted,
    byStatus,
    swaps: swaps.swaps,
    swapsMoved: swaps.moved,
    swapFailures: swaps.failures,
  };
}

/**
 * The payouts to ask about (the first row holding each one not final), once the rows are caught up with the ledger, and the
 * requests expected: list pages, a get-payout per payout waiting for us, a transactions page for refunds. The table is not kept.
 */
async function toAsk(file: string, o: StatusOptions) {
  const table = (await catchUpWithLedger(file, o.ledgers ?? [], o)) ?? (await spillResults(file));
  batchColumns(table, file); // (a header that does not name each row's reference, amount and currency: refused before anything is asked)
  const todo = new Map<string, Asked>();
  let final = 0;
  for (const row of table.rows) {
    const id = row.result.payoutId;
    const st = row.result.status ?? '';
    if (!id || !isCreatedStatus(st)) continue;
    if (isFinalStatus(st)) final++;
    else if (!todo.has(id)) todo.set(id, { rowNumber: row.rowNumber, status: st });
  }
  const waiting = [...todo.values()].filter((a) => a.status === 'ADDITIONAL_INFO_REQUIRED').length;
  const expected = Math.ceil(todo.size / LIST_MAX_LIMIT) + waiting + (refundsSought(table).size ? 1 : 0);
  return { todo, final, rows: table.rows.length, expected };
}

/**
 * A row the ledger knows more of (a later payout, status or refund) takes the ledger's latest
 * state, under the results file's lock; nothing is appended. Returns the table (undefined: no ledger).
 */
async function catchUpWithLedger(file: string, ledgers: readonly Ledger[], o: StatusOptions): Promise<ResultsList | undefined> {
  const folds = (await foldAll(ledgers)).map((b) => b.folded);
  if (!folds.length) return undefined;
  return underResultsLock(file, async () => {
    const table = await spillResults(file);
    const reference = batchColumns(table, file).reference;
    const states = ledgerStates(folds, table.rows, (r) => (reference && r.cells[reference]?.trim()) || undefined);
    const named = namedReferences(table.rows, reference);
    let n = 0;
    for (const [i, s] of states) {
      const row = table.rows.at(i)!;
      refuseRowApart(o.resultsFile, row, reference, s, folds, named);
      const latest = ledgerAhead(row.result, s);
      if (!latest) continue;
      const { screeningClearance } = row.result; // (the ledger does not hold it)
      row.result = screeningClearance ? { ...latest, screeningClearance } : latest;
      table.rows.set(i, row);
      n++;
    }
    if (n) await writeResults(file, { ...table, resultAt: (i) => table.rows.at(i)!.result });
    if (n) o.logger?.info({ rows: n }, "rows brought up to the ledger's latest state");
    return table;
  });
}

/** The ledger's values of a row when they say more than its cells, else undefined. */
function ledgerAhead(cells: ResultValues, s: RowState): ResultValues | undefined {
  // (left out for another batch's payout of its reference, whose key it shares: that batch's, never this one's)
  if (cells.status === ENGINE_STATUSES.ALREADY_PAID || SENT_ELSEWHERE.has(cells.errorCode ?? '')) return undefined;
  const v = resultValues(outcomeFromState(s, { status: cells.status ?? '', documents: [] }));
  if (v.payoutId !== cells.payoutId || v.idempotencyKey !== cells.idempotencyKey) return v;
  const forward =
    !isCreatedStatus(cells.status) ||
    nextStatusUndated(
      { status: cells.status!, statusDetail: cells.statusDetail, at: cells.updatedAt },
      { status: v.status!, statusDetail: v.statusDetail, at: v.updatedAt },
    ).apply;
  // (PENDING under review is a place of its own: the list shows neither it nor any statusDetail, spec §2)
  const same = v.status === cells.status && v.statusDetail === cells.statusDetail;
  // (its time cleared by a person: the ledger's, or no later status could be told newer, as when asked for information again)
  const cleared = utcTime(cells.updatedAt) === undefined && utcTime(v.updatedAt) !== undefined;
  if (forward && (!same || cleared)) return v;
  return v.refunded !== undefined && cells.refunded === undefined ? v : undefined;
}

function rowsNeedingUs(t: ResultsList) {
  const column = batchColumns(t).reference ?? '';
  const currencyOfRow = currencyOf(t);
  const inGroup = (g: StatusGroup) => t.rows.filter((r) => statusGroup(r.result.status) === g);
  const row = ({ rowNumber, cells, result }: ResultRow) => ({
    rowNumber,
    reference: cells[column] || undefined,
    payoutId: result.payoutId ?? '',
  });
  return {
    waiting: inGroup('waiting').map((r) => ({ ...row(r), informationRequests: r.result.informationRequests, nextStep: r.result.nextStep })),
    failed: inGroup('failed').map((r) => {
      const { status, statusReason: reason, refunded } = r.result;
      return { ...row(r), status: status!, reason, currency: currencyOfRow(r), refunded };
    }),
  };
}

/** A row's currency, upper case; '' when the file has no such column (the header mapped once per file). */
function currencyOf(t: ResultsList): (row: ResultRow) => string {
  const h = batchColumns(t).sourceCurrency;
  return (row) => ((h ? row.cells[h] : '') ?? '').trim().toUpperCase();
}

/** What the payouts debited and got back, a row at a time, earlier payouts included; an unreadable cell is a problem, never a 0. */
function* moneyEntries(t: ResultsList, problems: string[]): Generator<MoneyEntry> {
  const amountColumn = batchColumns(t).sourceAmount;
  const currencyOfRow = currencyOf(t);
  const copied = copiedPayouts();
  for (const row of t.rows) {
    const r = row.result;
    const copy = copied(r.payoutId, row.rowNumber);
    if (copy) {
      problems.push(`row ${row.rowNumber}: ${copy}`);
      continue;
    }
    const earlier = parseEarlierPayouts(r.earlierPayouts);
    if (earlier.problem) problems.push(`row ${row.rowNumber}: ${earlier.problem}`);
    yield* earlier.payouts.map(moneyEntryOfEarlier);
    if (!r.payoutId || !isCreatedStatus(r.status)) continue;
    // totalDeductible is amount plus fee; without it only the batch's amount is known (feesNotKnown)
    const [column, text] =
      r.totalDeductible !== undefined ? ['totalDeductible', r.totalDeductible] : ['sourceAmount', amountColumn && row.cells[amountColumn]];
    // (the batch's cell as the run read it: "1'234.56")
    const amount = readAmount(text || undefined) ?? (column === 'sourceAmount' && text ? amountAsRead(text) : undefined);
    const refunded = readAmount(r.refunded);
    if (amount === undefined || (r.refunded !== undefined && refunded === undefined)) {
      const [c, v] = amount === undefined ? [column, text] : ['refunded', r.refunded];
      problems.push(`row ${row.rowNumber}: ${c} ${JSON.stringify(v ?? '')} is not an amount: its payout is not counted`);
      continue;
    }
    yield {
      status: r.status!,
      currency: currencyOfRow(row),
      amount,
      fee: r.totalDeductible !== undefined ? new Dec(0) : undefined,
      refunded,
    };
  }
}

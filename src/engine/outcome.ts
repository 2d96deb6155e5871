// What became of each row, in the results file's words, and a run's summary. `status` is the payout's own when it exists,
// else one of ours, never the service's (REJECTED is a payout status, so a refusal is FAILED_TO_SEND).
import { formatApiAmount, formatApiSum } from '../money.ts';
import { isFinalStatus, PAYOUT_STATUSES } from '../spec/codes.ts';
import { documentsToAttach, type ErrorSnapshot, type PayoutSnapshot, type RowState, type SwapState } from '../journal/lines.ts';
import type { ResultValues } from '../results/types.ts';
import type { SwapLine } from '../results/swap-summary.ts';
import type { Logger } from 'pino';
import { maskAccountsIn } from '../mask.ts';
import { earlierPayoutsCell, moneyEntryOfPayout, moneyTotals, type MoneyEntry, type MoneyTotals } from './money-totals.ts';
import { byText } from '../text.ts';

export const ENGINE_STATUSES = {
  /** Offline validation or preflight found a problem in the row: never sent; fix it and `retry`. */
  INVALID: 'INVALID',
  /** Valid but not sent this time (shortfall under --allow-partial, corridor not enabled, run stopped or refused). */
  NOT_SENT: 'NOT_SENT',
  /** The service definitively refused it (a 4xx other than 409/429): fix it and `retry` (attempt + 1). */
  FAILED_TO_SEND: 'FAILED_TO_SEND',
  /** The answer to initiate never came: resent with the same key and body on the next run or retry. */
  UNKNOWN_OUTCOME: 'UNKNOWN_OUTCOME',
  /** 409 IDEMPOTENCY_KEY_CONFLICT: the key was used with another body. A person resolves it; never resent. */
  CONFLICT: 'CONFLICT',
  /** Paid at this account, not by this batch: another batch's payout, or one under this key before it was sent (§4.2 rule 1). */
  ALREADY_PAID: 'ALREADY_PAID',
  /** Its payee hit a sanctions list or the review band: never sent until cleared (`screen --clear`). */
  HELD_SCREENING: 'HELD_SCREENING',
} as const;

const PAYOUT_STATUS_SET = new Set<string>(PAYOUT_STATUSES);
/** A status that means the payout exists at the service. */
export const isCreatedStatus = (status: string | undefined): boolean => !!status && PAYOUT_STATUS_SET.has(status);

export interface RowOutcome {
  status: string;
  payout?: PayoutSnapshot;
  key?: string;
  /** x-request-id of the initiate that created the payout. */
  requestId?: string;
  error?: ErrorSnapshot;
  quote?: RowState['quote'];
  /** documentUrls attached (or to attach). */
  documents: string[];
  earlier?: PayoutSnapshot[];
  /** The approved clearances of its sanctions hits, as the results column says them. */
  clearance?: string;
}

/**
 * What a treasurer does next about a row, by its status (the one grouping: the run summary, `status`, the report; GROUP_OF):
 * paid: done; inProgress (also under review): created and debited, poll `status`; waiting: answer with `attach`;
 * failed after creation: refunded, `retry --resend-failed` pays again; notSent: no payout of this batch, fix the row
 * and `retry` (HELD_SCREENING: cleared only by approvers); unknown, or a status none of ours: run or retry (same key).
 */
export const STATUS_GROUPS = ['paid', 'inProgress', 'waiting', 'failed', 'notSent', 'unknown'] as const;
export type StatusGroup = (typeof STATUS_GROUPS)[number];

/** Each group in words: a title for a table, a line for a terminal. */
export const STATUS_GROUP_WORDS: Record<StatusGroup, { title: string; text: string }> = {
  paid: { title: 'Paid', text: 'paid (SUCCESSFUL)' },
  inProgress: { title: 'In progress', text: 'in progress (PENDING, PROCESSING)' },
  waiting: { title: 'Waiting for information', text: 'waiting for us (ADDITIONAL_INFO_REQUIRED): answer with payout-batch attach' },
  failed: { title: 'Failed (refunded)', text: 'failed after creation, refunded by the service (FAILED, REJECTED)' },
  notSent: {
    title: 'Not sent',
    text: 'not sent, no payout of this batch (INVALID, NOT_SENT, FAILED_TO_SEND, CONFLICT, ALREADY_PAID, HELD_SCREENING)',
  },
  unknown: { title: 'Outcome unknown', text: 'outcome unknown (UNKNOWN_OUTCOME): run or retry again, same key' },
};

const GROUP_OF = new Map<string | undefined, StatusGroup>([
  ['SUCCESSFUL', 'paid'],
  ['PENDING', 'inProgress'],
  ['PROCESSING', 'inProgress'],
  ['ADDITIONAL_INFO_REQUIRED', 'waiting'],
  ['FAILED', 'failed'],
  ['REJECTED', 'failed'],
  ...Object.values(ENGINE_STATUSES)
    .filter((s) => s !== ENGINE_STATUSES.UNKNOWN_OUTCOME)
    .map((s): [string, StatusGroup] => [s, 'notSent']),
]);

export const statusGroup = (status: string | undefined): StatusGroup => GROUP_OF.get(status) ?? 'unknown';

export const countGroups = (statuses: Iterable<string | undefined>): Record<StatusGroup, number> => {
  const n = Object.fromEntries(STATUS_GROUPS.map((g) => [g, 0])) as Record<StatusGroup, number>;
  for (const s of statuses) n[statusGroup(s)]++;
  return n;
};

/** The rows per group as the summary and `status --json` publish them: notSent and unknown as one count, notCreated. */
export type OutcomeCounts = Record<'paid' | 'inProgress' | 'waiting' | 'failed' | 'notCreated', number>;

export function outcomeCounts(statuses: Iterable<string | undefined>): OutcomeCounts {
  const { notSent, unknown, ...rest } = countGroups(statuses);
  return { ...rest, notCreated: notSent + unknown };
}

/** The `nextStep` cell of a row: what to do about it, or nothing when there is nothing to do. */
export function nextStepOf(status: string | undefined, o: { payoutId?: string; refunded?: string }): string | undefined {
  const group = statusGroup(status);
  if (group === 'waiting') return `answer the information requests: payout-batch attach ${o.payoutId ?? 'PAYOUT_ID'} FILE...`;
  if (group !== 'failed') return undefined;
  return o.refunded !== undefined
    ? 'refunded: payout-batch retry RESULTS --resend-failed pays it again'
    : "refund not in the wallet's transactions yet: run payout-batch status again later";
}

/** The money entries of a row's payouts (the current one and those it replaced). */
function moneyEntriesOf(o: Pick<RowOutcome, 'payout' | 'earlier' | 'status'>): MoneyEntry[] {
  const out = (o.earlier ?? []).map((p) => moneyEntryOfPayout(p));
  if (o.payout && isCreatedStatus(o.status)) out.push(moneyEntryOfPayout(o.payout, o.status));
  return out;
}

/** The object without its undefined fields: a cell with nothing to say is left out. */
export const defined = <T extends object>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

/** f of a value, or undefined when there is none (0 is a value). */
export const ifDefined = <T, R>(v: T | undefined, f: (v: T) => R): R | undefined => (v === undefined ? undefined : f(v));

/** The result columns of one row. Numbers are exact decimal strings. */
export function resultValues(o: RowOutcome): ResultValues {
  const { payout: p, quote: q, error: e } = o;
  // (a fee the service has not told yet stays empty, never a guess)
  const fee = p?.transactionFees;
  return defined({
    status: o.status,
    idempotencyKey: o.key || undefined,
    quotedRate: ifDefined(q?.rate, String),
    payoutId: p?.id,
    payoutRef: p?.payoutRef,
    appliedRate: ifDefined(p?.exchangeRate, String),
    fee: p ? ifDefined(fee, (f) => formatApiAmount(f, p.sourceCurrency)) : ifDefined(q?.fee, String),
    totalDeductible: p ? ifDefined(fee, (f) => formatApiSum(p.sourceAmount, f, p.sourceCurrency)) : ifDefined(q?.totalDeductible, String),
    destinationAmount: p
      ? ifDefined(p.destinationAmount, (d) => formatApiAmount(d, p.destinationCurrency))
      : q && String(q.destinationAmount),
    updatedAt: p?.updatedAt,
    statusDetail: p?.statusDetail || undefined,
    informationRequests: p?.informationRequests || undefined,
    statusReason: p?.reason || undefined,
    refunded: p?.refunded,
    nextStep: p && nextStepOf(p.status, { payoutId: p.id, refunded: p.refunded }),
    requestId: e?.requestId || o.requestId || undefined,
    errorCode: e?.code || undefined,
    errorMessage: e?.message,
    documentUrls: o.documents.length ? o.documents.join('; ') : undefined,
    earlierPayouts: o.earlier?.length ? earlierPayoutsCell(o.earlier) : undefined,
    screeningClearance: o.clearance || undefined,
  });
}

/** Our word for a row or swap sent with no payout or swap; undefined for one not sent, or created. */
function statusOfStep(phase: RowState['phase'] | SwapState['phase']): string | undefined {
  if (phase === 'initiating' || phase === 'unknown') return ENGINE_STATUSES.UNKNOWN_OUTCOME;
  if (phase === 'rejected') return ENGINE_STATUSES.FAILED_TO_SEND;
  if (phase === 'conflict') return ENGINE_STATUSES.CONFLICT;
  return phase === 'stale-rate' ? ENGINE_STATUSES.NOT_SENT : undefined;
}

export function outcomeFromState(s: RowState, fallback: RowOutcome): RowOutcome {
  const { key, quote, documents, earlier } = s;
  if (s.phase !== 'created') {
    const status = statusOfStep(s.phase);
    if (!status) return fallback;
    const unanswered =
      'the answer to initiate was not recorded (interrupted run): it is settled with the same key and body on the next run';
    return { status, key, quote, documents, earlier, error: s.error ?? (s.phase === 'initiating' ? { message: unanswered } : undefined) };
  }
  if (s.payout!.existedBefore) return alreadyPaid(s, documents);
  const [later, id] = ['the next run or retry attaches them', s.payout!.id];
  const unattached = s.patchError?.message ?? (documentsToAttach(s).length ? later : undefined);
  // (how to finish: none for a payout in a final status; past 5, only fewer documents: merged)
  const how =
    !s.patchError || isFinalStatus(s.payout!.status)
      ? ''
      : s.patchError.code === 'MAX_DOCUMENTS_EXCEEDED'
        ? `; merged into one PDF they may fit: payout-batch attach ${id} FILE... --merge`
        : `; ${later} (or payout-batch attach ${id} FILE...)`;
  const message = `the payout exists, extra documents not attached yet: ${unattached}${how}`;
  const error = unattached === undefined ? undefined : { ...s.patchError, code: 'DOCUMENTS_NOT_ATTACHED', message };
  return { earlier, status: s.payout!.status, payout: s.payout, key, requestId: s.requestId, quote, documents, error };
}

/** The batch's swaps as the results show them, in currency order: the swap, else its status as a row's. */
export function swapLinesOf(states: Iterable<SwapState>): SwapLine[] {
  return [...states]
    .sort((a, b) => byText(a.currency, b.currency))
    .map(({ currency, reference, phase, swap }) => {
      if (!swap) return { currency, reference, status: statusOfStep(phase) ?? ENGINE_STATUSES.UNKNOWN_OUTCOME };
      const { payoutRef: _ref, createdAt: _at, ...shown } = swap;
      return { currency, reference, ...shown };
    });
}

/** A created row whose payout existed before this batch sent it: never counted as this batch's. */
function alreadyPaid(s: RowState, documents: string[]): RowOutcome {
  const p = s.payout!;
  const code = ENGINE_STATUSES.ALREADY_PAID;
  const message =
    `already paid at this account: payout ${p.payoutRef ?? p.id} (${p.status}) was created ${p.existedBefore}, before this batch sent the row; ` +
    'not created by this run, never sent again. To pay this person again, give the row a new reference';
  // (the payouts the row replaced, failed and refunded, stay this batch's)
  return { status: code, payout: p, key: s.key, requestId: s.requestId, documents, earlier: s.earlier, error: { code, message } };
}

export interface RunSummary {
  rows: number;
  byStatus: Record<string, number>;
  created: number;
  notCreated: number;
  outcomes: OutcomeCounts;
  /** Per source currency, over every payout of the rows (and those they replaced): debited, refunded, net. */
  money: Record<string, MoneyTotals>;
  swaps?: SwapLine[];
}

export function summarise(outcomes: RowOutcome[]): RunSummary {
  const byStatus: Record<string, number> = {};
  for (const o of outcomes) byStatus[o.status] = (byStatus[o.status] ?? 0) + 1;
  const created = outcomes.filter((o) => o.payout && isCreatedStatus(o.status)).length;
  return {
    rows: outcomes.length,
    byStatus,
    created,
    notCreated: outcomes.length - created,
    outcomes: outcomeCounts(outcomes.map((o) => o.status)),
    money: moneyTotals(outcomes.flatMap(moneyEntriesOf)),
  };
}

/** The log line of a finished row (`run`, `watch`): created at info (warn without a document), any other at warn. */
export function logRowDone(
  logger: Pick<Logger, 'info' | 'warn'> | undefined,
  e: { rowNumber: number; reference: string; outcome: RowOutcome; noDocument?: true },
  context: Record<string, unknown>,
): void {
  const o = e.outcome;
  const fields = {
    ...context,
    row: e.rowNumber,
    reference: e.reference,
    status: o.status,
    requestId: o.requestId ?? o.error?.requestId,
    payoutId: o.payout?.id,
    idempotencyKey: o.key,
    errorCode: o.error?.code,
  };
  if (isCreatedStatus(o.status) && e.noDocument && !o.payout?.existedBefore)
    logger?.warn(
      { ...fields, errorCode: 'NO_DOCUMENT' },
      'row done without a supporting document: the service holds it until one is attached',
    );
  else if (isCreatedStatus(o.status)) logger?.info(fields, 'row done');
  else logger?.warn({ ...fields, message: o.error && maskAccountsIn(o.error.message) }, 'row not created');
}

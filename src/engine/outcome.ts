// What became of each row, in the words of the results file, and the summary of a run.
//
// The `status` column holds the payout's own status (PENDING, PROCESSING, ...) for a row whose
// payout exists, and one of our own words otherwise. Ours never collide with the service's
// statuses (REJECTED is a payout status, so a refusal by the service is FAILED_TO_SEND).
import { ExactSum, formatAmount, formatApiAmount, formatApiSum, type ApiAmount } from '../money.ts';
import { PAYOUT_STATUSES } from '../spec/codes.ts';
import { documentsToAttach, type ErrorSnapshot, type PayoutSnapshot, type RowState } from '../journal/rows.ts';
import type { ResultValues } from '../results/types.ts';
import type { Logger } from 'pino';
import type { EngineEvent } from './execute.ts';

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
  /** Only in a checkpoint written during a run: not processed yet. */
  QUEUED: 'QUEUED',
} as const;
export type EngineStatus = (typeof ENGINE_STATUSES)[keyof typeof ENGINE_STATUSES];

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
  updatedAt?: string;
  /** Earlier payouts of this row that failed after creation, were refunded and were sent again. */
  earlier?: PayoutSnapshot[];
}

// ------------------------------------------------------------------ outcome words

/**
 * What a treasurer does next, per row:
 *   paid        SUCCESSFUL: done.
 *   inProgress  PENDING (also under review), PROCESSING: created and debited; poll `status` again.
 *   waiting     ADDITIONAL_INFO_REQUIRED: the service waits for us: answer with `payout-batch attach`.
 *   failed      FAILED, REJECTED after creation: the service refunds it; `retry --resend-failed` pays again.
 *   notCreated  no payout (INVALID, NOT_SENT, FAILED_TO_SEND, UNKNOWN_OUTCOME, CONFLICT): see errorMessage.
 */
export const OUTCOMES = ['paid', 'inProgress', 'waiting', 'failed', 'notCreated'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const OUTCOME_TEXT: Record<Outcome, string> = {
  paid: 'paid (SUCCESSFUL)',
  inProgress: 'created, in progress (PENDING, PROCESSING)',
  waiting: 'waiting for us (ADDITIONAL_INFO_REQUIRED)',
  failed: 'failed after creation, refunded (FAILED, REJECTED)',
  notCreated: 'no payout created',
};

export function outcomeOf(status: string | undefined): Outcome {
  switch (status) {
    case 'SUCCESSFUL':
      return 'paid';
    case 'PENDING':
    case 'PROCESSING':
      return 'inProgress';
    case 'ADDITIONAL_INFO_REQUIRED':
      return 'waiting';
    case 'FAILED':
    case 'REJECTED':
      return 'failed';
    default:
      return 'notCreated';
  }
}

export const countOutcomes = (statuses: Iterable<string | undefined>): Record<Outcome, number> => {
  const n = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const s of statuses) n[outcomeOf(s)]++;
  return n;
};

/** The `nextStep` cell of a row: what to do about it, or nothing when there is nothing to do. */
export function nextStepOf(status: string | undefined, o: { payoutId?: string; refunded?: string }): string | undefined {
  switch (outcomeOf(status)) {
    case 'waiting':
      return `answer the information requests: payout-batch attach ${o.payoutId ?? 'PAYOUT_ID'} FILE...`;
    case 'failed':
      return o.refunded !== undefined
        ? 'refunded: payout-batch retry RESULTS --resend-failed pays it again'
        : "refund not in the wallet's transactions yet: run payout-batch status again later";
    default:
      return undefined;
  }
}

/** One payout of a row, for the money totals: what was debited (amount + fee) and refunded. */
export interface MoneyEntry {
  status: string;
  currency: string;
  amount: ApiAmount;
  fee?: ApiAmount;
  refunded?: ApiAmount;
}

/** Per source currency, exact decimal strings: what the payouts debited, what came back, and the difference. */
export interface MoneyTotals {
  payouts: number;
  debited: string;
  refunded: string;
  net: string;
  /** Failed payouts whose refund is not in the wallet's transactions yet (not in `refunded`). */
  refundsNotSeen?: number;
  /** Payouts whose fee the service has not told yet (only the amount is in `debited`). */
  feesNotKnown?: number;
}

export function moneyTotals(entries: Iterable<MoneyEntry>): Record<string, MoneyTotals> {
  const sums = new Map<string, { n: number; debited: ExactSum; refunded: ExactSum; notSeen: number; feesNotKnown: number }>();
  for (const e of entries) {
    let s = sums.get(e.currency);
    if (!s) sums.set(e.currency, (s = { n: 0, debited: new ExactSum(), refunded: new ExactSum(), notSeen: 0, feesNotKnown: 0 }));
    s.n++;
    s.debited.addApi(e.amount);
    if (e.fee === undefined) s.feesNotKnown++;
    else s.debited.addApi(e.fee);
    if (e.refunded !== undefined) s.refunded.addApi(e.refunded);
    else if (outcomeOf(e.status) === 'failed') s.notSeen++;
  }
  return Object.fromEntries(
    [...sums]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([c, s]) => {
        const d = s.debited.value();
        const r = s.refunded.value();
        const t: MoneyTotals = {
          payouts: s.n,
          debited: formatAmount(d, c),
          refunded: formatAmount(r, c),
          net: formatAmount(d.minus(r), c),
        };
        if (s.notSeen) t.refundsNotSeen = s.notSeen;
        if (s.feesNotKnown) t.feesNotKnown = s.feesNotKnown;
        return [c, t];
      }),
  );
}

/** The money entries of a row's payouts (the current one and those it replaced). */
export function moneyEntriesOf(o: Pick<RowOutcome, 'payout' | 'earlier' | 'status'>): MoneyEntry[] {
  const out: MoneyEntry[] = [];
  for (const p of o.earlier ?? [])
    out.push({ status: p.status, currency: p.sourceCurrency, amount: p.sourceAmount, fee: p.transactionFees, refunded: p.refunded });
  const p = o.payout;
  if (p && isCreatedStatus(o.status))
    out.push({ status: o.status, currency: p.sourceCurrency, amount: p.sourceAmount, fee: p.transactionFees, refunded: p.refunded });
  return out;
}

/** The `earlierPayouts` cell: compact JSON of the payouts a row replaced, with what each debited and refunded. */
export function earlierPayoutsCell(earlier: PayoutSnapshot[]): string {
  return JSON.stringify(
    earlier.map((p) => ({
      payoutId: p.id,
      payoutRef: p.payoutRef,
      status: p.status,
      currency: p.sourceCurrency,
      amount: formatApiAmount(p.sourceAmount, p.sourceCurrency),
      ...(p.transactionFees !== undefined ? { fee: formatApiAmount(p.transactionFees, p.sourceCurrency) } : {}),
      ...(p.refunded !== undefined ? { refunded: p.refunded } : {}),
    })),
  );
}

/** Reads an `earlierPayouts` cell back into money entries (a cell that is not ours is ignored). */
export function earlierPayoutsFromCell(cell: string | undefined): MoneyEntry[] {
  if (!cell) return [];
  try {
    const v = JSON.parse(cell) as unknown;
    if (!Array.isArray(v)) return [];
    const out: MoneyEntry[] = [];
    for (const x of v as unknown[]) {
      if (!x || typeof x !== 'object') continue;
      const e = x as Record<string, unknown>;
      const str = (k: string) => (typeof e[k] === 'string' ? e[k] : undefined);
      const amount = str('amount');
      const currency = str('currency');
      if (amount === undefined || currency === undefined) continue;
      out.push({ status: str('status') ?? '', currency, amount, fee: str('fee'), refunded: str('refunded') });
    }
    return out;
  } catch {
    return [];
  }
}

/** The result columns of one row. Numbers are exact decimal strings. */
export function resultValues(o: RowOutcome): ResultValues {
  const v: ResultValues = { status: o.status };
  if (o.key) v.idempotencyKey = o.key;
  if (o.quote?.rate !== undefined) v.quotedRate = String(o.quote.rate);
  if (o.payout) {
    const p = o.payout;
    v.payoutId = p.id;
    if (p.payoutRef !== undefined) v.payoutRef = p.payoutRef;
    if (p.exchangeRate !== undefined) v.appliedRate = String(p.exchangeRate);
    // the service's amounts with the currency's minor units, read exactly (money.ts);
    // a fee the service has not told yet stays empty (`status` fills it in), never a guess
    if (p.transactionFees !== undefined) {
      v.fee = formatApiAmount(p.transactionFees, p.sourceCurrency);
      v.totalDeductible = formatApiSum(p.sourceAmount, p.transactionFees, p.sourceCurrency);
    }
    if (p.destinationAmount !== undefined) v.destinationAmount = formatApiAmount(p.destinationAmount, p.destinationCurrency);
    if (p.updatedAt !== undefined) v.updatedAt = p.updatedAt;
    if (p.statusDetail) v.statusDetail = p.statusDetail;
    if (p.informationRequests) v.informationRequests = p.informationRequests;
    if (p.reason) v.statusReason = p.reason;
    if (p.refunded !== undefined) v.refunded = p.refunded;
    const step = nextStepOf(p.status, { payoutId: p.id, refunded: p.refunded });
    if (step) v.nextStep = step;
  } else if (o.quote) {
    if (o.quote.fee !== undefined) v.fee = String(o.quote.fee);
    if (o.quote.totalDeductible !== undefined) v.totalDeductible = String(o.quote.totalDeductible);
    v.destinationAmount = String(o.quote.destinationAmount);
  }
  if (o.requestId) v.requestId = o.requestId;
  if (o.error) {
    if (o.error.code) v.errorCode = o.error.code;
    v.errorMessage = o.error.message;
    if (o.error.requestId) v.requestId = o.error.requestId;
  }
  if (o.documents.length) v.documentUrls = o.documents.join('; ');
  if (o.updatedAt && !v.updatedAt) v.updatedAt = o.updatedAt;
  if (o.earlier?.length) v.earlierPayouts = earlierPayoutsCell(o.earlier);
  return v;
}

/** The outcome a row's journal state shows (for rows this run did not touch, and checkpoints). */
export function outcomeFromState(s: RowState, fallback: RowOutcome): RowOutcome {
  const docs = Object.values(s.docs);
  switch (s.phase) {
    case 'created':
      return {
        earlier: s.earlier,
        status: s.payout!.status,
        payout: s.payout,
        key: s.key,
        requestId: s.requestId,
        quote: s.quote,
        documents: docs,
        error: s.patchError
          ? {
              ...s.patchError,
              code: 'DOCUMENTS_NOT_ATTACHED',
              message: `the payout exists, extra documents not attached yet: ${s.patchError.message}`,
            }
          : documentsToAttach(s).length
            ? {
                // (a run stopped between initiate and PATCH documents)
                code: 'DOCUMENTS_NOT_ATTACHED',
                message: 'the payout exists, extra documents not attached yet: the next run or retry attaches them',
              }
            : undefined,
      };
    case 'initiating':
    case 'unknown':
      return {
        earlier: s.earlier,
        status: ENGINE_STATUSES.UNKNOWN_OUTCOME,
        key: s.key,
        quote: s.quote,
        documents: docs,
        error: s.error ?? {
          message: 'the answer to initiate was not recorded (interrupted run): it is settled with the same key and body on the next run',
        },
      };
    case 'rejected':
      return { status: ENGINE_STATUSES.FAILED_TO_SEND, key: s.key, quote: s.quote, documents: docs, error: s.error, earlier: s.earlier };
    case 'conflict':
      return { status: ENGINE_STATUSES.CONFLICT, key: s.key, quote: s.quote, documents: docs, error: s.error };
    default:
      return fallback;
  }
}

export interface CurrencyTotals {
  rows: number;
  amount: string;
  /** Fees the service reported; rows whose fee it has not told yet are counted in feesNotKnown. */
  fees: string;
  totalDeductible: string;
  feesNotKnown?: number;
}

export interface RunSummary {
  rows: number;
  byStatus: Record<string, number>;
  /** Created rows only, by source currency. */
  createdByCurrency: Record<string, CurrencyTotals>;
  created: number;
  /** Rows that need attention: invalid, not sent, failed, unknown, conflict. */
  notCreated: number;
  /** Rows per outcome word (OUTCOMES): paid, inProgress, waiting, failed, notCreated. */
  outcomes: Record<Outcome, number>;
  /** Per source currency, over every payout of the rows (and those they replaced): debited, refunded, net. */
  money: Record<string, MoneyTotals>;
}

export function summarise(outcomes: RowOutcome[]): RunSummary {
  const byStatus: Record<string, number> = {};
  // exact sums of the journalled numbers (decimal.js)
  const sums = new Map<string, { rows: number; amount: ExactSum; fees: ExactSum; feesNotKnown: number }>();
  let created = 0;
  for (const o of outcomes) {
    byStatus[o.status] = (byStatus[o.status] ?? 0) + 1;
    if (o.payout && isCreatedStatus(o.status)) {
      created++;
      const c = o.payout.sourceCurrency;
      let s = sums.get(c);
      if (!s) sums.set(c, (s = { rows: 0, amount: new ExactSum(), fees: new ExactSum(), feesNotKnown: 0 }));
      s.rows++;
      s.amount.addApi(o.payout.sourceAmount);
      if (o.payout.transactionFees === undefined) s.feesNotKnown++;
      else s.fees.addApi(o.payout.transactionFees);
    }
  }
  const createdByCurrency = Object.fromEntries(
    [...sums]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([c, s]) => {
        const amount = s.amount.value();
        const fees = s.fees.value();
        const t: CurrencyTotals = {
          rows: s.rows,
          amount: formatAmount(amount, c),
          fees: formatAmount(fees, c),
          totalDeductible: formatAmount(amount.plus(fees), c),
        };
        if (s.feesNotKnown) t.feesNotKnown = s.feesNotKnown;
        return [c, t];
      }),
  );
  return {
    rows: outcomes.length,
    byStatus,
    createdByCurrency,
    created,
    notCreated: outcomes.length - created,
    outcomes: countOutcomes(outcomes.map((o) => o.status)),
    money: moneyTotals(outcomes.flatMap(moneyEntriesOf)),
  };
}

/**
 * The log line of a finished row, the same from `run` and from `watch` (context: the batch, the
 * file): a created row at info, any other at warn with the service's message.
 */
export function logRowDone(
  logger: Pick<Logger, 'info' | 'warn'> | undefined,
  e: Extract<EngineEvent, { type: 'row-done' }>,
  context: Record<string, unknown>,
): void {
  const fields = {
    ...context,
    row: e.rowNumber,
    reference: e.reference,
    status: e.status,
    requestId: e.requestId,
    payoutId: e.payoutId,
    idempotencyKey: e.key,
    errorCode: e.errorCode,
  };
  if (isCreatedStatus(e.status)) logger?.info(fields, 'row done');
  else logger?.warn({ ...fields, message: e.message }, 'row not created');
}

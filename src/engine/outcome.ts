// What became of each row, in the words of the results file, and the summary of a run.
//
// The `status` column holds the payout's own status (PENDING, PROCESSING, ...) for a row whose
// payout exists, and one of our own words otherwise. Ours never collide with the service's
// statuses (REJECTED is a payout status, so a refusal by the service is FAILED_TO_SEND).
import { ExactSum, formatAmount, formatApiAmount, formatApiSum } from '../money.ts';
import { PAYOUT_STATUSES } from '../spec/codes.ts';
import { documentsToAttach, type ErrorSnapshot, type PayoutSnapshot, type RowState } from '../journal/rows.ts';
import type { ResultValues } from '../results/types.ts';

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
    // the same text as formatAmount(fromApi(...)), without a Decimal per amount (100,000 rows on a resume);
    // a fee the service has not told yet stays empty (`status` fills it in), never a guess
    if (p.transactionFees !== undefined) {
      v.fee = formatApiAmount(p.transactionFees, p.sourceCurrency);
      v.totalDeductible = formatApiSum(p.sourceAmount, p.transactionFees, p.sourceCurrency);
    }
    if (p.destinationAmount !== undefined) v.destinationAmount = formatApiAmount(p.destinationAmount, p.destinationCurrency);
    if (p.updatedAt !== undefined) v.updatedAt = p.updatedAt;
    if (p.statusDetail) v.statusDetail = p.statusDetail;
    if (p.informationRequests) v.informationRequests = p.informationRequests;
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
  if (o.documents.length) v.documents = o.documents.join('; ');
  if (o.updatedAt && !v.updatedAt) v.updatedAt = o.updatedAt;
  return v;
}

/** The outcome a row's journal state shows (for rows this run did not touch, and checkpoints). */
export function outcomeFromState(s: RowState, fallback: RowOutcome): RowOutcome {
  const docs = Object.values(s.docs);
  switch (s.phase) {
    case 'created':
      return {
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
        status: ENGINE_STATUSES.UNKNOWN_OUTCOME,
        key: s.key,
        quote: s.quote,
        documents: docs,
        error: s.error ?? {
          message: 'the answer to initiate was not recorded (interrupted run): it is settled with the same key and body on the next run',
        },
      };
    case 'rejected':
      return { status: ENGINE_STATUSES.FAILED_TO_SEND, key: s.key, quote: s.quote, documents: docs, error: s.error };
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
}

export function summarise(outcomes: RowOutcome[]): RunSummary {
  const byStatus: Record<string, number> = {};
  // exact sums of the journalled numbers, without a Decimal per row (the same values)
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
  return { rows: outcomes.length, byStatus, createdByCurrency, created, notCreated: outcomes.length - created };
}

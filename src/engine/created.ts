// A created payout as the journal keeps it, from whatever the initiate answer carried.
//
// Spec §4.2 promises only id, status PENDING, payoutRef, sourceAmount, destinationAmount and
// exchangeRate on the initiate answer ("full response field list: not shown"). An answer with an
// id and a status means the payout exists: it is recorded as created, whatever else is missing.
// What the results file needs and the answer lacks (the fee above all: rule 8 says the applied fee
// is in transactionFees) is read once with get-payout; if that read fails, the row is still created
// and the gaps stay empty until `status` reads the payout.
import type { PayoutClient } from '../client/client.ts';
import type { PayoutAnswer } from '../client/answers.ts';
import type { PayoutSnapshot } from '../journal/rows.ts';

/** The request's own values, for what the answer does not repeat. */
export interface SentPayout {
  sourceAmount: number;
  sourceCurrency: string;
  destinationCurrency: string;
}

/** The request as journalled (JSON text), read back for its amount and currencies. */
export function sentPayout(body: string): SentPayout {
  const b = JSON.parse(body) as SentPayout;
  return { sourceAmount: b.sourceAmount, sourceCurrency: b.sourceCurrency, destinationCurrency: b.destinationCurrency };
}

/** Does the answer lack a value the results file shows? */
export const lacksResultValues = (p: PayoutAnswer): boolean =>
  p.payoutRef === undefined ||
  p.transactionFees === undefined ||
  p.destinationAmount === undefined ||
  p.exchangeRate === undefined ||
  p.sourceAmount === undefined;

const defined = <T extends object>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

/**
 * The initiate answer completed by get-payout when it lacks what the results show. Never throws:
 * the payout exists whatever the read answers, and the caller must record it as created.
 */
export async function completeCreated(client: PayoutClient, p: PayoutAnswer): Promise<PayoutAnswer> {
  if (!lacksResultValues(p)) return p;
  try {
    const read = await client.getPayout(p.id);
    return read.id === p.id ? { ...p, ...defined(read) } : p;
  } catch {
    return p;
  }
}

export function snapshotOf(p: PayoutAnswer, sent: SentPayout): PayoutSnapshot {
  const s: PayoutSnapshot = {
    id: p.id,
    status: p.status,
    sourceAmount: p.sourceAmount ?? sent.sourceAmount,
    sourceCurrency: p.sourceCurrency ?? sent.sourceCurrency,
    destinationCurrency: p.destinationCurrency ?? sent.destinationCurrency,
    documents: p.supportingDocuments?.length ?? 0,
  };
  if (p.payoutRef !== undefined) s.payoutRef = p.payoutRef;
  if (p.destinationAmount !== undefined) s.destinationAmount = p.destinationAmount;
  if (p.transactionFees !== undefined) s.transactionFees = p.transactionFees;
  if (p.exchangeRate !== undefined) s.exchangeRate = p.exchangeRate;
  if (p.updatedAt ?? p.createdAt) s.updatedAt = p.updatedAt ?? p.createdAt;
  return s;
}

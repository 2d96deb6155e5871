// The refund of a payout FAILED or REJECTED after creation (spec §4.15). The spec does not say that or
// how one is refunded: a CREDIT referencing the payout (payoutRef, or its id in reference or
// metadata) counts. Only a refund seen here lets `retry --resend-failed` pay the row again.
import type { PayoutClient } from '../client/client.ts';
import type { WalletTransactionAnswer } from '../client/answers.ts';
import type { PayoutSnapshot, RowEvent } from '../journal/lines.ts';
import { formatAmount, fromApi } from '../money.ts';

export type PayoutToRefund = Pick<PayoutSnapshot, 'id' | 'payoutRef'> & { currency: string };

/** The sum of the credits found (exact decimal), as a `refund` line journals it. */
export type Refund = Pick<Extract<RowEvent, { t: 'refund' }>, 'amount' | 'transactionId'>;

export function isRefundOf(t: WalletTransactionAnswer, p: PayoutToRefund): boolean {
  if ((t.type && t.type !== 'CREDIT') || !fromApi(t.amount).greaterThan(0)) return false;
  if (t.currency && t.currency !== p.currency) return false;
  const refs = [t.reference, t.metadata?.payoutId, t.metadata?.payoutRef].filter((x): x is string => typeof x === 'string' && x !== '');
  return refs.some((r) => r === p.id || (p.payoutRef !== undefined && r === p.payoutRef));
}

/** The sum of the credits referencing the payout, or undefined when none shows. */
export function refundIn(transactions: readonly WalletTransactionAnswer[], p: PayoutToRefund): Refund | undefined {
  const credits = transactions.filter((t) => isRefundOf(t, p));
  if (!credits.length) return undefined;
  const total = credits.reduce((a, t) => a.plus(fromApi(t.amount)), fromApi(0));
  return { amount: formatAmount(total, p.currency), ...(credits[0]!.id ? { transactionId: String(credits[0]!.id) } : {}) };
}

/** One request: the transactions filtered by its payoutRef. */
export async function findRefund(client: PayoutClient, p: PayoutToRefund): Promise<Refund | undefined> {
  return refundIn((await client.listTransactions(p.payoutRef ? { payoutRef: p.payoutRef } : {})).data, p);
}

// The refund of a payout that FAILED or was REJECTED after creation, as the wallet's transactions
// show it (spec §4.15: GET {base_url}/api/public/transactions?filter[payoutRef]=…; items carry a
// type DEBIT or CREDIT, a signed amount and a reference linking them to payouts). The spec does not
// say that a failed payout is refunded, nor how: a CREDIT referencing the payout (by its payoutRef,
// or its id in the reference or metadata) is what counts. Only a refund seen here lets
// `retry --resend-failed` pay the row again.
import type { PayoutClient } from '../client/client.ts';
import type { WalletTransactionAnswer } from '../client/answers.ts';
import { formatAmount, fromApi } from '../money.ts';

export interface PayoutToRefund {
  id: string;
  payoutRef?: string;
  currency: string;
}

export interface Refund {
  /** Exact decimal string in the payout's source currency (the sum of the credits found). */
  amount: string;
  transactionId?: string;
}

/** Whether a transaction is a credit referencing the payout. */
export function isRefundOf(t: WalletTransactionAnswer, p: PayoutToRefund): boolean {
  const credit = t.type ? t.type === 'CREDIT' : fromApi(t.amount).greaterThan(0);
  if (!credit || fromApi(t.amount).lessThanOrEqualTo(0)) return false;
  if (t.currency && t.currency !== p.currency) return false;
  const refs = [t.reference, t.metadata?.payoutId, t.metadata?.payoutRef].filter((x): x is string => typeof x === 'string' && x !== '');
  return refs.some((r) => r === p.id || (p.payoutRef !== undefined && r === p.payoutRef));
}

/** The payout's refund among these transactions (the sum of the credits referencing it), or undefined when none shows. */
export function refundIn(transactions: readonly WalletTransactionAnswer[], p: PayoutToRefund): Refund | undefined {
  const credits = transactions.filter((t) => isRefundOf(t, p));
  if (!credits.length) return undefined;
  const total = credits.reduce((a, t) => a.plus(fromApi(t.amount)), fromApi(0));
  return { amount: formatAmount(total, p.currency), ...(credits[0]!.id ? { transactionId: String(credits[0]!.id) } : {}) };
}

/** The payout's refund in the wallet's transactions filtered by its payoutRef (one request), or undefined when none shows yet. */
export async function findRefund(client: PayoutClient, p: PayoutToRefund): Promise<Refund | undefined> {
  return refundIn((await client.listTransactions(p.payoutRef ? { payoutRef: p.payoutRef } : {})).data, p);
}

// Spec §4.12 wallets and §4.15 wallet transactions.
import type { Handler } from '../context.ts';
import { ok } from '../errors.ts';
import { newestFirst, paginate, transactionView, walletView } from '../views.ts';

/** Spec §4.12: {data: [wallet]}; reading: each wallet also carries its balance. */
export const wallets: Handler = (sb, req) => ok({ data: sb.store.walletsOf(req.business.id).map(walletView) });

/**
 * Spec §4.15: {statusCode, message, data, meta}. Readings: page and limit as for the payout list
 * (default 20, maximum 100), newest first; filter[payoutRef] keeps the movements whose reference
 * is that payoutRef (a payout's debit and any refund; a swap's two legs).
 */
export const transactions: Handler = (sb, req) => {
  const ref = req.query.get('filter[payoutRef]');
  const mine = newestFirst(sb.store.transactions.filter((t) => t.businessId === req.business.id && (ref === null || t.reference === ref)));
  return ok({ statusCode: 200, message: 'Transactions retrieved successfully', ...paginate(mine, req.query, transactionView) });
};

// The read-only lists beside payouts: spec §4.12 wallets, §4.14 countries (reference data) and
// §4.15 wallet transactions.
import { z } from 'zod';
import { COUNTRIES_DEFAULT_LIMIT } from '../../spec/codes.ts';
import type { Handler } from '../context.ts';
import { ok, parseWith } from '../error-answers.ts';
import { newestFirst, paginate, transactionView, walletView } from '../views.ts';

/** Spec §4.12: {data: [wallet]}; reading: each wallet also carries its balance. */
export const wallets: Handler = (sb, req) => ok({ data: sb.store.walletsOf(req.business.id).map(walletView) });

const CurrencyFilter = z
  .string()
  .regex(/^[A-Za-z]{3}$/, 'a 3-letter currency code')
  .optional();

/**
 * Spec §4.14. Readings: the route needs x-api-key like every route (spec §4, despite "public" in
 * its path); limit defaults to 50 with a maximum of 250 (not shown); page works as for lists;
 * filter[currencyCode] keeps countries whose currencyCode or one of whose payoutCurrencies is that code.
 */
export const countries: Handler = (sb, req) => {
  const code = parseWith(CurrencyFilter, req.query.get('filter[currencyCode]') ?? undefined, 'filter[currencyCode]')?.toUpperCase();
  const listed = sb.store.countries.filter((c) => !code || c.currencyCode === code || c.payoutCurrencies.some((p) => p.code === code));
  const page = paginate(listed, req.query, (c) => c, { limit: COUNTRIES_DEFAULT_LIMIT, max: 250 });
  return ok({ statusCode: 200, message: 'Countries retrieved successfully', ...page });
};

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

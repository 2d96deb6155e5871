// Spec §4.12 wallets, §4.14 countries and §4.15 wallet transactions.
import * as z from 'zod';
import { COUNTRIES_DEFAULT_LIMIT } from '../../spec/codes.ts';
import { COUNTRIES_PATH, PAYOUTS_PREFIX as P, TRANSACTIONS_PATH } from '../../spec/endpoints.ts';
import { route } from '../context.ts';
import { ok, parseWith } from '../http.ts';
import { ownedBy } from '../store.ts';
import { pageOf, paginate, transactionView, walletView } from '../views.ts';

const CurrencyFilter = z
  .string()
  .regex(/^[A-Za-z]{3}$/, 'a 3-letter currency code')
  .optional();

export const LIST_ROUTES = [
  /** Spec §4.12; reading: each wallet carries its balance. */
  route('wallets', 'GET', `${P}/wallets`, null, (sb, req) =>
    ok({ data: ownedBy(sb.store.wallets.values(), req.business.id).map(walletView) }),
  ),

  /** Spec §4.14. Readings: x-api-key required (spec §4); limit 50, max 250; filter[currencyCode] also matches payoutCurrencies. */
  route('countries', 'GET', COUNTRIES_PATH, null, (sb, req) => {
    const code = parseWith(CurrencyFilter, req.query.get('filter[currencyCode]') ?? undefined, 'filter[currencyCode]')?.toUpperCase();
    const listed = sb.store.countries.filter((c) => !code || c.currencyCode === code || c.payoutCurrencies.some((p) => p.code === code));
    const page = paginate(listed, req.query, (c) => c, { limit: COUNTRIES_DEFAULT_LIMIT, max: 250 });
    return ok({ statusCode: 200, message: 'Countries retrieved successfully', ...page });
  }),

  /** Spec §4.15. Readings: paged as payouts, newest first; filter[payoutRef] keeps that reference's movements. */
  route('transactions', 'GET', TRANSACTIONS_PATH, null, (sb, req) => {
    const ref = req.query.get('filter[payoutRef]');
    const kept = sb.store.transactions.filter((t) => ref === null || t.reference === ref);
    return ok({ statusCode: 200, message: 'Transactions retrieved successfully', ...pageOf(kept, req, transactionView) });
  }),
];

// Spec §4.14: the countries reference data.
import { z } from 'zod';
import { COUNTRIES_DEFAULT_LIMIT } from '../../interface/codes.ts';
import type { Handler } from '../context.ts';
import { ok, parseWith } from '../errors.ts';
import { paginate } from '../views.ts';

const CurrencyFilter = z
  .string()
  .regex(/^[A-Za-z]{3}$/, 'a 3-letter currency code')
  .optional();

/**
 * Readings: the route needs x-api-key like every route (spec §4, despite "public" in its path);
 * limit defaults to 50 with a maximum of 250 (not shown); page works as for lists; filter[currencyCode]
 * keeps countries whose currencyCode or one of whose payoutCurrencies is that code.
 */
export const countries: Handler = (sb, req) => {
  const code = parseWith(CurrencyFilter, req.query.get('filter[currencyCode]') ?? undefined, 'filter[currencyCode]')?.toUpperCase();
  const listed = sb.store.countries.filter((c) => !code || c.currencyCode === code || c.payoutCurrencies.some((p) => p.code === code));
  const page = paginate(listed, req.query, (c) => c, { limit: COUNTRIES_DEFAULT_LIMIT, max: 250 });
  return ok({ statusCode: 200, message: 'Countries retrieved successfully', ...page });
};

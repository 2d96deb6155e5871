// Spec §4.9-4.11: currency pairs, the toggle, and payment methods per corridor.
import { MethodsQuery, ToggleRequest } from '../../interface/schemas.ts';
import { toApi } from '../../money.ts';
import { methodView, refuseProhibited, reportedRate, usableCorridor } from '../corridors.ts';
import type { Handler } from '../context.ts';
import { apiError, notFound, ok, parseWith } from '../errors.ts';
import { corridorMethods, publishedRow } from '../rules.ts';
import { pairView } from '../views.ts';

/**
 * Spec §4.9. Readings: the envelope is {data: [pair]}; each pair carries currencyPairId,
 * baseCurrency, quoteCurrency, rate and enabled. By default only enabled pairs are listed and
 * none enabled is 400 NO_ENABLED_PAIRS; `?status=all` lists disabled pairs too (so a tool can
 * find the currencyPairId to toggle) and never fails for want of enabled ones.
 * The variant reading (shapes.ts) has no `?status=`: the spec's route "returns the currency pairs
 * enabled for the business", so the query is ignored there.
 */
export const pairs: Handler = (sb, req) => {
  const status = sb.shapes === 'variant' ? null : req.query.get('status');
  if (status !== null && status !== 'all' && status !== 'enabled') {
    return apiError(400, 'VALIDATION_ERROR', 'status is "enabled" (the default) or "all"', [
      { field: 'status', message: 'one of enabled, all' },
    ]);
  }
  const all = sb.store.pairsOf(req.business.id);
  const listed = status === 'all' ? all : all.filter((p) => p.enabled);
  if (!listed.length && status !== 'all') return apiError(400, 'NO_ENABLED_PAIRS', 'No currency pair is enabled for this business');
  return ok({ data: listed.map(pairView) });
};

/**
 * Spec §4.10, body and response "not shown". Readings: body {enabled?: boolean}; `enabled` sets
 * the state, an empty or absent body flips it; the answer is 200 with the pair; an unknown id or
 * another business's pair is 404 CURRENCY_PAIR_NOT_FOUND.
 */
export const togglePair: Handler = (sb, req) => {
  const body = parseWith(ToggleRequest, req.body ?? {});
  const pair = sb.store.pairs.get(req.params.currencyPairId ?? '');
  if (!pair || pair.businessId !== req.business.id) return notFound('CURRENCY_PAIR_NOT_FOUND', 'Currency pair');
  pair.enabled = body.enabled ?? !pair.enabled;
  return ok(pairView(pair));
};

/**
 * Spec §4.11: {corridor, rate: {rate}, methods}. Readings: a prohibited destination is 400
 * PROHIBITED_DESTINATION; an enabled corridor that no method serves answers 200 with methods [].
 */
export const methods: Handler = (sb, req) => {
  const q = parseWith(MethodsQuery, Object.fromEntries(req.query));
  refuseProhibited(sb.store, q.destinationCountryCode);
  const corridor = usableCorridor(sb.store, req.business.id, q.sourceCurrency, q.destinationCurrency);
  return ok({
    corridor: q,
    rate: { rate: toApi(reportedRate(corridor)) },
    methods: corridorMethods(q.sourceCurrency, q.destinationCurrency, q.destinationCountryCode).map((m) =>
      methodView(m, publishedRow(m, q.destinationCurrency, q.destinationCountryCode)!, corridor, q.sourceCurrency, q.destinationCurrency),
    ),
  });
};

// Spec §4.9-4.11: the pairs, their toggle, and the methods of a corridor.
import { PAYOUTS_PREFIX as P } from '../../spec/endpoints.ts';
import { MethodsQuery, ToggleRequest } from '../../spec/schemas.ts';
import { toApi } from '../../money.ts';
import { route } from '../context.ts';
import { methodView, refuseProhibited, reportedRate, usableCorridor } from '../corridors.ts';
import { apiError, fieldError, found, ok, parseWith } from '../http.ts';
import { corridorMethods } from '../rules.ts';
import { ownedBy } from '../store.ts';
import { pairView } from '../views.ts';

export const PAIR_ROUTES = [
  /** Spec §4.9: enabled pairs, none is 400 NO_ENABLED_PAIRS; `?status=all` also lists disabled ones (strict reading only). */
  route('pairs', 'GET', `${P}/pairs`, null, (sb, req) => {
    const status = sb.shapes === 'variant' ? null : req.query.get('status');
    if (status !== null && status !== 'all' && status !== 'enabled') return fieldError('status', 'enabled (the default) or all');
    const all = ownedBy(sb.store.pairs.values(), req.business.id);
    const listed = status === 'all' ? all : all.filter((p) => p.enabled);
    if (!listed.length && status !== 'all') return apiError(400, 'NO_ENABLED_PAIRS', 'No currency pair is enabled for this business');
    return ok({ data: listed.map(pairView) });
  }),

  /** Spec §4.10 ("not shown"): {enabled?} sets the state, an empty body flips it; 200 with the pair; 404 CURRENCY_PAIR_NOT_FOUND. */
  route('togglePair', 'PATCH', `${P}/currency-pairs/:currencyPairId/toggle`, ToggleRequest.default({}), (sb, req, body) => {
    const pair = found(sb.store.pairs, req.params.currencyPairId, 'CURRENCY_PAIR_NOT_FOUND', 'Currency pair', req.business.id);
    pair.enabled = body.enabled ?? !pair.enabled;
    return ok(pairView(pair));
  }),

  /** Spec §4.11: {corridor, rate: {rate}, methods}; a prohibited destination is 400, an unserved corridor methods []. */
  route('methods', 'GET', `${P}/methods`, null, (sb, req) => {
    const q = parseWith(MethodsQuery, Object.fromEntries(req.query));
    refuseProhibited(sb.store, q.destinationCountryCode);
    const corridor = usableCorridor(sb.store, req.business.id, q.sourceCurrency, q.destinationCurrency);
    return ok({
      corridor: q,
      rate: { rate: toApi(reportedRate(corridor)) },
      methods: corridorMethods(q.sourceCurrency, q.destinationCurrency, q.destinationCountryCode).map((m) => methodView(m, q, corridor)),
    });
  }),
];

// The route table: the spec's routes (§4), object storage, control; named in contract.ts ROUTE_NAMES.
import { CONTROL_ROUTES } from './control.ts';
import { LIST_ROUTES } from './lists.ts';
import { PAIR_ROUTES } from './pairs.ts';
import { PAYOUT_ROUTES } from './payouts.ts';
import { SUBSCRIPTION_ROUTES } from './subscriptions.ts';
import { SWAP_ROUTES } from './swaps.ts';

const ROUTES = [...PAYOUT_ROUTES, ...SWAP_ROUTES, ...PAIR_ROUTES, ...LIST_ROUTES, ...SUBSCRIPTION_ROUTES, ...CONTROL_ROUTES];

const split = (p: string): string[] => p.split('/').filter(Boolean);
const isParam = (segment: string): boolean => segment.startsWith(':');

/** Static paths before parameterised ones (a stable sort): GET {payouts}/swaps is never GET {payouts}/{id}. */
const BY_PARAMS = [...ROUTES]
  .sort((a, b) => a.pattern.split(':').length - b.pattern.split(':').length)
  .map((route) => ({ route, pattern: split(route.pattern) }));

export function matchRoute(method: string, path: string) {
  const segments = split(path);
  for (const { route, pattern } of BY_PARAMS) {
    if (route.method !== method || pattern.length !== segments.length) continue;
    if (!pattern.every((p, i) => isParam(p) || p === segments[i])) continue;
    try {
      const params = pattern.flatMap((p, i) => (isParam(p) ? [[p.slice(1), decodeURIComponent(segments[i]!)]] : []));
      return { route, params: Object.fromEntries(params) as Record<string, string> };
    } catch {
      // a malformed %-escape in a parameter: this route does not match
    }
  }
  return undefined;
}

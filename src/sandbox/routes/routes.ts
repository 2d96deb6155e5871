// The route table: the spec's routes (§4), object storage, control; named in contract.ts ROUTE_NAMES.
import { CONTROL_ROUTES } from './control.ts';
import { LIST_ROUTES } from './lists.ts';
import { PAIR_ROUTES } from './pairs.ts';
import { PAYOUT_ROUTES } from './payouts.ts';
import { SUBSCRIPTION_ROUTES } from './subscriptions.ts';
import { SWAP_ROUTES } from './swaps.ts';
import { UPLOAD_ROUTES } from './uploads.ts';

const ROUTES = [
  ...PAYOUT_ROUTES,
  ...UPLOAD_ROUTES,
  ...SWAP_ROUTES,
  ...PAIR_ROUTES,
  ...LIST_ROUTES,
  ...SUBSCRIPTION_ROUTES,
  ...CONTROL_ROUTES,
];

/** Static paths before parameterised ones (a stable sort): GET {payouts}/swaps is never GET {payouts}/{id}. */
const BY_PARAMS = [...ROUTES].sort((a, b) => a.pattern.split(':').length - b.pattern.split(':').length);

const split = (p: string): string[] => p.split('/').filter(Boolean);

export function matchRoute(method: string, path: string) {
  const segments = split(path);
  for (const route of BY_PARAMS) {
    if (route.method !== method) continue;
    const params = matchPattern(split(route.pattern), segments);
    if (params) return { route, params };
  }
  return undefined;
}

function matchPattern(pattern: string[], segments: string[]): Record<string, string> | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const s = segments[i]!;
    if (p.startsWith(':')) {
      try {
        params[p.slice(1)] = decodeURIComponent(s);
      } catch {
        return undefined;
      }
    } else if (p !== s) return undefined;
  }
  return params;
}

// The route table: the spec's routes (§4) in its order, object storage, control; named in contract.ts ROUTE_NAMES.
import { COUNTRIES_PATH, PAYOUTS_PREFIX as P, TRANSACTIONS_PATH, WEBHOOKS_PREFIX as W } from '../../spec/endpoints.ts';
import type { RouteName } from '../contract.ts';
import type { Route } from '../context.ts';
import { methods, pairs, togglePair } from '../corridors.ts';
import * as control from './control.ts';
import { DOCUMENT_PATH, UPLOAD_PATH } from '../storage.ts';
import { storageGet, storagePut, uploadUrl } from './uploads.ts';
import { countries, transactions, wallets } from './lists.ts';
import { getPayout, initiate, listPayouts, patchDocuments, quote } from './payouts.ts';
import { getSwap, listSwaps, swap } from './swaps.ts';
import { deleteWebhook, getWebhook, listWebhooks, registerWebhook, updateWebhook } from './subscriptions.ts';

const ROUTES = [
  { name: 'quote', kind: 'spec', method: 'POST', pattern: `${P}/quote`, handler: quote },
  { name: 'initiate', kind: 'spec', method: 'POST', pattern: `${P}/initiate`, handler: initiate },
  { name: 'getPayout', kind: 'spec', method: 'GET', pattern: `${P}/:id`, handler: getPayout },
  { name: 'listPayouts', kind: 'spec', method: 'GET', pattern: P, handler: listPayouts },
  { name: 'patchDocuments', kind: 'spec', method: 'PATCH', pattern: `${P}/:id/documents`, handler: patchDocuments },
  { name: 'uploadUrl', kind: 'spec', method: 'POST', pattern: `${P}/documents/upload-url`, handler: uploadUrl },
  { name: 'swap', kind: 'spec', method: 'POST', pattern: `${P}/swap`, handler: swap },
  { name: 'listSwaps', kind: 'spec', method: 'GET', pattern: `${P}/swaps`, handler: listSwaps },
  { name: 'getSwap', kind: 'spec', method: 'GET', pattern: `${P}/swaps/:id`, handler: getSwap },
  { name: 'pairs', kind: 'spec', method: 'GET', pattern: `${P}/pairs`, handler: pairs },
  { name: 'togglePair', kind: 'spec', method: 'PATCH', pattern: `${P}/currency-pairs/:currencyPairId/toggle`, handler: togglePair },
  { name: 'methods', kind: 'spec', method: 'GET', pattern: `${P}/methods`, handler: methods },
  { name: 'wallets', kind: 'spec', method: 'GET', pattern: `${P}/wallets`, handler: wallets },
  { name: 'registerWebhook', kind: 'spec', method: 'POST', pattern: W, handler: registerWebhook },
  { name: 'listWebhooks', kind: 'spec', method: 'GET', pattern: W, handler: listWebhooks },
  { name: 'getWebhook', kind: 'spec', method: 'GET', pattern: `${W}/:id`, handler: getWebhook },
  { name: 'updateWebhook', kind: 'spec', method: 'PATCH', pattern: `${W}/:id`, handler: updateWebhook },
  { name: 'deleteWebhook', kind: 'spec', method: 'DELETE', pattern: `${W}/:id`, handler: deleteWebhook },
  { name: 'countries', kind: 'spec', method: 'GET', pattern: COUNTRIES_PATH, handler: countries },
  { name: 'transactions', kind: 'spec', method: 'GET', pattern: TRANSACTIONS_PATH, handler: transactions },

  { name: 'storagePut', kind: 'storage', method: 'PUT', pattern: `${UPLOAD_PATH}:token`, handler: storagePut },
  { name: 'storageGet', kind: 'storage', method: 'GET', pattern: `${DOCUMENT_PATH}:token/:filename`, handler: storageGet },

  { name: 'control', kind: 'control', method: 'POST', pattern: '/_sandbox/payouts/:id/status', handler: control.setPayoutStatus },
  { name: 'control', kind: 'control', method: 'POST', pattern: '/_sandbox/swaps/:id/status', handler: control.setSwapStatus },
  { name: 'control', kind: 'control', method: 'POST', pattern: '/_sandbox/wallets/:walletId/credit', handler: control.creditWallet },
  { name: 'control', kind: 'control', method: 'PUT', pattern: '/_sandbox/pairs/:currencyPairId/rate', handler: control.setRate },
  { name: 'control', kind: 'control', method: 'GET', pattern: '/_sandbox/faults', handler: control.getFaults },
  { name: 'control', kind: 'control', method: 'PUT', pattern: '/_sandbox/faults', handler: control.putFaults },
  { name: 'control', kind: 'control', method: 'GET', pattern: '/_sandbox/requests', handler: control.getRequests },
  { name: 'control', kind: 'control', method: 'GET', pattern: '/_sandbox/deliveries', handler: control.getDeliveries },
  { name: 'control', kind: 'control', method: 'POST', pattern: '/_sandbox/clock/advance', handler: control.advanceClock },
] as const satisfies readonly (Route & { name: RouteName })[];

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

// Records as the spec's response shapes (§2, §4), in the strict reading (shapes.ts rewrites them).
// Amounts leave as JSON numbers via toApi, which refuses any value a double could not carry exactly.
import { toApi } from '../money.ts';
import * as z from 'zod';
import { parseWith, type Request } from './http.ts';
import { ownedBy, type PairRec, type PayoutRec, type SwapRec, type TransactionRec, type WalletRec } from './store.ts';

/** Spec §2 Payout. Reading: initiate answers with this same full shape. */
export function payoutView(p: PayoutRec) {
  return {
    id: p.id,
    payoutRef: p.payoutRef,
    sourceAmount: toApi(p.sourceAmount),
    sourceCurrency: p.sourceCurrency,
    destinationAmount: toApi(p.destinationAmount),
    destinationCurrency: p.destinationCurrency,
    status: p.status,
    ...(p.statusDetail ? { statusDetail: p.statusDetail } : {}),
    ...(p.informationRequests ? { informationRequests: p.informationRequests } : {}),
    ...(p.failureReason ? { failureReason: p.failureReason } : {}),
    method: p.method,
    transactionFees: toApi(p.fee),
    exchangeRate: toApi(p.exchangeRate),
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
    supportingDocuments: p.documents.map((d) => ({ ...d })),
  };
}

export type Payout = ReturnType<typeof payoutView>;

/** Spec §2 list items, payouts and swaps alike: no statusDetail, informationRequests, updatedAt or documents. */
type ListItemField = Exclude<keyof Payout, 'statusDetail' | 'informationRequests' | 'failureReason' | 'updatedAt' | 'supportingDocuments'>;
const LIST_ITEM_FIELDS =
  'id payoutRef status method sourceAmount sourceCurrency destinationAmount destinationCurrency exchangeRate transactionFees createdAt'.split(
    ' ',
  ) as ListItemField[];
const listItem = <T extends Record<ListItemField, unknown>>(full: T): Pick<T, ListItemField> =>
  Object.fromEntries(LIST_ITEM_FIELDS.map((k) => [k, full[k]])) as Pick<T, ListItemField>;

export const payoutListItem = (p: PayoutRec) => listItem(payoutView(p));
export const swapListItem = (s: SwapRec) => listItem(swapCreatedView(s));

export function swapCreatedView(s: SwapRec) {
  return {
    id: s.id,
    payoutRef: s.payoutRef,
    businessId: s.businessId,
    sourceWalletId: s.sourceWalletId,
    destinationWalletId: s.destinationWalletId,
    sourceAmount: toApi(s.sourceAmount),
    sourceCurrency: s.sourceCurrency,
    destinationAmount: toApi(s.destinationAmount),
    destinationCurrency: s.destinationCurrency,
    exchangeRate: toApi(s.exchangeRate),
    transactionFees: 0,
    status: s.status,
    method: 'SWAP' as const,
    createdAt: s.createdAt,
  };
}

export function swapView(s: SwapRec) {
  return { ...swapListItem(s), updatedAt: s.updatedAt, supportingDocuments: [] };
}

export function pairView(p: PairRec) {
  return {
    currencyPairId: p.currencyPairId,
    baseCurrency: p.baseCurrency,
    quoteCurrency: p.quoteCurrency,
    rate: toApi(p.rate),
    enabled: p.enabled,
  };
}

export function walletView(w: WalletRec) {
  return { walletId: w.walletId, currency: w.currency, balance: toApi(w.balance) };
}

/** Spec §2 Wallet transaction; fields beyond those named are a reading. */
export function transactionView(t: TransactionRec) {
  return {
    id: t.id,
    type: t.type,
    amount: toApi(t.amount),
    currency: t.currency,
    wallet: { walletId: t.walletId, currency: t.currency },
    balanceBefore: toApi(t.balanceBefore),
    balanceAfter: toApi(t.balanceAfter),
    reference: t.reference,
    metadata: { narration: t.narration, ...t.metadata },
    createdAt: t.createdAt,
  };
}

/** Spec §4.4: page from 1, limit default 20, max 100, meta.size the items on this page; readings: out of range is 400, not clamped. */
export function paginate<T, V>(
  items: T[],
  query: URLSearchParams,
  view: (t: T) => V,
  defaults: { limit: number; max: number } = { limit: 20, max: 100 },
) {
  const schema = z.object({
    page: z.coerce.number().int().min(1).default(1),
    limit: z.coerce.number().int().min(1).max(defaults.max).default(defaults.limit),
  });
  const q = parseWith(schema, { page: query.get('page') ?? undefined, limit: query.get('limit') ?? undefined });
  const start = (q.page - 1) * q.limit;
  const data = items.slice(start, start + q.limit).map(view);
  return { data, meta: { total: items.length, page: q.page, limit: q.limit, size: data.length } };
}

/** The business's records, newest first (they are kept in creation order), paged. */
export function pageOf<T extends { businessId: string }, V>(records: Iterable<T>, req: Request, view: (t: T) => V) {
  return paginate(ownedBy(records, req.business.id).reverse(), req.query, view);
}

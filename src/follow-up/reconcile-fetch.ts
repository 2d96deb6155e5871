// The requests of `reconcile` (and `status`'s payout reads): the payout list (spec §4.4) and the
// wallet transactions (§4.15), 100 a page; a get (§4.3) only for an item the pages did not show.
// A reconcile costs pages, not rows.
import type { Logger } from 'pino';
import pLimit from 'p-limit';
import type { PayoutClient } from '../client/client.ts';
import type { PayoutAnswer, WalletTransactionAnswer } from '../client/answers.ts';
import { PayoutApiError } from '../client/errors.ts';
import { readPages, type ListedPage, type ListingEnd } from '../client/pages.ts';
import { fromApi } from '../money.ts';
import { LIST_MAX_LIMIT } from '../spec/codes.ts';
import type { PayoutState, ReconTx } from './tie-out.ts';

/** The service could not be used: what was read is not a reconciliation. */
export class Halted extends Error {}

export interface FetchOptions {
  client: PayoutClient;
  logger?: Logger;
  stop?: AbortSignal;
}

export interface RequestCounts {
  payoutPages: number;
  getPayout: number;
  transactionPages: number;
  /** Only when the batch has a swap to ask about. */
  swapPages?: number;
  getSwap?: number;
  total: number;
}

export const requestsTotal = (r: RequestCounts): number =>
  r.payoutPages + r.getPayout + r.transactionPages + (r.swapPages ?? 0) + (r.getSwap ?? 0);

/** `request`, each call counted in `requests[what]`. */
export const counted =
  <A, R>(requests: RequestCounts, what: Exclude<keyof RequestCounts, 'total'>, request: (a: A) => Promise<R>) =>
  (a: A): Promise<R> => {
    requests[what] = (requests[what] ?? 0) + 1;
    return request(a);
  };

export interface Listing {
  pages: number;
  transactions: number;
  ended: ListingEnd;
}

/** The sign from `type` when given (debits negative, spec §2). */
export function normaliseTransaction(t: WalletTransactionAnswer): ReconTx {
  const raw = fromApi(t.amount);
  const amount = t.type === 'DEBIT' ? raw.abs().negated() : t.type === 'CREDIT' ? raw.abs() : raw;
  const meta = t.metadata ?? {};
  const [payoutId, payoutRef] = [meta.payoutId, meta.payoutRef].map((v) => (typeof v === 'string' ? v : undefined));
  const wallet = t.wallet as { walletId?: string; currency?: string } | undefined;
  const topWalletId = (t as Record<string, unknown>).walletId;
  return {
    id: t.id,
    amount,
    currency: t.currency ?? wallet?.currency,
    walletId: wallet?.walletId ?? (typeof topWalletId === 'string' ? topWalletId : undefined),
    reference: t.reference,
    payoutId,
    payoutRef,
    createdAt: t.createdAt,
    ...(t.balanceAfter !== undefined ? { balanceAfter: fromApi(t.balanceAfter) } : {}),
  };
}

/** A list the service refuses (a 4xx) shows none: each item is asked for. */
export async function readItems<T extends { id: string; createdAt?: string }>(
  ids: Iterable<string>,
  o: FetchOptions & {
    what: 'payouts' | 'swaps';
    list: (page: number) => Promise<ListedPage<T>>;
    get: (id: string) => Promise<T>;
    ask?: (listed: T) => boolean;
  },
) {
  const out = {
    /** A list item carries the fields of a get but the details (spec §2). */
    listed: new Map<string, T>(),
    /** For an item no page showed, or one `ask` sends for. */
    got: new Map<string, T>(),
    errors: new Map<string, PayoutApiError>(),
    /** Service trouble: the items not read by then were not asked. */
    halted: undefined as PayoutApiError | undefined,
  };
  const all = [...new Set(ids)];
  const missing = new Set(all);
  try {
    const { items } = await readPages({ fetch: o.list, wanted: missing, what: o.what, logger: o.logger, stop: o.stop });
    for (const p of items) out.listed.set(p.id, p);
  } catch (e) {
    if (!(e instanceof PayoutApiError)) throw e;
    if (e.serviceTrouble) return { ...out, halted: e };
    o.logger?.warn({ requestId: e.requestId, errorCode: e.code }, `the ${o.what} list could not be read: each one is asked for`);
    for (const id of all) missing.add(id);
  }
  const toGet = all.filter((id) => missing.has(id) || o.ask?.(out.listed.get(id)!));
  // 8 gets at a time (the client's default in flight), so that a halt stops those not yet started
  const get = async (id: string) => {
    if (out.halted || o.stop?.aborted) return;
    try {
      out.got.set(id, await o.get(id));
    } catch (e) {
      if (!(e instanceof PayoutApiError)) throw e;
      if (e.serviceTrouble) out.halted ??= e;
      else out.errors.set(id, e);
      const one = o.what.slice(0, -1); // "payout", "swap"
      o.logger?.warn({ [`${one}Id`]: id, requestId: e.requestId, errorCode: e.code }, `${one} could not be read`);
    }
  };
  const limit = pLimit(8);
  await Promise.all(toGet.map((id) => limit(() => get(id))));
  return out;
}

export const failureOf = (e: PayoutApiError) => ({ code: e.code ?? `HTTP_${e.status ?? 0}`, message: e.message, requestId: e.requestId });

export const readPayouts = (ids: Iterable<string>, o: FetchOptions, requests: RequestCounts, ask?: (listed: PayoutAnswer) => boolean) =>
  readItems(ids, {
    ...o,
    what: 'payouts',
    ask,
    list: counted(requests, 'payoutPages', (page: number) => o.client.listPayouts({ page, limit: LIST_MAX_LIMIT }, { signal: o.stop })),
    get: counted(requests, 'getPayout', (id: string) => o.client.getPayout(id, { signal: o.stop })),
  });

export async function fetchPayoutStates(ids: readonly string[], o: FetchOptions, requests: RequestCounts) {
  const read = await readPayouts(ids, o, requests);
  if (read.halted) throw new Halted(read.halted.message);
  if (o.stop?.aborted) throw new Halted('stopped');
  const payouts = new Map<string, PayoutState>();
  for (const id of ids) {
    const p = read.listed.get(id) ?? read.got.get(id);
    const e = read.errors.get(id);
    if (p) {
      // (a list item and get-payout both carry these fields, spec §2)
      const fee = p.transactionFees === undefined ? undefined : fromApi(p.transactionFees);
      const total = p.sourceAmount !== undefined && fee ? fromApi(p.sourceAmount).plus(fee) : undefined;
      payouts.set(id, { status: p.status, sourceCurrency: p.sourceCurrency, total, fee, createdAt: p.createdAt });
    } else if (e) payouts.set(id, { error: `${e.code ?? `HTTP ${e.status ?? '?'}`} (request id ${e.requestId})` });
  }
  return payouts;
}

/** Unfiltered (the only way to see debits not from the batch), down to `stopBelow` (ms) less a margin. */
export async function fetchTransactions(o: FetchOptions & { stopBelow?: number }, requests: RequestCounts, listing: Listing) {
  const fetch = counted(requests, 'transactionPages', async (page: number) => {
    const r = await o.client.listTransactions({ page, limit: LIST_MAX_LIMIT }, { signal: o.stop }).catch((e: unknown) => {
      throw e instanceof PayoutApiError && e.serviceTrouble ? new Halted(e.message) : e;
    });
    listing.pages = page;
    return { ...r, data: r.data.map(normaliseTransaction) };
  });
  const r = await readPages({ fetch, stopBelow: o.stopBelow, what: 'transactions', logger: o.logger, stop: o.stop });
  if (r.ended === 'stopped') throw new Halted('stopped');
  listing.ended = r.ended;
  listing.transactions = r.items.length;
  return r.items;
}

// The requests of `reconcile` (and the payout reads of `status`), through the one throttled
// client: the payouts from the payout list (spec §4.4) and the wallet transactions (spec §4.15),
// 100 a page, paged as src/client/pages.ts says; one get-payout (§4.3) only for a payout the pages
// did not show. A reconcile costs pages, not rows. The unfiltered transactions listing is also the
// only way to see the debits that are not from the batch.
import type { Logger } from 'pino';
import type { PayoutClient } from '../client/client.ts';
import type { PayoutAnswer, WalletTransactionAnswer } from '../client/answers.ts';
import { PayoutApiError } from '../client/errors.ts';
import { readPages, type ListingEnd } from '../client/pages.ts';
import { fromApi } from '../money.ts';
import { LIST_MAX_LIMIT } from '../interface/codes.ts';
import type { PayoutState, ReconTx } from './tie-out.ts';

/** The service could not be used (unreachable, 5xx, key refused): what was read is not a reconciliation. */
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
  total: number;
}

/** How the transactions listing ended (pages.ts): 'end', 'period' or 'repeated page' (page ignored). */
export interface Listing {
  pages: number;
  transactions: number;
  ended: ListingEnd;
}

const haltOnTrouble = (e: unknown): never => {
  if (e instanceof PayoutApiError && e.serviceTrouble) throw new Halted(e.message);
  throw e;
};

/** A transaction as the client read it, normalised: the sign from `type` when given (debits negative, spec §2). */
export function normaliseTransaction(t: WalletTransactionAnswer): ReconTx {
  const raw = fromApi(t.amount);
  const amount = t.type === 'DEBIT' ? raw.abs().negated() : t.type === 'CREDIT' ? raw.abs() : raw;
  const meta = t.metadata ?? {};
  const payoutId = typeof meta.payoutId === 'string' ? meta.payoutId : undefined;
  const wallet = t.wallet as { walletId?: string; currency?: string } | undefined;
  // (the wallet's id also at the top level, as some readings give it)
  const topWalletId = (t as Record<string, unknown>).walletId;
  return {
    id: t.id,
    amount,
    currency: t.currency ?? wallet?.currency,
    walletId: wallet?.walletId ?? (typeof topWalletId === 'string' ? topWalletId : undefined),
    reference: t.reference,
    payoutId,
    createdAt: t.createdAt,
  };
}

/**
 * The payout list's items, by id, until every payout of `ids` is seen (or the pages end: pages.ts);
 * `missing` are the ids no page showed. A list the service refuses (a 4xx) shows none: each payout
 * is then asked for by itself. Service trouble is thrown as the client's error.
 */
export async function listedPayouts(
  ids: Iterable<string>,
  o: FetchOptions,
  requests: RequestCounts,
): Promise<{ listed: Map<string, PayoutAnswer>; missing: string[] }> {
  const wanted = new Set(ids);
  const fetch = (page: number) => {
    requests.payoutPages++;
    return o.client.listPayouts({ page, limit: LIST_MAX_LIMIT }, { signal: o.stop });
  };
  try {
    const { items } = await readPages({ fetch, wanted, what: 'payouts', logger: o.logger, stop: o.stop });
    return { listed: new Map(items.map((p) => [p.id, p])), missing: [...wanted] };
  } catch (e) {
    if (!(e instanceof PayoutApiError) || e.serviceTrouble) throw e;
    o.logger?.warn({ requestId: e.requestId, errorCode: e.code }, 'the payout list could not be read: each payout is asked for');
    return { listed: new Map(), missing: [...new Set(ids)] };
  }
}

/** What reconcile needs of a payout, from a list item or get-payout (spec §2: both carry these fields). */
function stateOf(p: PayoutAnswer): PayoutState {
  const total =
    p.sourceAmount !== undefined && p.transactionFees !== undefined ? fromApi(p.sourceAmount).plus(fromApi(p.transactionFees)) : undefined;
  return { status: p.status, sourceCurrency: p.sourceCurrency, total, createdAt: p.createdAt };
}

/** Each payout's state now, from the list; a payout the service answers an error for (404...) carries that error. */
export async function fetchPayoutStates(
  ids: readonly string[],
  o: FetchOptions,
  requests: RequestCounts,
): Promise<Map<string, PayoutState>> {
  const { listed, missing } = await listedPayouts(ids, o, requests).catch(haltOnTrouble);
  const payouts = new Map<string, PayoutState>();
  for (const id of ids) {
    const p = listed.get(id);
    if (p) payouts.set(id, stateOf(p));
  }
  await Promise.all(
    missing.map(async (payoutId) => {
      if (o.stop?.aborted) throw new Halted('stopped');
      requests.getPayout++;
      try {
        payouts.set(payoutId, stateOf(await o.client.getPayout(payoutId, { signal: o.stop })));
      } catch (e) {
        if (!(e instanceof PayoutApiError) || e.serviceTrouble) return haltOnTrouble(e);
        payouts.set(payoutId, { error: `${e.code ?? `HTTP ${e.status ?? '?'}`} (request id ${e.requestId})` });
        o.logger?.warn({ payoutId, requestId: e.requestId, errorCode: e.code }, 'payout could not be read');
      }
    }),
  );
  return payouts;
}

/** The unfiltered listing, newest first at the sandbox, down to `stopBelow` (ms) less a margin (pages.ts); `listing` says how it ended. */
export async function fetchTransactions(
  o: FetchOptions & { stopBelow?: number },
  requests: RequestCounts,
  listing: Listing,
): Promise<ReconTx[]> {
  const fetch = async (page: number) => {
    requests.transactionPages++;
    const r = await o.client.listTransactions({ page, limit: LIST_MAX_LIMIT }, { signal: o.stop }).catch(haltOnTrouble);
    listing.pages = page;
    return { ...r, data: r.data.map(normaliseTransaction) };
  };
  const r = await readPages({ fetch, stopBelow: o.stopBelow, what: 'transactions', logger: o.logger, stop: o.stop });
  if (r.ended === 'stopped') throw new Halted('stopped');
  listing.ended = r.ended;
  listing.transactions = r.items.length;
  return r.items;
}

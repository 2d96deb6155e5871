// The requests of `reconcile`: each created payout's status now (get-payout, spec §4.3) and the
// wallet transactions (spec §4.15), through the one throttled client. The unfiltered listing, 100
// a page, costs one request per 100 movements rather than one per payout, and is the only way to
// see the debits that are not from the batch. Newest first, so it stops once a whole page is
// older than the period (less a margin).
import type { Logger } from 'pino';
import type { PayoutClient } from '../client/client.ts';
import type { WalletTransactionAnswer } from '../client/answers.ts';
import { PayoutApiError } from '../client/errors.ts';
import { fromApi } from '../money.ts';
import { LIST_MAX_LIMIT } from '../interface/codes.ts';
import { timeOf, type PayoutState, type ReconTx } from './tie-out.ts';

/** The service could not be used (unreachable, 5xx, key refused): what was read is not a reconciliation. */
export class Halted extends Error {}

export interface FetchOptions {
  client: PayoutClient;
  logger?: Logger;
  stop?: AbortSignal;
}

export interface RequestCounts {
  getPayout: number;
  transactionPages: number;
  total: number;
}

/** How the listing ended: 'end' (short or last page), 'period' (below the period), 'repeated page' (page ignored). */
export interface Listing {
  pages: number;
  transactions: number;
  ended: 'end' | 'period' | 'repeated page';
}

/** Stop paging this long below the period's start (clocks of payout and transaction may differ a little). */
const PERIOD_MARGIN_MS = 5 * 60_000;

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

/** Each payout's state now; a payout the service answers an error for (404...) carries that error. */
export async function fetchPayoutStates(
  ids: readonly string[],
  o: FetchOptions,
  requests: RequestCounts,
): Promise<Map<string, PayoutState>> {
  const payouts = new Map<string, PayoutState>();
  await Promise.all(
    ids.map(async (payoutId) => {
      if (o.stop?.aborted) throw new Halted('stopped');
      requests.getPayout++;
      try {
        const p = await o.client.getPayout(payoutId, { signal: o.stop });
        const total =
          p.sourceAmount !== undefined && p.transactionFees !== undefined
            ? fromApi(p.sourceAmount).plus(fromApi(p.transactionFees))
            : undefined;
        payouts.set(payoutId, { status: p.status, sourceCurrency: p.sourceCurrency, total, createdAt: p.createdAt });
      } catch (e) {
        if (!(e instanceof PayoutApiError) || e.serviceTrouble) return haltOnTrouble(e);
        payouts.set(payoutId, { error: `${e.code ?? `HTTP ${e.status ?? '?'}`} (request id ${e.requestId})` });
        o.logger?.warn({ payoutId, requestId: e.requestId, errorCode: e.code }, 'payout could not be read');
      }
    }),
  );
  return payouts;
}

/**
 * Pages of the unfiltered listing until a short or last page, a page older than `stopBelow` (ms,
 * less a margin) when the listing is newest first, or a page equal to the one before (a service
 * ignoring `page`); `listing` says which, as it goes. A movement made while paging pushes the older ones down a place: seen twice,
 * kept once.
 */
export async function fetchTransactions(
  o: FetchOptions & { stopBelow?: number },
  requests: RequestCounts,
  listing: Listing,
): Promise<ReconTx[]> {
  const transactions: ReconTx[] = [];
  const seen = new Set<string>();
  let newestFirst = true;
  let previousFirst: string | undefined;
  let lastTime: number | undefined;
  for (let page = 1; ; page++) {
    if (o.stop?.aborted) throw new Halted('stopped');
    requests.transactionPages++;
    const r = await o.client.listTransactions({ page, limit: LIST_MAX_LIMIT }, { signal: o.stop }).catch(haltOnTrouble);
    listing.pages = page;
    if (r.data.length === 0) break;
    const firstKey = JSON.stringify(r.data[0]);
    if (page > 1 && firstKey === previousFirst) {
      listing.ended = 'repeated page';
      o.logger?.warn({ page }, 'the transactions route gave the same page again (page ignored?): listing stopped');
      break;
    }
    previousFirst = firstKey;
    for (const tx of r.data.map(normaliseTransaction)) {
      if (tx.id !== undefined && seen.has(tx.id)) continue;
      if (tx.id !== undefined) seen.add(tx.id);
      transactions.push(tx);
      const at = timeOf(tx.createdAt);
      if (at === undefined || (lastTime !== undefined && at > lastTime)) newestFirst = false;
      if (at !== undefined) lastTime = at;
    }
    const total = r.meta?.total;
    if (total !== undefined ? page * LIST_MAX_LIMIT >= total : r.data.length < LIST_MAX_LIMIT) break;
    if (newestFirst && o.stopBelow !== undefined && lastTime !== undefined && lastTime < o.stopBelow - PERIOD_MARGIN_MS) {
      listing.ended = 'period';
      break;
    }
  }
  listing.transactions = transactions.length;
  return transactions;
}

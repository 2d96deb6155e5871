// A swap that funds a short wallet before a batch pays from it (spec §4.7 swap, §4.8 swaps list,
// §4.9 pairs). A swap is money moving too: planned, approved, sent at most once per batch and
// currency, and reconciled. This file holds what the plan proposes and approvers sign
// (`SwapProposal`), the swap's reference, and the swap as the journal keeps it; its journal lines
// are the journal's (journal/lines.ts), its send step swap-send.ts.
import { z } from 'zod';
import type { SwapAnswer } from '../client/answers.ts';
import type { SwapSnapshot } from '../journal/lines.ts';
import { amountText, Dec, formatAmount, fromApi, groupThousands, minorUnits, roundTo, type ApiAmount } from '../money.ts';
import { KEY_VERSIONS, sha256Hex } from './identity.ts';

// (session.ts and tie-out.ts name these from here)
export type { SwapEvent, SwapSnapshot } from '../journal/lines.ts';

/**
 * What the plan proposes to fund one short currency, and what approvers sign. Amounts are exact
 * decimal strings in their currency's minor units; the rate is the pairs route's as read (spec
 * §4.9: baseCurrency, quoteCurrency, rate: quoteCurrency units per baseCurrency unit).
 */
export const SwapProposalSchema = z.object({
  /** The swap's reference (spec §4.7 `reference`, returned as payoutRef): swapReference of the payments it funds. */
  reference: z.string(),
  /** The short currency: the swap's destination (currencyToBeSent). */
  currency: z.string(),
  /** The funding wallet's currency (swapCurrency). */
  fromCurrency: z.string(),
  sourceWalletId: z.string(),
  destinationWalletId: z.string(),
  /** Debited from the funding wallet, in fromCurrency. */
  swapAmount: z.string(),
  /** Credited to the short wallet, in currency: the shortfall plus the margin, at least. */
  amountToBeSent: z.string(),
  /** The pair as the pairs route gave it when the plan was made. */
  pair: z.object({ baseCurrency: z.string(), quoteCurrency: z.string(), rate: z.string() }),
  /** What the batch lacks in `currency` (amounts, fees and the fee margin, less the balance). */
  shortfall: z.string(),
  /** Added above the shortfall, in `currency`, so that a fee or rate move does not leave the wallet short. */
  margin: z.string(),
  /** Balances before and after the swap and the batch, per currency of the two wallets. */
  balances: z.array(z.object({ currency: z.string(), before: z.string(), afterSwap: z.string(), afterBatch: z.string() })),
});
export type SwapProposal = z.infer<typeof SwapProposalSchema>;

/**
 * The swap's reference: one per currency and set of payments it funds, `PBS2-<24 hex>-<CUR>`
 * (pinned by test/engine/keys.test.ts): a function of the payments' references (their identity),
 * never of the file's bytes, so a re-saved or converted copy run from another ledger names the
 * same swap. It is sent as the swap's `reference` and comes back as its payoutRef (spec §4.7), so
 * any process on any host finds that swap in the swaps list (spec §4.8) before it sends one, and
 * its Idempotency-Key, identity.ts idempotencyKey(reference, attempt, 'swap'), is the same too.
 */
export function swapReference(references: readonly string[], currency: string): string {
  const set = [...new Set(references)].sort();
  return `PBS2-${sha256Hex(`${KEY_VERSIONS.swap}|${currency}|${set.join('\n')}`).slice(0, 24)}-${currency}`;
}

/** The reference of each currency's swap: from the references of the rows debiting that currency. */
export function swapReferences(rows: Iterable<{ reference: string; currency: string }>): (currency: string) => string {
  const by = new Map<string, string[]>();
  for (const r of rows) {
    const refs = by.get(r.currency) ?? [];
    if (!refs.length) by.set(r.currency, refs);
    refs.push(r.reference);
  }
  return (currency) => swapReference(by.get(currency) ?? [], currency);
}

/** The swap as the service answered it (create, list or get), as the journal keeps it: amounts as exact decimal text. */
export function swapSnapshotOf(a: SwapAnswer): SwapSnapshot {
  const amount = (v: ApiAmount | undefined, currency: string | undefined) =>
    v === undefined ? undefined : amountText(fromApi(v), currency);
  const s: SwapSnapshot = {
    id: a.id,
    payoutRef: a.payoutRef,
    status: a.status,
    sourceAmount: amount(a.sourceAmount, a.sourceCurrency),
    sourceCurrency: a.sourceCurrency,
    destinationAmount: amount(a.destinationAmount, a.destinationCurrency),
    destinationCurrency: a.destinationCurrency,
    exchangeRate: a.exchangeRate === undefined ? undefined : fromApi(a.exchangeRate).toFixed(),
    createdAt: a.createdAt,
  };
  for (const k of Object.keys(s) as (keyof SwapSnapshot)[]) if (s[k] === undefined) delete s[k];
  return s;
}

// ---- pricing and choosing the swap the plan proposes (pure)

/** What the batch takes from a currency's wallet: its rows' amounts and fees, and the margin kept for estimated fees (plan.ts feeMargin). */
export interface SwapNeed {
  currency: string;
  total: Dec;
  feeMargin: Dec;
}

/** A wallet as the wallets route gave it (spec §4.12); one without a walletId or a readable balance cannot take part in a swap. */
export interface SwapWallet {
  walletId?: string;
  currency: string;
  balance?: Dec;
}

/** A pair as the pairs route gave it (spec §4.9); `enabled` false only where the listing says so (pairs?status=all). */
export interface SwapPair {
  baseCurrency: string;
  quoteCurrency: string;
  rate?: ApiAmount;
  enabled?: boolean;
}

/** A short currency the plan cannot fund by a swap, and what is missing. */
export interface SwapRefusal {
  currency: string;
  shortfall: string;
  reason: string;
}

/**
 * The margin added above a shortfall, in its currency: 1% of it, rounded up to the minor unit, at
 * least one minor unit. Rates are not locked (spec §1.11): a swap sent after the rate moved is
 * recomputed at the new rate (spec §7, 'Invalid payout amount'), so for the same debit the wallet
 * may be credited less, by as much as the rate tolerance (1% by default, --swap-rate-tolerance);
 * the fees of rows priced in another currency move with rates too. The margin keeps the wallet
 * covered through such a move.
 */
export function swapMargin(shortfall: Dec, currency: string): Dec {
  const digits = minorUnits(currency) ?? 2;
  return Dec.max(shortfall.times('0.01'), new Dec(10).pow(-digits)).toDecimalPlaces(digits, Dec.ROUND_UP);
}

/**
 * The enabled pair that converts `from` into `to`, and its direction. A pair serves both ways (spec
 * §2: "the buy/sell direction is chosen automatically by the service"); one in the direction of the
 * swap (base = `from`) is preferred when both are listed. A pair whose rate cannot be read, or is
 * not above 0, cannot price a swap.
 */
export function pairFor(pairs: readonly SwapPair[], from: string, to: string): { pair: SwapPair; rate: Dec; direct: boolean } | undefined {
  const usable = (p: SwapPair) => p.enabled !== false && p.rate !== undefined && fromApi(p.rate).greaterThan(0);
  const direct = pairs.find((p) => p.baseCurrency === from && p.quoteCurrency === to && usable(p));
  const reverse = pairs.find((p) => p.baseCurrency === to && p.quoteCurrency === from && usable(p));
  const found = direct ?? reverse;
  return found && { pair: found, rate: fromApi(found.rate!), direct: found === direct };
}

/**
 * The swap's two amounts for a credit of at least `target` in `to`. The pair's rate is read as
 * quoteCurrency units per baseCurrency unit (spec §2 Currency pair, §4.9), so `from` converts to
 * `to` as amount × rate when `from` is the base, amount ÷ rate when it is the quote, rounded half-up
 * to `to`'s minor units; amountToBeSent must equal that conversion of swapAmount (spec §4.7 "must
 * match the current rate", §7 'Invalid payout amount'). swapAmount is `target` priced exactly at
 * the rate, rounded up to `from`'s minor units; amountToBeSent is its conversion: at least
 * `target`, and exactly what the service computes from swapAmount.
 */
export function priceSwap(target: Dec, from: string, to: string, rate: Dec, direct: boolean): { swapAmount: Dec; amountToBeSent: Dec } {
  const raw = direct ? target.dividedBy(rate) : target.times(rate);
  const swapAmount = raw.toDecimalPlaces(minorUnits(from) ?? 2, Dec.ROUND_UP);
  return { swapAmount, amountToBeSent: convertAtRate(swapAmount, to, rate, direct) };
}

/** An amount converted at a pair's rate (direct: × rate; reverse: ÷ rate), rounded half-up to `to`'s minor units (priceSwap). */
export function convertAtRate(amount: Dec, to: string, rate: Dec, direct: boolean): Dec {
  return roundTo(direct ? amount.times(rate) : amount.dividedBy(rate), to);
}

/** A funding wallet that could pay the swap: its pair, the priced amounts and what it has to spare. */
interface FundingOption {
  wallet: SwapWallet & { walletId: string; balance: Dec };
  pair: SwapPair;
  rate: Dec;
  direct: boolean;
  swapAmount: Dec;
  amountToBeSent: Dec;
  spare: Dec;
}

/**
 * For each currency whose wallet cannot cover its rows (amounts and fees), a proposal to fund it
 * by a swap from another wallet of the business, or why none is possible. The swap credits the
 * shortfall (the rows' total and fee margin, less the balance) plus swapMargin; the funding wallet
 * is the one `from` names (--swap-from), else, among the wallets with an enabled pair to the short
 * currency that can pay the swap once their own rows are paid (total and fee margin), the one with
 * the most left over (converted at its pair). A wallet funds two currencies only if it can pay both.
 */
export function proposeSwaps(
  referenceOf: (currency: string) => string,
  needs: readonly SwapNeed[],
  wallets: readonly SwapWallet[],
  pairs: readonly SwapPair[],
  o: { from?: string } = {},
): { swaps: SwapProposal[]; refusals: SwapRefusal[] } {
  const need = new Map(needs.map((n) => [n.currency, n]));
  const byCurrency = new Map(wallets.map((w) => [w.currency, w]));
  const taken = new Map<string, Dec>();
  const spareOf = (w: SwapWallet & { balance: Dec }) => {
    const own = need.get(w.currency);
    return w.balance.minus(own ? own.total.plus(own.feeMargin) : 0).minus(taken.get(w.currency) ?? 0);
  };
  const swaps: SwapProposal[] = [];
  const refusals: SwapRefusal[] = [];
  for (const n of [...needs].sort((a, b) => a.currency.localeCompare(b.currency))) {
    const to = byCurrency.get(n.currency);
    if (!to?.balance || !n.total.greaterThan(to.balance)) continue;
    const shortfall = n.total.plus(n.feeMargin).minus(to.balance);
    const refuse = (reason: string) => refusals.push({ currency: n.currency, shortfall: formatAmount(shortfall, n.currency), reason });
    if (!to.walletId) {
      refuse(`the ${n.currency} wallet has no walletId in the wallets route's answer, so no swap can credit it`);
      continue;
    }
    const margin = swapMargin(shortfall, n.currency);
    const options = fundingOptions(n.currency, shortfall.plus(margin), wallets, pairs, spareOf);
    const chosen = chooseFunding(n.currency, options, o.from);
    if (typeof chosen === 'string') {
      refuse(chosen);
      continue;
    }
    const swapped = (taken.get(chosen.wallet.currency) ?? new Dec(0)).plus(chosen.swapAmount);
    taken.set(chosen.wallet.currency, swapped);
    const rowsTotal = need.get(chosen.wallet.currency)?.total ?? new Dec(0);
    swaps.push(
      proposalOf(
        referenceOf(n.currency),
        n,
        { ...to, walletId: to.walletId, balance: to.balance },
        chosen,
        { shortfall, margin },
        { rowsTotal, swapped },
      ),
    );
  }
  return { swaps, refusals };
}

/** Every wallet with an enabled, readable pair to `to`, the swap priced from it, and what it has to spare. */
function fundingOptions(
  to: string,
  target: Dec,
  wallets: readonly SwapWallet[],
  pairs: readonly SwapPair[],
  spareOf: (w: SwapWallet & { balance: Dec }) => Dec,
): FundingOption[] {
  const out: FundingOption[] = [];
  for (const w of wallets) {
    if (w.currency === to || !w.walletId || !w.balance) continue;
    const found = pairFor(pairs, w.currency, to);
    if (!found) continue;
    const priced = priceSwap(target, w.currency, to, found.rate, found.direct);
    const wallet = w as FundingOption['wallet'];
    out.push({ wallet, ...found, ...priced, spare: spareOf(wallet) });
  }
  return out;
}

/** The funding wallet (--swap-from's, else the one with the most left over in `to`), or why there is none. */
function chooseFunding(to: string, options: FundingOption[], from: string | undefined): FundingOption | string {
  const covers = (f: FundingOption) => f.spare.greaterThanOrEqualTo(f.swapAmount);
  const spareText = (f: FundingOption) =>
    `the ${f.wallet.currency} wallet has ${formatAmount(Dec.max(f.spare, 0), f.wallet.currency)} ${f.wallet.currency} to spare once its own rows are paid, the swap needs ${formatAmount(f.swapAmount, f.wallet.currency)} ${f.wallet.currency}`;
  if (from !== undefined) {
    const f = options.find((x) => x.wallet.currency === from);
    if (from === to) return `--swap-from ${from} names the short currency itself`;
    if (!f)
      return `--swap-from ${from}: no ${from} wallet with a balance and an enabled ${from}/${to} pair with a rate (spec §4.9; enable the pair in the dashboard or with the toggle route, §4.10)`;
    return covers(f) ? f : `--swap-from ${from}: ${spareText(f)}`;
  }
  if (!options.length)
    return `no wallet of the business has an enabled pair with ${to} and a balance (spec §4.9; enable a pair in the dashboard or with the toggle route, §4.10)`;
  const left = (f: FundingOption) => convertAtRate(f.spare.minus(f.swapAmount), to, f.rate, f.direct);
  const able = options.filter(covers).sort((a, b) => left(b).comparedTo(left(a)) || a.wallet.currency.localeCompare(b.wallet.currency));
  return able[0] ?? `no wallet with an enabled pair to ${to} can pay the swap: ${options.map(spareText).join('; ')}`;
}

/** The proposal, with both wallets' balances before, after the swap (and any earlier swap from the same wallet) and after the batch. */
function proposalOf(
  reference: string,
  n: SwapNeed,
  to: SwapWallet & { walletId: string; balance: Dec },
  f: FundingOption,
  amounts: { shortfall: Dec; margin: Dec },
  from: { rowsTotal: Dec; swapped: Dec },
): SwapProposal {
  const fromCurrency = f.wallet.currency;
  const fromSwapped = f.wallet.balance.minus(from.swapped);
  const toSwapped = to.balance.plus(f.amountToBeSent);
  const balance = (currency: string, before: Dec, afterSwap: Dec, rows: Dec) => ({
    currency,
    before: formatAmount(before, currency),
    afterSwap: formatAmount(afterSwap, currency),
    afterBatch: formatAmount(afterSwap.minus(rows), currency),
  });
  return {
    reference,
    currency: n.currency,
    fromCurrency,
    sourceWalletId: f.wallet.walletId,
    destinationWalletId: to.walletId,
    swapAmount: formatAmount(f.swapAmount, fromCurrency),
    amountToBeSent: formatAmount(f.amountToBeSent, n.currency),
    pair: { baseCurrency: f.pair.baseCurrency, quoteCurrency: f.pair.quoteCurrency, rate: String(f.pair.rate) },
    shortfall: formatAmount(amounts.shortfall, n.currency),
    margin: formatAmount(amounts.margin, n.currency),
    balances: [balance(fromCurrency, f.wallet.balance, fromSwapped, from.rowsTotal), balance(n.currency, to.balance, toSwapped, n.total)],
  };
}

/**
 * A proposal in one line, as the plan, the confirmation and the approval show it: from which
 * wallet, how much, at what rate, the margin, and both wallets' balances after the swap and after
 * the batch.
 */
export function swapText(s: SwapProposal): string {
  const g = groupThousands;
  const balances = s.balances.map((b) => `${b.currency} ${g(b.before)} -> ${g(b.afterSwap)} -> ${g(b.afterBatch)}`).join(', ');
  return (
    `${g(s.swapAmount)} ${s.fromCurrency} from the ${s.fromCurrency} wallet -> ${g(s.amountToBeSent)} ${s.currency}, ` +
    `at ${s.pair.baseCurrency}/${s.pair.quoteCurrency} ${s.pair.rate} (${s.pair.quoteCurrency} per ${s.pair.baseCurrency}); ` +
    `shortfall ${g(s.shortfall)} + margin ${g(s.margin)} ${s.currency}; balances now -> after the swap -> after the batch: ${balances}`
  );
}

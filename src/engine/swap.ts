// A swap funding a short wallet before a batch pays from it (spec §4.7-§4.9): the plan's proposal, its reference and snapshot.
import * as z from 'zod';
import type { CurrencyPairAnswer, SwapAnswer, WalletAnswer } from '../client/answers.ts';
import type { SwapSnapshot, SwapState } from '../journal/lines.ts';
import type { SwapRequest } from '../spec/schemas.ts';
import { amountText, Dec, formatAmount, fromApi, groupThousands, minorUnits, roundTo, type ApiAmount } from '../money.ts';
import { KEY_VERSIONS, sha256Hex } from './identity.ts';
import { byText } from '../text.ts';
import { defined, ifDefined } from './outcome.ts';

/** What the plan proposes to fund one short currency and approvers sign; amounts exact decimal text. */
export const SwapProposalSchema = z.object({
  /** spec §4.7 `reference`, returned as payoutRef (swapReference). */
  reference: z.string(),
  /** The short currency (currencyToBeSent). */
  currency: z.string(),
  /** The funding wallet's currency (swapCurrency). */
  fromCurrency: z.string(),
  sourceWalletId: z.string(),
  destinationWalletId: z.string(),
  /** Debited, in fromCurrency. */
  swapAmount: z.string(),
  /** Credited, in currency: at least the shortfall plus the margin. */
  amountToBeSent: z.string(),
  /** The pairs route's pair when planned (spec §4.9: rate in quoteCurrency units per baseCurrency unit). */
  pair: z.object({ baseCurrency: z.string(), quoteCurrency: z.string(), rate: z.string() }),
  /** Amounts, fees and fee margin in `currency`, less the balance. */
  shortfall: z.string(),
  margin: z.string(),
  balances: z.array(z.object({ currency: z.string(), before: z.string(), afterSwap: z.string(), afterBatch: z.string() })),
});
export type SwapProposal = z.infer<typeof SwapProposalSchema>;

/** `PBS2-<24 hex>-<CUR>` of the payments' references, never the file's bytes: any copy on any host finds the same swap (§4.8). */
export function swapReference(references: readonly string[], currency: string): string {
  const set = [...new Set(references)].sort();
  return `PBS2-${sha256Hex(`${KEY_VERSIONS.swap}|${currency}|${set.join('\n')}`).slice(0, 24)}-${currency}`;
}

export function swapReferences(rows: readonly { reference: string; currency: string }[]): (currency: string) => string {
  const referencesOf = (currency: string) => rows.filter((r) => r.currency === currency).map((r) => r.reference);
  return (currency) => swapReference(referencesOf(currency), currency);
}

/** The swap as the journal keeps it: amounts as exact decimal text. */
export function swapSnapshotOf(a: SwapAnswer): SwapSnapshot {
  const amount = (v: ApiAmount | undefined, currency: string | undefined) => ifDefined(v, (x) => amountText(fromApi(x), currency));
  return defined({
    id: a.id,
    payoutRef: a.payoutRef,
    status: a.status,
    sourceAmount: amount(a.sourceAmount, a.sourceCurrency),
    sourceCurrency: a.sourceCurrency,
    destinationAmount: amount(a.destinationAmount, a.destinationCurrency),
    destinationCurrency: a.destinationCurrency,
    exchangeRate: ifDefined(a.exchangeRate, (r) => fromApi(r).toFixed()),
    createdAt: a.createdAt,
  }) as SwapSnapshot;
}

/** What the batch takes from a currency's wallet: its rows' amounts and fees, and the fee margin. */
export interface SwapNeed {
  currency: string;
  total: Dec;
  feeMargin: Dec;
}

export type SwapWallet = Pick<WalletAnswer, 'walletId' | 'currency'> & { balance?: Dec };
export type SwapPair = Pick<CurrencyPairAnswer, 'baseCurrency' | 'quoteCurrency' | 'rate' | 'enabled'>;

export interface SwapRefusal {
  currency: string;
  shortfall: string;
  reason: string;
}

/** 1%, rounded up, at least one minor unit: rates are not locked (spec §1.11), a recomputed swap (§7) may credit less. */
export function swapMargin(shortfall: Dec, currency: string): Dec {
  const digits = minorUnits(currency) ?? 2;
  return Dec.max(shortfall.times('0.01'), new Dec(10).pow(-digits)).toDecimalPlaces(digits, Dec.ROUND_UP);
}

/** The enabled pair with a rate above 0 converting `from` into `to`; either way (spec §2), direct preferred. */
function pairFor(pairs: readonly SwapPair[], from: string, to: string): { pair: SwapPair; rate: Dec; direct: boolean } | undefined {
  const usable = (p: SwapPair) => p.enabled !== false && p.rate !== undefined && fromApi(p.rate).greaterThan(0);
  const direct = pairs.find((p) => p.baseCurrency === from && p.quoteCurrency === to && usable(p));
  const found = direct ?? pairs.find((p) => p.baseCurrency === to && p.quoteCurrency === from && usable(p));
  return found && { pair: found, rate: fromApi(found.rate!), direct: found === direct };
}

/** swapAmount: `target` at the rate, rounded up; amountToBeSent: its conversion, at least `target`, as the service does (§4.7, §7). */
export function priceSwap(target: Dec, from: string, to: string, rate: Dec, direct: boolean): { swapAmount: Dec; amountToBeSent: Dec } {
  const raw = direct ? target.dividedBy(rate) : target.times(rate);
  const swapAmount = raw.toDecimalPlaces(minorUnits(from) ?? 2, Dec.ROUND_UP);
  return { swapAmount, amountToBeSent: convertAtRate(swapAmount, to, rate, direct) };
}

/** The rate read as quoteCurrency units per baseCurrency unit (spec §2, §4.9): × from the base, ÷ from the quote, half-up. */
export function convertAtRate(amount: Dec, to: string, rate: Dec, direct: boolean): Dec {
  return roundTo(direct ? amount.times(rate) : amount.dividedBy(rate), to);
}

/** A wallet that can fund a swap: its pair (pairFor), the swap priced (priceSwap), and what it has to spare. */
type FundingOption = NonNullable<ReturnType<typeof pairFor>> &
  ReturnType<typeof priceSwap> & { wallet: SwapWallet & { balance: Dec }; spare: Dec };

/** Why a currency gets no swap (one per batch and currency): an earlier run made it, its credit in the balance (spec §3). */
export function swapMadeText(s: SwapState | undefined): string | undefined {
  if (s?.phase !== 'created' || !s.swap) return undefined;
  return `the batch's ${s.currency} swap ${s.swap.id} (${s.swap.status}) was made by an earlier run and the wallet is short again: a batch makes one swap per currency`;
}

/**
 * Per short currency, a swap crediting shortfall + swapMargin from the --swap-from wallet, else the one most left over; or why none.
 * `sent`: a swap an earlier run left unsettled is proposed as its body stands, so the plan shows (and approvers sign) what is resent.
 */
export function proposeSwaps(
  referenceOf: (currency: string) => string,
  needs: readonly SwapNeed[],
  wallets: readonly SwapWallet[],
  pairs: readonly SwapPair[],
  o: { from?: string; made?: (currency: string) => string | undefined; sent?: (currency: string) => SwapRequest | undefined } = {},
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
  for (const n of [...needs].sort((a, b) => byText(a.currency, b.currency))) {
    const to = byCurrency.get(n.currency);
    if (!to?.balance || !n.total.greaterThan(to.balance)) continue;
    const shortfall = n.total.plus(n.feeMargin).minus(to.balance);
    const made = o.made?.(n.currency);
    const margin = swapMargin(shortfall, n.currency);
    const options = wallets.flatMap((w): FundingOption[] => {
      const found = w.currency !== n.currency && w.balance ? pairFor(pairs, w.currency, n.currency) : undefined;
      if (!found) return [];
      const wallet = w as FundingOption['wallet'];
      return [
        {
          wallet,
          ...found,
          ...priceSwap(shortfall.plus(margin), w.currency, n.currency, found.rate, found.direct),
          spare: spareOf(wallet),
        },
      ];
    });
    const sent = o.sent?.(n.currency);
    const same = sent !== undefined && sent.destinationWalletId === to.walletId && (o.from ?? sent.swapCurrency) === sent.swapCurrency;
    const asSent = same ? options.find((x) => x.wallet.walletId === sent.sourceWalletId) : undefined;
    const f =
      made ??
      (asSent && sent && { ...asSent, swapAmount: fromApi(sent.swapAmount), amountToBeSent: fromApi(sent.amountToBeSent) }) ??
      chooseFunding(n.currency, options, o.from);
    if (typeof f === 'string') {
      refusals.push({ currency: n.currency, shortfall: formatAmount(shortfall, n.currency), reason: f });
      continue;
    }
    const fromCurrency = f.wallet.currency;
    const swapped = (taken.get(fromCurrency) ?? new Dec(0)).plus(f.swapAmount);
    taken.set(fromCurrency, swapped);
    swaps.push({
      reference: referenceOf(n.currency),
      currency: n.currency,
      fromCurrency,
      sourceWalletId: f.wallet.walletId,
      destinationWalletId: to.walletId,
      swapAmount: formatAmount(f.swapAmount, fromCurrency),
      amountToBeSent: formatAmount(f.amountToBeSent, n.currency),
      pair: { baseCurrency: f.pair.baseCurrency, quoteCurrency: f.pair.quoteCurrency, rate: String(f.pair.rate) },
      shortfall: formatAmount(shortfall, n.currency),
      margin: formatAmount(margin, n.currency),
      // (the funding wallet after this swap and any earlier one from it)
      balances: [
        balanceOf(fromCurrency, f.wallet.balance, f.wallet.balance.minus(swapped), need.get(fromCurrency)?.total ?? new Dec(0)),
        balanceOf(n.currency, to.balance, to.balance.plus(f.amountToBeSent), n.total),
      ],
    });
  }
  return { swaps, refusals };
}

const balanceOf = (currency: string, before: Dec, afterSwap: Dec, rows: Dec) => ({
  currency,
  before: formatAmount(before, currency),
  afterSwap: formatAmount(afterSwap, currency),
  afterBatch: formatAmount(afterSwap.minus(rows), currency),
});

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
  const able = options.filter(covers).sort((a, b) => left(b).comparedTo(left(a)) || byText(a.wallet.currency, b.wallet.currency));
  return able[0] ?? `no wallet with an enabled pair to ${to} can pay the swap: ${options.map(spareText).join('; ')}`;
}

/** A proposal in one line, as the plan, the confirmation and the approval show it. */
export function swapText(s: SwapProposal): string {
  const g = groupThousands;
  const balances = s.balances.map((b) => `${b.currency} ${g(b.before)} -> ${g(b.afterSwap)} -> ${g(b.afterBatch)}`).join(', ');
  return (
    `${g(s.swapAmount)} ${s.fromCurrency} from the ${s.fromCurrency} wallet -> ${g(s.amountToBeSent)} ${s.currency}, ` +
    `at ${s.pair.baseCurrency}/${s.pair.quoteCurrency} ${s.pair.rate} (${s.pair.quoteCurrency} per ${s.pair.baseCurrency}); ` +
    `shortfall ${g(s.shortfall)} + margin ${g(s.margin)} ${s.currency}; balances now -> after the swap -> after the batch: ${balances}`
  );
}

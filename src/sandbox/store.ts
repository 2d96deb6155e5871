// The sandbox's state, in memory and in creation order (start-sandbox.ts snapshotState keeps it between commands). Every
// balance change goes through `move`, which writes the wallet transaction (spec §2) and the wallet event (§6).
import type { InformationRequest } from '../spec/schemas.ts';
import type { PayoutMethod, PayoutStatus, StatusDetail, SwapStatus } from '../spec/codes.ts';
import { Dec, toApi } from '../money.ts';
import type { Clock } from './clock.ts';
import { newId, stableId } from './ids.ts';
import { balanceProblem, type Seed } from './seed.ts';

type SeedCountry = Seed['countries'][number];
export type Country = SeedCountry & Required<Pick<SeedCountry, 'id' | 'payoutCurrencies'>>;
type SeedBusiness = Seed['businesses'][number];
export type Business = Pick<SeedBusiness, 'name'> & { id: string };
export type WalletRec = Omit<SeedBusiness['wallets'][number], 'balance'> & { walletId: string; businessId: string; balance: Dec };
export type PairRec = Omit<SeedBusiness['pairs'][number], 'rate'> & { currencyPairId: string; businessId: string; rate: Dec };

/** The records of one business, in creation order. */
export const ownedBy = <T extends { businessId: string }>(records: Iterable<T>, businessId: string): T[] =>
  [...records].filter((r) => r.businessId === businessId);

/** What a payout and a swap both record (spec §2: the same item fields). */
interface MovementRec {
  id: string;
  payoutRef: string;
  businessId: string;
  sourceAmount: Dec;
  sourceCurrency: string;
  destinationAmount: Dec;
  destinationCurrency: string;
  exchangeRate: Dec;
  createdAt: string;
  updatedAt: string;
}

export interface PayoutRec extends MovementRec {
  method: PayoutMethod;
  fee: Dec;
  status: PayoutStatus;
  statusDetail?: StatusDetail;
  informationRequests?: InformationRequest[];
  /** Given with the move into FAILED or REJECTED. */
  failureReason?: string;
  documents: { id: string; url: string; uploadedAt: string }[];
}

export interface SwapRec extends MovementRec {
  sourceWalletId: string;
  destinationWalletId: string;
  status: SwapStatus;
}

export interface TransactionRec {
  id: string;
  businessId: string;
  walletId: string;
  currency: string;
  type: 'DEBIT' | 'CREDIT';
  /** Negative for debits (spec §2 Wallet transaction). */
  amount: Dec;
  balanceBefore: Dec;
  balanceAfter: Dec;
  reference: string;
  narration: string;
  metadata: Record<string, unknown>;
  createdAt: string;
}

export interface StoreEvent {
  eventType: 'payout.status.changed' | 'wallet.debited' | 'wallet.credited';
  businessId: string;
  data: Record<string, unknown>;
}

export class Store {
  /** Each key's business (spec §5.1: a key is scoped to one tenant). */
  readonly businessByKey = new Map<string, Business>();
  readonly wallets = new Map<string, WalletRec>();
  readonly pairs = new Map<string, PairRec>();
  readonly payouts = new Map<string, PayoutRec>();
  readonly swaps = new Map<string, SwapRec>();
  readonly transactions: TransactionRec[] = [];
  readonly countries: Country[];
  publish: (e: StoreEvent) => void = () => {};

  constructor(
    seed: Seed,
    readonly clock: Clock,
  ) {
    for (const b of seed.businesses) {
      const business: Business = { id: b.id ?? stableId(`business:${b.name}`), name: b.name };
      for (const k of b.keys) this.businessByKey.set(k, business);
      for (const w of b.wallets) {
        const walletId = w.walletId ?? stableId(`wallet:${business.id}:${w.currency}`);
        this.wallets.set(walletId, { walletId, businessId: business.id, currency: w.currency, balance: new Dec(w.balance) });
      }
      for (const p of b.pairs) {
        const currencyPairId = p.currencyPairId ?? stableId(`pair:${business.id}:${p.baseCurrency}/${p.quoteCurrency}`);
        this.pairs.set(currencyPairId, { ...p, currencyPairId, businessId: business.id, rate: new Dec(p.rate) });
      }
    }
    this.countries = seed.countries.map((c, i) => ({
      ...c,
      id: c.id ?? i + 1,
      payoutCurrencies: c.payoutCurrencies ?? [{ code: c.currencyCode, name: c.currencyCode }],
    }));
  }

  walletIn(businessId: string, currency: string): WalletRec | undefined {
    return ownedBy(this.wallets.values(), businessId).find((w) => w.currency === currency);
  }

  /** Why `wallet` cannot be credited `amount`, checked before anything changes: no answer could carry its balance. */
  creditProblem(wallet: WalletRec, amount: Dec): string | undefined {
    const after = wallet.balance.plus(amount);
    const problem = balanceProblem(after, wallet.currency);
    return problem && `would bring the balance to ${after.toFixed()}; ${problem}`;
  }

  /** A signed amount in or out of a wallet, with its transaction and event; the caller has checked the balance. */
  move(wallet: WalletRec, signed: Dec, reference: string, narration: string, metadata: Record<string, unknown>): TransactionRec {
    const before = wallet.balance;
    wallet.balance = before.plus(signed);
    const tx: TransactionRec = {
      id: newId(),
      businessId: wallet.businessId,
      walletId: wallet.walletId,
      currency: wallet.currency,
      type: signed.isNegative() ? 'DEBIT' : 'CREDIT',
      amount: signed,
      balanceBefore: before,
      balanceAfter: wallet.balance,
      reference,
      narration,
      metadata,
      createdAt: this.clock.iso(),
    };
    this.transactions.push(tx);
    const debit = tx.type === 'DEBIT';
    this.publish({
      eventType: debit ? 'wallet.debited' : 'wallet.credited',
      businessId: wallet.businessId,
      // Spec §6: amount positive, transactionType cr/dr; balance and totalBalance "not shown": both the balance after (no holds).
      data: {
        businessId: wallet.businessId,
        amount: toApi(signed.abs()),
        currency: wallet.currency,
        transactionId: tx.id,
        createdAt: tx.createdAt,
        transactionType: debit ? 'dr' : 'cr',
        reference,
        narration,
        balance: toApi(wallet.balance),
        totalBalance: toApi(wallet.balance),
      },
    });
    return tx;
  }
}

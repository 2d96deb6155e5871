// The swap the plan proposes, priced and chosen offline (src/engine/swap.ts): the amounts in both
// pair directions and in currencies of 0, 2 and 3 decimals, checked against the sandbox's own
// conversion (written from the spec separately), the funding wallet chosen, and each refusal.
import { describe, expect, it } from 'vitest';
import { buildPlan } from '../../src/engine/batch-plan.ts';
import type { PreflightResult } from '../../src/engine/preflight.ts';
import { foldJournal } from '../../src/journal/lines.ts';
import { Dec } from '../../src/money.ts';
import { batchOf, payoutRow, preflightOf } from './helpers.ts';
import { convert } from '../../src/sandbox/corridors.ts';
import type { PairRec } from '../../src/sandbox/store.ts';
import { priceSwap, proposeSwaps, swapMargin, swapReference, type SwapPair, type SwapWallet } from '../../src/engine/swap.ts';

const need = (currency: string, total: string, feeMargin = '0') => ({ currency, total: new Dec(total), feeMargin: new Dec(feeMargin) });
const wallet = (currency: string, balance: string): SwapWallet => ({ walletId: `w-${currency}`, currency, balance: new Dec(balance) });
const pair = (baseCurrency: string, quoteCurrency: string, rate: string, enabled = true): SwapPair => ({
  baseCurrency,
  quoteCurrency,
  rate,
  enabled,
});

/** The sandbox's conversion of a swap (src/sandbox/routes/swaps.ts): what the service checks amountToBeSent against. */
function sandboxConvert(p: SwapPair, from: string, to: string, amount: Dec): Dec {
  const rec = { baseCurrency: p.baseCurrency, quoteCurrency: p.quoteCurrency, rate: new Dec(String(p.rate)), enabled: true } as PairRec;
  return convert({ kind: p.baseCurrency === from ? 'direct' : 'reverse', pair: rec }, amount, to);
}

describe('swapMargin', () => {
  it('is 1% of the shortfall rounded up to the minor unit, at least one minor unit', () => {
    expect(swapMargin(new Dec('1000.20'), 'USD').toFixed()).toBe('10.01');
    expect(swapMargin(new Dec('0.50'), 'USD').toFixed()).toBe('0.01');
    expect(swapMargin(new Dec('12345'), 'JPY').toFixed()).toBe('124');
    expect(swapMargin(new Dec('0.010'), 'KWD').toFixed()).toBe('0.001');
  });
});

describe('priceSwap', () => {
  const cases: [string, string, SwapPair][] = [
    ['EUR', 'USD', pair('USD', 'EUR', '0.9215')], // the source is the quote: ÷ rate
    ['USD', 'EUR', pair('USD', 'EUR', '0.9215')], // the source is the base: × rate
    ['USD', 'JPY', pair('USD', 'JPY', '151.37')],
    ['JPY', 'USD', pair('USD', 'JPY', '151.37')],
    ['USD', 'KWD', pair('KWD', 'USD', '3.2531')],
    ['KWD', 'EUR', pair('EUR', 'KWD', '0.3337')],
  ];
  it.each(cases)(
    '%s -> %s: the target priced exactly, rounded up in the source; amountToBeSent the conversion the service makes of it',
    (from, to, p) => {
      const digits = { USD: 2, EUR: 2, JPY: 0, KWD: 3 }[to]!;
      const fromDigits = { USD: 2, EUR: 2, JPY: 0, KWD: 3 }[from]!;
      const rate = new Dec(String(p.rate));
      for (const t of ['1', '7.77', '1010.21', '123456.78', '0.05', '99999.99']) {
        const target = new Dec(t).toDecimalPlaces(digits, Dec.ROUND_UP).plus(new Dec(10).pow(-digits));
        const { swapAmount, amountToBeSent } = priceSwap(target, from, to, rate, p.baseCurrency === from);
        expect(swapAmount.decimalPlaces()).toBeLessThanOrEqual(fromDigits);
        expect(amountToBeSent.decimalPlaces()).toBeLessThanOrEqual(digits);
        expect(amountToBeSent.greaterThanOrEqualTo(target)).toBe(true);
        expect(sandboxConvert(p, from, to, swapAmount).equals(amountToBeSent)).toBe(true);
        // one minor unit less falls short before rounding: swapAmount is the target's exact price, rounded up
        const less = swapAmount.minus(new Dec(10).pow(-fromDigits));
        expect((p.baseCurrency === from ? less.times(rate) : less.dividedBy(rate)).lessThan(target)).toBe(true);
      }
    },
  );
});

describe('proposeSwaps', () => {
  const B = (currency: string) => swapReference(['R1', 'R2'], currency);
  const usdShort = [need('USD', '1100.00', '0.20')];
  const wallets = [wallet('USD', '100.00'), wallet('EUR', '500000.00')];

  it('prices the shortfall plus the margin from the EUR wallet, with both balances before, after the swap and after the batch', () => {
    const { swaps, refusals } = proposeSwaps(B, usdShort, wallets, [pair('USD', 'EUR', '0.9215')]);
    expect(refusals).toEqual([]);
    expect(swaps).toEqual([
      {
        reference: B('USD'),
        currency: 'USD',
        fromCurrency: 'EUR',
        sourceWalletId: 'w-EUR',
        destinationWalletId: 'w-USD',
        // shortfall 1,100.00 + 0.20 - 100.00 = 1,000.20; margin 10.01; 1,010.21 × 0.9215 = 930.908515 -> 930.91
        swapAmount: '930.91',
        amountToBeSent: '1010.21',
        pair: { baseCurrency: 'USD', quoteCurrency: 'EUR', rate: '0.9215' },
        shortfall: '1000.20',
        margin: '10.01',
        balances: [
          { currency: 'EUR', before: '500000.00', afterSwap: '499069.09', afterBatch: '499069.09' },
          { currency: 'USD', before: '100.00', afterSwap: '1110.21', afterBatch: '10.21' },
        ],
      },
    ]);
  });

  it('proposes nothing for a wallet that covers its rows, even short of the fee margin', () => {
    expect(proposeSwaps(B, [need('USD', '100.00', '5')], wallets, [pair('USD', 'EUR', '0.9215')])).toEqual({ swaps: [], refusals: [] });
  });

  it("chooses the wallet with the most left over once its own rows are paid; --swap-from names another; a wallet's own rows come first", () => {
    const three = [...wallets, wallet('GBP', '2000.00')];
    const pairs = [pair('USD', 'EUR', '0.9215'), pair('USD', 'GBP', '0.785')];
    expect(proposeSwaps(B, usdShort, three, pairs).swaps[0]!.fromCurrency).toBe('EUR');
    // EUR's own rows leave it 500 to spare: GBP pays
    const eurRows = [...usdShort, need('EUR', '499500.00')];
    expect(proposeSwaps(B, eurRows, three, pairs).swaps[0]).toMatchObject({
      fromCurrency: 'GBP',
      swapAmount: '793.02', // 1,010.21 × 0.785 = 793.014... -> 793.02
      amountToBeSent: '1010.22', // 793.02 / 0.785 = 1,010.216... -> 1,010.22
    });
    expect(proposeSwaps(B, usdShort, three, pairs, { from: 'GBP' }).swaps[0]!.fromCurrency).toBe('GBP');
  });

  it('JPY short, funded from USD at a direct pair; KWD (3 decimals) at a reverse one; one wallet funds two currencies only if it can pay both', () => {
    const needs = [need('JPY', '51000'), need('KWD', '100.000', '0.020')];
    const pairs = [pair('USD', 'JPY', '151.37'), pair('KWD', 'USD', '3.2531')];
    const r = proposeSwaps(B, needs, [wallet('JPY', '1000'), wallet('USD', '700.00'), wallet('KWD', '0.000')], pairs);
    // JPY: 50,000 + 500 = 50,500 / 151.37 = 333.6196... -> 333.62 USD, × 151.37 = 50,500.0594 -> 50,500 JPY
    expect(r.swaps[0]).toMatchObject({ currency: 'JPY', fromCurrency: 'USD', shortfall: '50000', margin: '500' });
    expect(r.swaps[0]).toMatchObject({ swapAmount: '333.62', amountToBeSent: '50500' });
    // KWD: 100.020 + 1.001 = 101.021 × 3.2531 = 328.6314... -> 328.64 USD, / 3.2531 = 101.0236... -> 101.024 KWD
    expect(r.swaps[1]).toMatchObject({ currency: 'KWD', fromCurrency: 'USD', swapAmount: '328.64', amountToBeSent: '101.024' });
    expect(r.swaps[1]!.balances[0]).toEqual({ currency: 'USD', before: '700.00', afterSwap: '37.74', afterBatch: '37.74' });
    const tight = proposeSwaps(B, needs, [wallet('JPY', '1000'), wallet('USD', '500.00'), wallet('KWD', '0.000')], pairs);
    expect(tight.swaps.map((s) => s.currency)).toEqual(['JPY']);
    expect(tight.refusals[0]).toMatchObject({ currency: 'KWD', reason: expect.stringContaining('the USD wallet has 166.38 USD to spare') });
  });

  it('refuses, saying what is missing: no enabled pair, a wallet without enough, --swap-from without a pair or without enough', () => {
    const none = proposeSwaps(B, usdShort, wallets, [pair('USD', 'EUR', '0.9215', false)]);
    expect(none.swaps).toEqual([]);
    expect(none.refusals).toEqual([
      { currency: 'USD', shortfall: '1000.20', reason: expect.stringContaining('no wallet of the business has an enabled pair with USD') },
    ]);
    const poor = proposeSwaps(B, usdShort, [wallet('USD', '100.00'), wallet('EUR', '900.00')], [pair('USD', 'EUR', '0.9215')]);
    expect(poor.refusals[0]!.reason).toBe(
      'no wallet with an enabled pair to USD can pay the swap: the EUR wallet has 900.00 EUR to spare once its own rows are paid, the swap needs 930.91 EUR',
    );
    const from = (f: string) => proposeSwaps(B, usdShort, [...wallets, wallet('GBP', '10.00')], [pair('USD', 'GBP', '0.785')], { from: f });
    expect(from('EUR').refusals[0]!.reason).toContain('--swap-from EUR: no EUR wallet with a balance and an enabled EUR/USD pair');
    expect(from('GBP').refusals[0]!.reason).toContain('--swap-from GBP: the GBP wallet has 10.00 GBP to spare');
    expect(from('USD').refusals[0]!.reason).toBe('--swap-from USD names the short currency itself');
  });
});

describe('the plan with its swap (buildPlan)', () => {
  // GBP rows of 60 + 50 + 30 against a GBP wallet of 100 and a EUR wallet of 1,000 with an enabled EUR/GBP pair
  const batch = batchOf([payoutRow(2, '60'), payoutRow(3, '50'), payoutRow(4, '30')]);
  const w = (currency: string, balance: number) => ({ walletId: `w-${currency}`, currency, balance }) as PreflightResult['wallets'][number];
  const pf = (gbp = 100, eur = 1000) =>
    preflightOf({
      wallets: [w('GBP', gbp), w('EUR', eur)],
      pairs: [{ currencyPairId: 'p1', baseCurrency: 'EUR', quoteCurrency: 'GBP', rate: 0.8518, enabled: true }],
    });
  const plan = (o: Parameters<typeof buildPlan>[4], p = pf()) => buildPlan(batch, p, foldJournal([]), 'sandbox', o);
  const options = { allowPartial: false, mergeDocuments: false };

  it('proposes it without counting it (run without --fund-by-swap); counts it under --fund-by-swap, --allow-partial leaving out nothing', () => {
    const proposed = plan(options);
    expect(proposed).toMatchObject({ shortfall: true, fundedBySwaps: false, toSend: [2, 3, 4], swapRefusals: [] });
    // 40.00 + margin 0.40 = 40.40 GBP / 0.8518 = 47.4289... -> 47.43 EUR, × 0.8518 = 40.400874 -> 40.40 GBP
    expect(proposed.swaps).toEqual([expect.objectContaining({ fromCurrency: 'EUR', swapAmount: '47.43', amountToBeSent: '40.40' })]);
    expect(proposed.currencies[0]).toMatchObject({ balance: '100.00', balanceAfter: '-40.00', shortfall: '40.00' });
    const funded = plan({ ...options, allowPartial: true, fundBySwap: true });
    expect(funded).toMatchObject({ shortfall: false, fundedBySwaps: true, toSend: [2, 3, 4] });
    expect(funded.currencies[0]).toEqual(expect.objectContaining({ balance: '100.00', swap: '+40.40', balanceAfter: '0.40' }));
    expect(funded.currencies[0]!.shortfall).toBeUndefined();
  });

  it("a plan file's swap is used as approved while its currency is short, and refused when it no longer fits", () => {
    const approved = plan({ ...options, fundBySwap: true }).swaps;
    expect(plan({ ...options, approvedSwaps: approved })).toMatchObject({ shortfall: false, swaps: approved, fundedBySwaps: true });
    // the swap was made already (a resumed run): its wallet is funded, nothing to send again
    expect(plan({ ...options, approvedSwaps: approved }, pf(140.4, 952.57))).toMatchObject({ shortfall: false, swaps: [] });
    const refused = (o: Parameters<typeof plan>[0], p?: PreflightResult) => plan(o, p).swapRefusals.map((r) => r.reason);
    expect(refused({ ...options, approvedSwaps: [] })).toEqual([
      'the plan holds no swap for GBP: make a new plan (it proposes one) and have it approved',
    ]);
    expect(refused({ ...options, approvedSwaps: [{ ...approved[0]!, reference: swapReference(['another payment'], 'GBP') }] })).toEqual([
      expect.stringMatching(/^the plan's swap for GBP is not this batch's/),
    ]);
    expect(refused({ ...options, approvedSwaps: approved }, pf(100, 47))).toEqual([
      "the EUR wallet no longer pays the plan's swap of 47.43 EUR once its own rows are paid",
    ]);
    expect(plan({ ...options, approvedSwaps: approved }, pf(100, 47))).toMatchObject({ shortfall: true });
  });

  it("a plan file's swap runs under the plan's rows alone (run --plan), a row of its currency paid before it was planned", () => {
    const payout = { id: 'p-2', status: 'PENDING', sourceAmount: '60', sourceCurrency: 'GBP', destinationCurrency: 'GBP', documents: 0 };
    const paid = foldJournal([
      { t: 'initiating', ref: 'R-2', attempt: 1, key: 'k2', row: 2, body: '{}', at: '2026-01-01T00:00:00Z' },
      { t: 'created', ref: 'R-2', attempt: 1, key: 'k2', requestId: 'q', payout, at: '2026-01-01T00:00:00Z' },
    ]);
    const planned = buildPlan(batch, pf(20), paid, 'sandbox', { ...options, fundBySwap: true });
    expect(planned).toMatchObject({ toSend: [3, 4], swapRefusals: [] });
    const run = buildPlan(batch, pf(20), paid, 'sandbox', { ...options, approvedSwaps: planned.swaps, only: new Set(planned.toSend) });
    expect(run).toMatchObject({ swaps: planned.swaps, swapRefusals: [], shortfall: false });
  });

  it("a plan file's two swaps from one wallet: the second is refused when the wallet now pays either but not both", () => {
    const two = batchOf([payoutRow(2, '60'), payoutRow(3, '50'), payoutRow(4, '30'), payoutRow(5, '100', 'USD')]);
    const pairs = [
      { currencyPairId: 'p1', baseCurrency: 'EUR', quoteCurrency: 'GBP', rate: 0.8518, enabled: true },
      { currencyPairId: 'p2', baseCurrency: 'USD', quoteCurrency: 'EUR', rate: 0.9215, enabled: true },
    ];
    const at = (eur: number) => preflightOf({ wallets: [w('GBP', 100), w('USD', 0), w('EUR', eur)], pairs });
    const approved = buildPlan(two, at(1000), foldJournal([]), 'sandbox', { ...options, fundBySwap: true }).swaps;
    // 47.43 EUR for GBP, 93.08 EUR for USD: 140.51 EUR together
    expect(approved.map((s) => `${s.swapAmount} ${s.fromCurrency}`)).toEqual(['47.43 EUR', '93.08 EUR']);
    const now = buildPlan(two, at(100), foldJournal([]), 'sandbox', { ...options, approvedSwaps: approved });
    expect(now.swaps.map((s) => s.currency)).toEqual(['GBP']);
    expect(now.swapRefusals).toEqual([
      expect.objectContaining({ currency: 'USD', reason: expect.stringMatching(/^the EUR wallet no longer pays/) }),
    ]);
    expect(now.shortfall).toBe(true);
  });

  it('a currency short again after its swap was made (the wallet drained since): no second swap planned nor counted, refused saying why', () => {
    const approved = plan({ ...options, fundBySwap: true }).swaps;
    const swap = { id: 'sw-1', status: 'PROCESSING' };
    const made = foldJournal([
      { t: 'swap', phase: 'created', currency: 'GBP', reference: 'R', attempt: 1, key: 'k', swap, at: '2026-01-01T00:00:00Z' },
    ]);
    for (const o of [
      { ...options, fundBySwap: true },
      { ...options, approvedSwaps: approved },
    ]) {
      const p = buildPlan(batch, pf(), made, 'sandbox', o);
      expect(p).toMatchObject({ swaps: [], shortfall: true });
      expect(p.swapRefusals).toEqual([
        {
          currency: 'GBP',
          shortfall: '40.00',
          reason: expect.stringMatching(/^the batch's GBP swap sw-1 \(PROCESSING\) was made by an earlier run/),
        },
      ]);
    }
  });
});

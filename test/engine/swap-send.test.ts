// The pure rules of the swap's send step (swap-send.ts): the price at the live rate within the
// tolerance of the approved one, the body's fixed text, and which answer is the rate moving.
import { describe, expect, it } from 'vitest';
import { PayoutApiError } from '../../src/client/errors.ts';
import { isStaleRate, priceAtLiveRate, swapBody } from '../../src/engine/swap-send.ts';
import type { SwapProposal } from '../../src/engine/swap.ts';
import { Dec } from '../../src/money.ts';

/** 1,000 EUR funding JPY, the pair EUR/JPY at 160 (JPY per EUR): EUR is the base, so × rate, to 0 decimals. */
const proposal: SwapProposal = {
  reference: 'PBS-0123456789abcdef01234567-JPY',
  currency: 'JPY',
  fromCurrency: 'EUR',
  sourceWalletId: 'w-eur',
  destinationWalletId: 'w-jpy',
  swapAmount: '1000.01',
  amountToBeSent: '160002',
  pair: { baseCurrency: 'EUR', quoteCurrency: 'JPY', rate: '160' },
  shortfall: '158000',
  margin: '1580',
  balances: [],
};
const ONE_PERCENT = new Dec('0.01');
const pairs = (rate: string | number) => [
  { baseCurrency: 'JPY', quoteCurrency: 'EUR', rate: 0.00625 }, // the reverse pair, listed too: not the approved one
  { baseCurrency: 'EUR', quoteCurrency: 'JPY', rate },
];

describe('priceAtLiveRate', () => {
  it('converts the approved swapAmount at the live rate of the approved pair, rounded half-up to the minor units', () => {
    expect(priceAtLiveRate(proposal, pairs(160), ONE_PERCENT)).toEqual({ amountToBeSent: new Dec('160002'), rate: new Dec(160) });
    // moved 0.5%: recomputed (1000.01 × 160.8 = 160801.608 → 160802)
    expect(priceAtLiveRate(proposal, pairs('160.8'), ONE_PERCENT)).toMatchObject({ amountToBeSent: new Dec('160802') });
  });

  it('refuses a rate moved more than the tolerance either way, a pair gone, and a credit below the shortfall', () => {
    expect(priceAtLiveRate(proposal, pairs('161.7'), ONE_PERCENT)).toEqual({
      refused:
        'the EUR/JPY rate moved from 160 (approved) to 161.7 (live), more than the tolerance of 1%: the JPY swap was not sent; ' +
        'plan again, the approvers signed a rate',
    });
    expect(priceAtLiveRate(proposal, pairs('158.3'), ONE_PERCENT)).toHaveProperty('refused');
    expect(priceAtLiveRate(proposal, pairs('158.3'), new Dec('0.02'))).toHaveProperty('amountToBeSent');
    expect(priceAtLiveRate(proposal, pairs(160).slice(0, 1), ONE_PERCENT)).toHaveProperty(
      'refused',
      expect.stringMatching(/not enabled any more/),
    );
    expect(priceAtLiveRate({ ...proposal, shortfall: '160500' }, pairs('160.2'), ONE_PERCENT)).toHaveProperty(
      'refused',
      expect.stringMatching(/would credit 160202 JPY, less than the shortfall of 160500/),
    );
  });
});

describe('swapBody and isStaleRate', () => {
  it('writes the fields of spec §4.7 in a fixed order, amounts as JSON numbers', () => {
    expect(swapBody(proposal, new Dec('160002'))).toBe(
      '{"sourceWalletId":"w-eur","destinationWalletId":"w-jpy","swapAmount":1000.01,"swapCurrency":"EUR",' +
        '"amountToBeSent":160002,"currencyToBeSent":"JPY","reference":"PBS-0123456789abcdef01234567-JPY"}',
    );
  });

  it("takes only the service's code-less 400 'Invalid payout amount' for the rate moving", () => {
    const err = (status: number, message: string, code?: string) =>
      new PayoutApiError({
        kind: 'http',
        status,
        code,
        message,
        outcome: 'definitive',
        route: 'swap',
        method: 'POST',
        path: '/swap',
        requestId: 'r',
      });
    expect(isStaleRate(err(400, 'swap (POST /swap): 400: Invalid payout amount [x-request-id r]'))).toBe(true);
    expect(isStaleRate(err(400, '400 INSUFFICIENT_FUNDS: Invalid payout amount', 'INSUFFICIENT_FUNDS'))).toBe(false);
    expect(isStaleRate(err(502, '502: Invalid payout amount'))).toBe(false);
    expect(isStaleRate(new Error('Invalid payout amount'))).toBe(false);
  });
});

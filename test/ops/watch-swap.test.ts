// A watch's `fundBySwap` (issue 28): the engine's --fund-by-swap with a --max-swap per named
// currency, and a swap for any other currency refused before anything is sent.
import { describe, expect, it } from 'vitest';
import { decideApproval } from '../../src/engine/guards.ts';
import { WatchConfig, swapRunOptions } from '../../src/watch/config.ts';
import type { SwapProposal } from '../../src/engine/swap.ts';
import { Dec } from '../../src/money.ts';
import { planFixture } from '../engine/plan-fixture.ts';

const swap = (currency: string, amountToBeSent: string) =>
  ({ currency, amountToBeSent, swapAmount: '1.00', fromCurrency: 'EUR' }) as SwapProposal;
const config = (o: object) => WatchConfig.parse({ environment: 'sandbox', ...o });

describe('watch fundBySwap', () => {
  it('is --fund-by-swap with --max-swap per currency; a swap for a currency not named is refused', () => {
    const cfg = config({ fundBySwap: { USD: '5000.00' } });
    const o = swapRunOptions(cfg, () => undefined);
    expect(o).toMatchObject({ fundBySwap: true, maxSwaps: [{ currency: 'USD', amount: new Dec('5000') }] });
    const guard = (swaps: SwapProposal[]) => {
      const d = decideApproval({
        yes: true,
        interactive: false,
        allowPartial: false,
        expectTotals: [],
        maxTotals: [],
        ...o,
        plan: planFixture({ swaps, fundedBySwaps: true }),
        payable: { rows: 2, amounts: new Map(), withFees: new Map() },
        env: 'sandbox',
      });
      return d.ok ? [] : d.reasons;
    };
    expect(guard([swap('USD', '4999.99')])).toEqual([]);
    expect(guard([swap('USD', '5000.01')])).toEqual([expect.stringMatching(/^--max-swap USD:5000, but the swap credits 5000.01 USD/)]);
    expect(guard([swap('GBP', '10.00')])).toEqual(["the plan funds GBP by a swap, but the watch's fundBySwap names only USD"]);
  });

  it('without it: no swap, the account policy passed on as it was; a malformed amount is refused', () => {
    const policy = () => 'policy';
    expect(swapRunOptions(config({}), policy)).toEqual({ policy });
    expect(() => config({ fundBySwap: { USD: '5k' } })).toThrow(/an amount/);
  });
});

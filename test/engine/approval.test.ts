import { describe, expect, it } from 'vitest';
import { controlTotalNotes, controlTotalReasons, decideApproval, parseMoneyFlag, type ApprovalInput } from '../../src/engine/guards.ts';
import { planFixture, swapFixture } from './plan-fixture.ts';
import { Dec } from '../../src/money.ts';

const plan = planFixture;
const input = (over: Partial<ApprovalInput> = {}): ApprovalInput => ({
  plan: plan(),
  payable: { rows: 2, amounts: new Map([['USD', new Dec('30.00')]]), withFees: new Map([['USD', new Dec('40.00')]]) },
  env: 'sandbox',
  yes: true,
  interactive: false,
  allowPartial: false,
  expectTotals: [],
  maxTotals: [],
  ...over,
});

describe('approval guards (pure)', () => {
  it('--yes with matching control totals passes without a confirmation; a terminal without --yes asks', () => {
    expect(
      decideApproval(
        input({ expectRows: 2, expectTotals: [parseMoneyFlag('usd:30', 'x')], maxTotals: [parseMoneyFlag('USD:40.00', 'x')] }),
      ),
    ).toEqual({ ok: true, confirm: false });
    expect(decideApproval(input({ yes: false, interactive: true }))).toEqual({ ok: true, confirm: true });
  });

  it('refuses: production from $PAYOUT_ENV only, no terminal and no --yes, totals off by a cent, a currency not named, a cap exceeded', () => {
    const r = decideApproval(
      input({
        env: 'production',
        envFlag: undefined,
        yes: false,
        expectRows: 3,
        expectTotals: [parseMoneyFlag('EUR:1', 'x'), parseMoneyFlag('USD:30.01', 'x')],
        maxTotals: [parseMoneyFlag('USD:39.99', 'x')],
      }),
    );
    expect(r.ok).toBe(false);
    const reasons = (r as { reasons: string[] }).reasons.join('\n');
    expect(reasons).toMatch(/production needs --env production/);
    expect(reasons).toMatch(/pass --yes/);
    expect(reasons).toMatch(/--expect-rows 3, but the batch pays 2 rows/);
    expect(reasons).toMatch(/--expect-total USD:30.01, but the batch pays 30.00 USD/);
    expect(reasons).toMatch(/--expect-total EUR:1, but the batch pays nothing in EUR/);
    expect(reasons).toMatch(/--max-total USD:39.99/);
    expect(decideApproval(input({ env: 'production', envFlag: 'production' })).ok).toBe(true);
  });

  it('a currency the batch pays that --expect-total leaves out is a note, and a refusal only under --strict-totals (issue 31)', () => {
    const payable = {
      rows: 3,
      amounts: new Map([
        ['USD', new Dec('103075.00')],
        ['EUR', new Dec('8200.50')],
      ]),
      withFees: new Map([
        ['USD', new Dec('103200.00')],
        ['EUR', new Dec('8215.50')],
      ]),
    };
    const totals = { expectRows: 3, expectTotals: [parseMoneyFlag('USD:103075.00', 'x')], maxTotals: [], payable };
    expect(controlTotalReasons(totals)).toEqual([]);
    const notes = controlTotalNotes(totals);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(
      /^--expect-total names no EUR, and the batch pays 8,?200\.50 EUR: not checked \(--strict-totals refuses it\)$/,
    );
    expect(decideApproval(input({ ...totals })).ok).toBe(true);
    const strict = controlTotalReasons({ ...totals, strictTotals: true });
    expect(strict).toHaveLength(1);
    expect(strict[0]).toMatch(/^--expect-total names no EUR, and the batch pays 8,?200\.50 EUR \(--strict-totals\)$/);
    expect(controlTotalNotes({ ...totals, strictTotals: true })).toEqual([]);
    expect(decideApproval(input({ ...totals, strictTotals: true })).ok).toBe(false);
    // a named currency off by a cent refuses either way; no --expect-total at all notes nothing
    const wrong = { ...totals, expectTotals: [parseMoneyFlag('USD:103075.01', 'x')] };
    expect(controlTotalReasons(wrong)).toHaveLength(1);
    expect(controlTotalNotes({ ...totals, expectTotals: [] })).toEqual([]);
  });

  it('a shortfall always refuses; a corridor not enabled refuses unless --allow-partial', () => {
    expect(
      decideApproval(
        input({
          plan: plan({
            shortfall: true,
            currencies: [
              {
                currency: 'USD',
                rows: 2,
                amount: '30.00',
                estimatedFees: '10.00',
                total: '40.00',
                balance: '35.00',
                balanceAfter: '-5.00',
                shortfall: '5.00',
              },
            ],
          }),
        }),
      ).ok,
    ).toBe(false);
    const blocked = plan({
      corridorBlocked: true,
      corridorsNotEnabled: [{ sourceCurrency: 'USD', destinationCurrency: 'GHS', destinationCountryCode: 'GHA', pairId: 'p1', rows: 1 }],
    });
    const r = decideApproval(input({ plan: blocked }));
    expect(r.ok).toBe(false);
    expect((r as { reasons: string[] }).reasons[0]).toMatch(/currency-pairs\/\{currencyPairId\}\/toggle|--enable-pairs/);
    expect(decideApproval(input({ plan: blocked, allowPartial: true })).ok).toBe(true);
    // a service that lists only enabled pairs (spec §4.9) gave no id: --enable-pairs cannot toggle it, so it is not offered
    const unlisted = decideApproval(
      input({ plan: { ...blocked, corridorsNotEnabled: [{ ...blocked.corridorsNotEnabled[0]!, pairId: undefined }] } }),
    );
    expect((unlisted as { reasons: string[] }).reasons[0]).toMatch(
      /USD->GHS \(GHA, 1 row\): the service lists no id for this pair .*dashboard/,
    );
    expect((unlisted as { reasons: string[] }).reasons[0]).not.toMatch(/--enable-pairs/);
  });

  it('a swap that funds the batch: --max-swap caps what it credits, --swap-from must name its wallet; a proposed swap is only a hint', () => {
    const swap = swapFixture();
    const funded = plan({ swaps: [swap], fundedBySwaps: true });
    const cap = (amount: string) => decideApproval(input({ plan: funded, maxSwaps: [parseMoneyFlag(`USD:${amount}`, 'x')] }));
    expect(cap('1010.21')).toEqual({ ok: true, confirm: false });
    expect(cap('1010.20')).toEqual({
      ok: false,
      reasons: ['--max-swap USD:1010.2, but the swap credits 1010.21 USD for 930.91 EUR from the EUR wallet'],
    });
    expect(decideApproval(input({ plan: funded, maxSwaps: [parseMoneyFlag('EUR:1', 'x')] })).ok).toBe(true);
    expect(decideApproval(input({ plan: funded, swapFrom: 'GBP' }))).toEqual({
      ok: false,
      reasons: ['--swap-from GBP, but the swap credits 1010.21 USD for 930.91 EUR from the EUR wallet'],
    });
    const usd = { currency: 'USD', rows: 2, amount: '30.00', estimatedFees: '10.00', total: '1100.00', balance: '100.00' };
    const short = plan({ shortfall: true, swaps: [swap], currencies: [{ ...usd, balanceAfter: '-1000.00', shortfall: '1000.00' }] });
    const r = decideApproval(
      input({ plan: short, maxSwaps: [parseMoneyFlag('USD:1', 'x')], swapCommand: '`payout-batch run b.csv --fund-by-swap`' }),
    );
    expect(r).toEqual({
      ok: false,
      reasons: [
        'insufficient funds: USD short by 1000.00 (balance 100.00, batch 1100.00). Top up the wallet, fund it by the swap the plan proposes (`payout-batch run b.csv --fund-by-swap`), or pass --allow-partial to send the rows that fit',
      ],
    });
  });

  it('money flags are CUR:AMOUNT in exact decimals', () => {
    expect(parseMoneyFlag('GBP:1234.56', '--expect-total').amount.toFixed()).toBe('1234.56');
    expect(() => parseMoneyFlag('1234.56', '--expect-total')).toThrow(/CUR:AMOUNT/);
  });
});

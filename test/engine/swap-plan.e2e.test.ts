// The swap a plan proposes, over the real CLI and a sandbox over HTTP: a short USD wallet and a
// full EUR wallet with an enabled USD/EUR pair. `plan` shows one swap (text and --json), `plan
// --out` writes it and approvers sign it; the signed plan runs with one swap and reconcile ties it
// out (last: it funds the wallet); a run refused by the swap's guards, without an enabled
// pair, or without --fund-by-swap sends nothing: no swap, no initiate.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newKeyPair } from '../../src/approvals/approvals-file.ts';
import { loadPlan, planPayload } from '../../src/approvals/payload.ts';
import { Dec, groupThousands as g } from '../../src/money.ts';
import { defaultSeed, startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { KEY, approveAs, cleanEnv, cliIn, runMain, tempDirs, writeBatch } from './helpers.ts';

const NO_PAIR_KEY = 'sk_test_swap_nopair';
const dirs = tempDirs('pb-swap-plan-');
let sb: LocalSandbox;
let dir: string;
let cli: ReturnType<typeof cliIn>['cli'];
/** The same by main() in this process: the plans and approvals that set the runs up, and the refusals. */
let inProcess: ReturnType<typeof cliIn>['inProcess'];

beforeAll(async () => {
  const wallets = [
    { currency: 'USD', balance: '100.00' },
    { currency: 'EUR', balance: '500000.00' },
  ];
  sb = await startSandbox({
    shapes: TEST_SHAPES,
    rateLimitPerSecond: 1000,
    monthlyQuota: null,
    seed: {
      countries: defaultSeed().countries,
      businesses: [
        { name: 'Acme', keys: [KEY], wallets, pairs: [{ baseCurrency: 'USD', quoteCurrency: 'EUR', rate: '0.9215' }] },
        {
          name: 'No pair',
          keys: [NO_PAIR_KEY],
          wallets,
          pairs: [{ baseCurrency: 'USD', quoteCurrency: 'EUR', rate: '0.9215', enabled: false }],
        },
      ],
    },
  });
  dir = await dirs.make();
  // three USD withdrawals of 400 to 402 (plus fees): the USD wallet's 100.00 is short
  await writeBatch(dir, 'payroll.csv', { rows: 3, currencies: ['USD'], amount: (i) => `${400 + i}.00` });
  ({ cli, inProcess } = cliIn(dir, sb.url));
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

const sent = () => sb.requestLog().filter((r) => r.route === 'swap' || r.route === 'initiate');

it('plan proposes one swap from the EUR wallet, priced so the service converts it exactly; the pairs read once', async () => {
  const json = await inProcess('plan', 'payroll.csv', '--json', '--no-report');
  expect(json.code, json.stderr).toBe(0);
  const plan = JSON.parse(json.stdout);
  expect(plan.swaps).toHaveLength(1);
  // the run's swap costs the swaps list, the pairs, the swap and the wallets after it
  expect(plan.requests).toMatchObject({ swapRequests: 4 });
  const s = plan.swaps[0];
  expect(s).toMatchObject({ currency: 'USD', fromCurrency: 'EUR', pair: { baseCurrency: 'USD', quoteCurrency: 'EUR', rate: '0.9215' } });
  expect(s.reference).toMatch(/^PBS2-[0-9a-f]{24}-USD$/);
  const usd = plan.currencies.find((c: { currency: string }) => c.currency === 'USD');
  // the shortfall is the rows' total and fee margin less the balance; the credit covers it and the margin
  expect(new Dec(s.shortfall).equals(new Dec(usd.total).plus(usd.feeMargin ?? 0).minus('100.00'))).toBe(true);
  expect(new Dec(s.amountToBeSent).greaterThanOrEqualTo(new Dec(s.shortfall).plus(s.margin))).toBe(true);
  // spec §4.7: the amount credited is the swap amount converted at the pair (EUR is the quote: ÷ rate), half-up to the cent
  expect(new Dec(s.swapAmount).dividedBy('0.9215').toDecimalPlaces(2).equals(new Dec(s.amountToBeSent))).toBe(true);
  expect(usd).toMatchObject({ balance: '100.00', swap: `+${s.amountToBeSent}` });
  expect(new Dec(usd.balanceAfter).greaterThanOrEqualTo(0)).toBe(true);

  expect(sb.requestLog().filter((r) => r.route === 'pairs')).toHaveLength(1);
  expect(sent()).toEqual([]);
});

it('plan --out shows the swap and holds it; the payload two approvers sign covers it', async () => {
  const planned = await inProcess('plan', 'payroll.csv', '--out', 'payroll.plan.json', '--prepared-by', 'Dan', '--no-report');
  expect(planned.code, planned.stderr).toBe(0);
  const file = JSON.parse(readFileSync(join(dir, 'payroll.plan.json'), 'utf8'));
  expect(file.swaps).toHaveLength(1);
  const s = file.swaps[0];
  const swapped = `${g(s.swapAmount)} EUR from the EUR wallet -> ${g(s.amountToBeSent)} USD, at USD/EUR 0.9215 (EUR per USD); shortfall ${g(s.shortfall)} + margin ${g(s.margin)} USD`;
  expect(planned.stdout).toContain(`  swap USD     ${swapped}; balances now -> after the swap -> after the batch: EUR 500,000.00 -> `);
  expect(planned.stdout).toContain(
    'The batch is paid after this swap: `payout-batch run payroll.csv --fund-by-swap`, or `run --plan payroll.plan.json` (approvers sign the swap)',
  );
  expect(sb.requestLog().filter((r) => r.route === 'pairs')).toHaveLength(2); // one per plan
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const approvers: { name: string; publicKey: string }[] = [];
  const pairs = { Alice: newKeyPair(), Bob: newKeyPair() };
  writeFileSync(join(dir, 'approvers.json'), JSON.stringify(Object.entries(pairs).map(([name, k]) => ({ name, publicKey: k.publicKey }))));
  for (const [name, pair] of Object.entries(pairs)) {
    approvers.push({ name, publicKey: pair.publicKey });
    writeFileSync(join(dir, `${name}.pem`), pair.privatePem, { mode: 0o600 });
    // what Alice reads before she signs; Bob's approval is stored as the command stores it
    if (name === 'Bob') {
      await approveAs(join(dir, 'payroll.plan.json'), name, pair.privatePem);
      continue;
    }
    const ok = await runMain(
      ['approve', 'payroll.plan.json', '--as', name, '--key-file', `${name}.pem`, '--approvers', 'approvers.json', '--yes'],
      {
        cwd: dir,
        env,
      },
    );
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`swap first, reference ${s.reference}: ${swapped}`);
  }
  expect(planPayload(loadPlan(join(dir, 'payroll.plan.json'))).swaps).toEqual(file.swaps);
  writeFileSync(join(dir, 'approvers.json'), JSON.stringify(approvers));
  expect(sent()).toEqual([]);
});

it('refused with nothing sent: without --fund-by-swap, over --max-swap, without an enabled pair', async () => {
  const bare = await inProcess('run', 'payroll.csv', '--yes');
  expect(bare.code).toBe(3);
  expect(bare.stderr).toMatch(
    /insufficient funds: USD short by [\d.]+ .*fund it by the swap the plan proposes \(`payout-batch run payroll.csv --fund-by-swap`/,
  );

  const capped = await inProcess('run', 'payroll.csv', '--yes', '--fund-by-swap', '--max-swap', 'USD:1000', '--json');
  expect(capped.code).toBe(3);
  const summary = JSON.parse(capped.stdout);
  expect(summary.refused).toEqual([
    expect.stringMatching(/^--max-swap USD:1000, but the swap credits [\d.]+ USD for [\d.]+ EUR from the EUR wallet$/),
  ]);
  expect(summary.plan.swaps).toEqual([expect.objectContaining({ currency: 'USD', fromCurrency: 'EUR' })]);

  const env = cleanEnv({ PAYOUT_API_KEY: NO_PAIR_KEY, PAYOUT_BATCH_STATE_DIR: join(dir, 'state-nopair') });
  const noPair = await runMain(['run', 'payroll.csv', '--yes', '--fund-by-swap', '--base-url', sb.url, '--rate', '100'], { cwd: dir, env });
  expect(noPair.code).toBe(3);
  expect(noPair.stderr).toContain('No swap can fund it: USD: no wallet of the business has an enabled pair with USD');
  expect(sent()).toEqual([]);
});

it('the plan two approvers signed runs: one swap, then every row paid, once; reconcile ties out with the swap', async () => {
  const signed = ['--plan', 'payroll.plan.json', '--require-approvals', '2', '--approvers', 'approvers.json', '--yes', '--no-report'];
  const run = await cli('run', ...signed, '--json');
  expect(run.code, run.stderr).toBe(0);
  const { summary } = JSON.parse(run.stdout);
  expect(summary.created).toBe(3);
  const swapsSent = () => sb.requestLog().filter((r) => r.route === 'swap');
  expect(swapsSent()).toHaveLength(1);
  expect(summary.swaps).toMatchObject([{ currency: 'USD', sourceCurrency: 'EUR', status: 'PROCESSING' }]);
  // the same approved plan again: the journal knows the swap and the payouts, nothing is sent (by main() in this process)
  const again = await inProcess('run', ...signed);
  expect(again.code, again.stderr).toBe(0);
  expect(swapsSent()).toHaveLength(1);
  expect(sb.requestLog().filter((r) => r.route === 'initiate')).toHaveLength(3);

  // (reconcile's --json in this process: the bin's main())
  const rec = await runMain(['reconcile', join(dir, 'payroll.results.csv'), '--json', '--no-report', '--base-url', sb.url], {
    cwd: dir,
    env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }),
  });
  expect(rec.code, rec.stderr + rec.stdout).toBe(0);
  const j = JSON.parse(rec.stdout);
  expect(j.swaps).toMatchObject([{ currency: 'USD', credit: summary.swaps[0].destinationAmount, ok: true }]);
  expect(j.totals.find((t: { currency: string }) => t.currency === 'EUR')).toMatchObject({
    swapped: `-${summary.swaps[0].sourceAmount}`,
    ok: true,
  });
});

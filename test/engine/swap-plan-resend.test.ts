// A swap an earlier run left of unknown outcome (journalled, never made: the swaps list does not show it), and the
// wallets changed since: `run --plan` resends it only as far as the approved plan goes, and a plan made after it
// proposes it as it was sent, so approvers sign what is resent (swap-send.ts S6; found by test/chaos/swap-fuzz.ts).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { execute, prepareRun } from '../../src/engine/pipeline.ts';
import { Dec } from '../../src/money.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { connectionTo, unattended } from '../ops/helpers.ts';
import { anotherPaymentBody, cliIn, swapFundedSandbox, tempDirs, writeBatch } from './helpers.ts';

const dirs = tempDirs('pb-swap-plan-resend-');
let sb: LocalSandbox;
let dir: string;
let inProcess: ReturnType<typeof cliIn>['inProcess'];
let state: string;

beforeAll(async () => {
  sb = await swapFundedSandbox('700.00');
  dir = await dirs.make();
  // three USD withdrawals of 400 to 402 (plus fees): the USD wallet's 700.00 is short
  await writeBatch(dir, 'payroll.csv', { rows: 3, currencies: ['USD'], amount: (i) => `${400 + i}.00` });
  ({ inProcess, state } = cliIn(dir, sb.url));
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

const swapsMade = () => sb.snapshot().swaps.map((s) => new Dec(String(s.sourceAmount)));
const planOf = async (name: string) => (JSON.parse(await readFile(join(dir, name), 'utf8')) as { swaps: { swapAmount: string }[] }).swaps;

it('run --plan sends no more than the approved swap; a plan made after the unsettled one proposes it as sent', async () => {
  const client = connectionTo(sb).client;
  const usd = (await client.listWallets()).data.find((w) => w.currency === 'USD')!;
  // approved while the wallet held 700.00
  expect((await inProcess('plan', 'payroll.csv', '--out', 'small.plan.json', '--no-report')).code).toBe(0);
  const [small] = await planOf('small.plan.json');
  // another payment of the business takes 600.00; a run with --fund-by-swap prices a larger swap, which never
  // reaches the service (the connection fails both times): journalled, its outcome unknown
  await client.initiate(anotherPaymentBody('600'), { idempotencyKey: 'another-payment-1' });
  const failing: typeof fetch = async (input, init) =>
    (input as string).endsWith('/swap') ? Promise.reject(new TypeError('fetch failed')) : fetch(input, init);
  const first = await execute(
    await prepareRun({
      file: join(dir, 'payroll.csv'),
      conn: connectionTo(sb, failing),
      stateDir: state,
      ...unattended({}, { fundBySwap: true }),
    }),
    { confirmed: true },
  );
  expect(first.kind).not.toBe('done');
  expect(swapsMade()).toEqual([]);
  const journal = await readFile(first.journalPath, 'utf8');
  const sentBody = JSON.parse(
    JSON.parse(journal.split('\n').find((l) => l.includes('"phase":"initiating"') && l.includes('"t":"swap"'))!).body,
  ) as {
    swapAmount: number;
  };
  expect(new Dec(sentBody.swapAmount).greaterThan(small!.swapAmount)).toBe(true);
  // the 600.00 back: the approved plan covers the batch again
  await fetch(`${sb.url}/_sandbox/wallets/${usd.walletId}/credit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ amount: '600.00' }),
  });
  const refused = await inProcess('run', '--plan', 'small.plan.json', '--yes');
  expect(refused.code, refused.stderr).toBe(3);
  expect(refused.stdout + refused.stderr).toMatch(/an earlier run sent .* is not the one planned .*plan again/s);
  expect(swapsMade()).toEqual([]);

  // a new plan shows the swap as it was sent; run, that swap is made once, as approved
  expect((await inProcess('plan', 'payroll.csv', '--out', 'again.plan.json', '--no-report')).code).toBe(0);
  const [again] = await planOf('again.plan.json');
  expect(new Dec(again!.swapAmount).equals(sentBody.swapAmount)).toBe(true);
  const run = await inProcess('run', '--plan', 'again.plan.json', '--yes');
  expect(run.code, run.stderr).toBe(0);
  expect(swapsMade()).toEqual([new Dec(again!.swapAmount)]);
});

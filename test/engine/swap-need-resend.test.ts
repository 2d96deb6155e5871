// retry --resend-failed --fund-by-swap: after the swap, the wallet must hold what the rows sent again need. The
// check counted only rows never sent (phase none), so a refunded row sent again needed nothing, and a wallet
// another payment had emptied meanwhile let the row go, to be refused for funds at the service.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { anotherPaymentBody, cleanEnv, initiates, parseIdempotencyKey, retryResults, runMain, swapFundedSandbox } from './helpers.ts';
import { connectionTo, paidBatch, setStatus, unattended } from '../ops/helpers.ts';

let sb: LocalSandbox;
beforeAll(async () => {
  sb = await swapFundedSandbox('1000.00');
});
afterAll(() => sb?.close());

it('a refunded row sent again after a swap counts in what the wallet must hold: short, the row is not sent', async () => {
  const b = await paidBatch(sb, { rows: 2, currencies: ['USD'], amount: (i) => `${400 + i}.00` });
  await setStatus(sb, b.ids[0]!, 'FAILED', { reason: 'bank closed the account' });
  expect((await runMain(['status', b.results, '--base-url', sb.url], { cwd: b.dir, env: cleanEnv() })).code).toBe(1);
  const client = connectionTo(sb).client;
  const usd = async () => Number((await client.listWallets()).data.find((w) => w.currency === 'USD')!.balance);
  // another payment of the business leaves the wallet short of the row: the plan proposes a swap
  await client.initiate(anotherPaymentBody(String((await usd()) - 100)), { idempotencyKey: 'another-payment-1' });
  // and one more, made as the swap is sent, takes what the swap was to add to
  const spending: typeof fetch = async (input, init) => {
    if ((input as string).endsWith('/swap'))
      await client.initiate(anotherPaymentBody(String((await usd()) - 5)), { idempotencyKey: 'another-payment-2' });
    return fetch(input, init);
  };
  const r = await retryResults({
    resultsFile: b.results,
    resendFailed: true,
    conn: connectionTo(sb, spending),
    ...unattended({ settleDelayMs: 10 }, { fundBySwap: true }),
  });
  expect(sb.snapshot().swaps).toHaveLength(1);
  // the row's second attempt never reached the service
  expect(initiates(sb).filter((e) => e.idempotencyKey && parseIdempotencyKey(e.idempotencyKey)?.attempt === 2)).toEqual([]);
  expect(JSON.stringify(r)).toMatch(/its rows need/);
});

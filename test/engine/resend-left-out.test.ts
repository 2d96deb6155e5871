// retry --resend-failed of a refunded row the plan leaves out (--allow-partial, its wallet short now): not sent again, and
// the retry says why among the rows not sent again, as it does for one whose refund is not seen yet.
import { afterEach, expect, it } from 'vitest';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, connectionTo, paidBatch, setStatus, startSb, unattended } from '../ops/helpers.ts';
import { retryResults } from './helpers.ts';

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

it('a refunded row left out by --allow-partial is listed as not sent again, with the reason', async () => {
  sb = await startSb();
  const { dir, results, ids } = await paidBatch(sb, { rows: 2 });
  await setStatus(sb, ids[0]!, 'FAILED');
  await refreshStatus({ client: connectionTo(sb).client, resultsFile: results });
  // (another payment of the business leaves the GBP wallet 1.00 once its fee is paid)
  const { client } = connectionTo(sb);
  const gbp = (await client.listWallets()).data.find((w) => w.currency === 'GBP')!;
  const body = {
    sourceAmount: Number(gbp.balance) - 3,
    sourceCurrency: 'GBP',
    destinationCurrency: 'GBP',
    destinationCountryCode: 'GBR',
    method: 'FASTER_PAYMENTS',
    beneficiary: {
      accountName: 'Other Payee Ltd',
      accountCurrency: 'GBP',
      accountNumber: '31926819',
      sortCode: '601613',
      iban: 'GB29NWBK60161331926819',
    },
    narration: 'another payment of the business',
  };
  await client.initiate(JSON.stringify(body), { idempotencyKey: 'drain-gbp-1' });
  const o = { ...unattended({ settleDelayMs: 1 }, { allowPartial: true }), conn: connectionTo(sb), resultsFile: results, here: dir };
  const r = await retryResults({ ...o, resendFailed: true });
  expect(await allPayouts(sb)).toHaveLength(3);
  expect(r.resent).toBe(0);
  expect(r.notResent).toMatchObject([{ payoutId: ids[0], reason: expect.stringMatching(/allow-partial/) }]);
});

// A refused row, edited and retried where the service stores refusals (issue 39 reading): key 1 is
// sent first with the edited body, and its answer (409: key 1 holds the refused body) can be lost.
// The next retry settles key 1 with the edited body, gets the 409, and must go on as the proof does
// (the refused body again, its refusal spends key 1), not leave the row CONFLICT for ever.

import { afterEach, describe, expect, it } from 'vitest';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { runBatch } from '../../src/engine/pipeline.ts';
import { readResults } from '../../src/results/read.ts';
import { writeResults } from '../../src/results/write.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { KEY, allPayouts, connectionTo, startSb, unattended } from '../ops/helpers.ts';
import { tempDirs, writeBatch, retryResults } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-lost-proof-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

const WALLETS = '/v1/payout-api/payouts/wallets';

async function gbpWallet(url: string): Promise<{ walletId: string; balance: number }> {
  const r = (await (await fetch(url + WALLETS, { headers: { 'x-api-key': KEY } })).json()) as {
    data: { walletId: string; currency: string; balance: number | string }[];
  };
  const w = r.data.find((x) => x.currency === 'GBP')!;
  return { walletId: w.walletId, balance: Number(w.balance) };
}

describe('a refused row edited and retried, the answer to its key 1 lost', () => {
  it('the next retry proves key 1 spent and pays the edited row once', async () => {
    sb = await startSb({ storeRefusals: true });
    const url = sb.url;
    const dir = await dirs.make();
    await writeBatch(dir, 'pay.csv', { rows: 1, currencies: ['GBP'], prefix: 'LOST', amount: () => '20.00' });
    let mode: 'drain' | 'pass' | 'lose' = 'drain';
    // drain: another payment empties the GBP wallet just before row 1 goes (the service refuses it);
    // lose: the service's answer to initiate never comes back.
    const via: typeof fetch = async (input, init) => {
      if (!(input as string).endsWith('/initiate')) return fetch(input, init);
      if (mode === 'drain') {
        mode = 'pass';
        const body = {
          ...(JSON.parse(new TextDecoder().decode(init!.body as Uint8Array)) as object),
          sourceAmount: (await gbpWallet(url)).balance - 10,
        };
        const other = await fetch(input, {
          method: 'POST',
          headers: { 'x-api-key': KEY, 'idempotency-key': 'another-payment', 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        expect(other.status).toBe(201);
      }
      const answer = await fetch(input, init);
      if (mode === 'lose')
        throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
      return answer;
    };
    const conn = connectionTo(sb, via);
    const run = await runBatch({ file: `${dir}/pay.csv`, conn, ...unattended({ settleDelayMs: 10 }) });
    expect((await readResults(run.resultsPath)).rows[0]!.result).toMatchObject({
      status: 'FAILED_TO_SEND',
      errorCode: 'INSUFFICIENT_FUNDS',
    });

    // topped up; the row edited (another amount) and retried, the answer to key 1 lost
    const { walletId } = await gbpWallet(url);
    const top = await fetch(`${url}/_sandbox/wallets/${walletId}/credit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '1000' }),
    });
    expect(top.status).toBeLessThan(300);
    const table = await readResults(run.resultsPath);
    table.rows[0]!.cells.sourceAmount = '21.00';
    await writeResults(run.resultsPath, table);
    mode = 'lose';
    const lost = await retryResults({
      ...unattended({ settleDelayMs: 10 }),
      resultsFile: run.resultsPath,
      conn,
    });
    expect((await readResults(lost.resultsPath)).rows[0]!.result.status).toBe('UNKNOWN_OUTCOME');

    mode = 'pass';
    const again = await retryResults({
      ...unattended({ settleDelayMs: 10 }),
      resultsFile: lost.resultsPath,
      conn,
    });
    const row = (await readResults(again.resultsPath)).rows[0]!;
    expect([row.cells.sourceAmount, row.result.status, row.result.idempotencyKey]).toEqual([
      '21.00',
      'PENDING',
      idempotencyKey('LOST-0001', 2),
    ]);
    expect((await allPayouts(sb)).filter((p) => Number(p.sourceAmount) < 100).map((p) => Number(p.sourceAmount))).toEqual([21]);
  });
});

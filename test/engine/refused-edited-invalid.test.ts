// A refused row edited into an invalid one and retried: INVALID, nothing sent, and its results row keeps the refused
// key, which ties the row to its payment in the next retry (an edited reference then cannot make it a new payment).
import { afterEach, expect, it } from 'vitest';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { runBatch } from '../../src/engine/pipeline.ts';
import { readResults } from '../../src/results/read.ts';
import { writeResults } from '../../src/results/write.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { KEY, allPayouts, connectionTo, startSb, unattended } from '../ops/helpers.ts';
import { retryResults, tempDirs, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-refused-invalid-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

it('a refused row edited into an invalid one keeps its key in the retry results', async () => {
  sb = await startSb();
  const url = sb.url;
  const dir = await dirs.make();
  await writeBatch(dir, 'pay.csv', { rows: 1, currencies: ['GBP'], prefix: 'EDIT', amount: () => '20.00' });
  let drained = false;
  // another payment empties the GBP wallet just before row 1 goes: the service refuses it
  const via: typeof fetch = async (input, init) => {
    if (!(input as string).endsWith('/initiate') || drained) return fetch(input, init);
    drained = true;
    const wallets = (await (await fetch(`${url}/v1/payout-api/payouts/wallets`, { headers: { 'x-api-key': KEY } })).json()) as {
      data: { currency: string; balance: number | string }[];
    };
    const body = {
      ...(JSON.parse(new TextDecoder().decode(init!.body as Uint8Array)) as object),
      sourceAmount: Number(wallets.data.find((w) => w.currency === 'GBP')!.balance) - 10,
    };
    const headers = { 'x-api-key': KEY, 'idempotency-key': 'another-payment', 'content-type': 'application/json' };
    expect((await fetch(input, { method: 'POST', headers, body: JSON.stringify(body) })).status).toBe(201);
    return fetch(input, init);
  };
  const run = await runBatch({ file: `${dir}/pay.csv`, conn: connectionTo(sb, via), ...unattended({ settleDelayMs: 10 }) });
  const key = idempotencyKey('EDIT-0001', 1);
  expect((await readResults(run.resultsPath)).rows[0]!.result).toMatchObject({ status: 'FAILED_TO_SEND', idempotencyKey: key });
  const table = await readResults(run.resultsPath);
  table.rows[0]!.cells.sourceAmount = 'twenty';
  await writeResults(run.resultsPath, table);
  const r = await retryResults({ ...unattended({ settleDelayMs: 10 }), conn: connectionTo(sb), resultsFile: run.resultsPath });
  expect(await allPayouts(sb)).toHaveLength(1); // (the other payment)
  expect((await readResults(r.resultsPath)).rows[0]!.result).toMatchObject({ status: 'INVALID', idempotencyKey: key });
});

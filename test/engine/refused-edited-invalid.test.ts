// A refused row edited into an invalid one and retried: INVALID, nothing sent, and its results row keeps the refused
// key, which ties the row to its payment in the next retry (an edited reference then cannot make it a new payment).
import { readFile, writeFile } from 'node:fs/promises';
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

/** A one-row GBP batch whose row the service refused (another payment emptied the wallet just before it went). */
async function refusedRow(batchId?: string) {
  sb = await startSb();
  const url = sb.url;
  const dir = await dirs.make();
  await writeBatch(dir, 'pay.csv', { rows: 1, currencies: ['GBP'], prefix: 'EDIT', amount: () => '20.00' });
  let drained = false;
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
  const file = `${dir}/pay.csv`;
  const run = await runBatch({ file, batchId, conn: connectionTo(sb, via), ...unattended({ settleDelayMs: 10 }) });
  const key = idempotencyKey('EDIT-0001', 1);
  expect((await readResults(run.resultsPath)).rows[0]!.result).toMatchObject({ status: 'FAILED_TO_SEND', idempotencyKey: key });
  return { file, key, resultsPath: run.resultsPath };
}

it('a refused row edited into an invalid one keeps its key in the retry results', async () => {
  const { key, resultsPath } = await refusedRow();
  const table = await readResults(resultsPath);
  table.rows[0]!.cells.sourceAmount = 'twenty';
  await writeResults(resultsPath, table);
  const r = await retryResults({ ...unattended({ settleDelayMs: 10 }), conn: connectionTo(sb!), resultsFile: resultsPath });
  expect(await allPayouts(sb!)).toHaveLength(1); // (the other payment)
  expect((await readResults(r.resultsPath)).rows[0]!.result).toMatchObject({ status: 'INVALID', idempotencyKey: key });
});

it('the same under a --batch-id, its batch file edited and run again', async () => {
  const { file, key } = await refusedRow('payroll-jan');
  await writeFile(file, (await readFile(file, 'utf8')).replace(',20.00,', ',twenty,'));
  const r = await runBatch({ file, batchId: 'payroll-jan', conn: connectionTo(sb!), ...unattended({ settleDelayMs: 10 }) });
  expect(await allPayouts(sb!)).toHaveLength(1);
  expect((await readResults(r.resultsPath)).rows[0]!.result).toMatchObject({ status: 'INVALID', idempotencyKey: key });
});

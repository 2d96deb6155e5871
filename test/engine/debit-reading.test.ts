// Spec §2 calls a payout's sourceAmount the "amount debited from the source wallet": a service may
// answer it with the fee added. The results then give the fee once: totalDeductible is the amount
// sent plus the fee, in either reading, and the sourceAmount column stays the amount sent.
import { afterEach, describe, expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { readResults } from '../../src/results/read.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { Dec } from '../../src/money.ts';
import { connectionTo, startSb, unattended } from '../ops/helpers.ts';
import { tempDirs, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-debit-reading-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

/** Every payout the service shows, with its fee added to its sourceAmount. */
const debitReading: typeof fetch = async (input, init) => {
  const answer = await fetch(input, init);
  if (!String(answer.headers.get('content-type')).includes('json') || !(input as string).includes('/payouts')) return answer;
  const add = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(add);
    if (!v || typeof v !== 'object') return v;
    const o = Object.fromEntries(Object.entries(v).map(([k, x]) => [k, add(x)]));
    if (typeof o.sourceAmount === 'number' && typeof o.transactionFees === 'number' && o.method !== 'SWAP')
      o.sourceAmount = new Dec(o.sourceAmount).plus(o.transactionFees).toNumber();
    return o;
  };
  return new Response(JSON.stringify(add(await answer.json())), { status: answer.status, headers: answer.headers });
};

describe('a service that answers sourceAmount as the amount debited, fee included', () => {
  it('counts the fee once in totalDeductible', async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const path = await writeBatch(dir, 'pay.csv', { rows: 3, currencies: ['GBP'], prefix: 'DR' });
    const run = await runBatch({ file: path, conn: connectionTo(sb, debitReading), ...unattended({ settleDelayMs: 10 }) });
    expect(run.kind).toBe('ok');
    const rows = (await readResults(run.resultsPath)).rows;
    expect(rows.map((r) => r.result.status)).toEqual(['PENDING', 'PENDING', 'PENDING']);
    for (const r of rows) {
      expect(new Dec(r.result.fee!).gt(0), 'a fee to count').toBe(true);
      expect(r.result.totalDeductible).toBe(new Dec(r.cells.sourceAmount!).plus(r.result.fee!).toFixed(2));
    }
  });
});

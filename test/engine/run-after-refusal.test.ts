// `run` again after the service refused a row: only `retry` sends a refused row again, so the plan
// a person confirms (its rows, totals and the approval policy's payouts) does not count it.
import { afterEach, describe, expect, it } from 'vitest';
import { prepareRun, runBatch } from '../../src/engine/pipeline.ts';
import { readResults } from '../../src/results/read.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, connectionTo, startSb, unattended } from '../ops/helpers.ts';
import { tempDirs, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-run-after-refusal-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

describe('run again after the service refused a row', () => {
  it('plans nothing to send for it, and sends nothing', async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const file = await writeBatch(dir, 'pay.csv', { rows: 2, currencies: ['GBP'], prefix: 'REF' });
    // the service refuses the first row's initiate
    let refused: string | undefined;
    const via: typeof fetch = async (input, init) => {
      const body = Buffer.from((init?.body as Uint8Array | undefined) ?? []).toString();
      if ((input as string).endsWith('/initiate') && (refused ??= body) === body) {
        const answer = { statusCode: 400, message: 'beneficiary account closed', error: 'VALIDATION_ERROR' };
        return new Response(JSON.stringify(answer), { status: 400, headers: { 'content-type': 'application/json' } });
      }
      return fetch(input, init);
    };
    const run = await runBatch({ file, conn: connectionTo(sb, via), ...unattended({ settleDelayMs: 10 }) });
    expect((await readResults(run.resultsPath)).rows.map((r) => r.result.status)).toEqual(['FAILED_TO_SEND', 'PENDING']);

    const spent: number[] = [];
    const guards = { spend: async (_l: unknown, payouts: unknown[]) => void spent.push(payouts.length) };
    const again = await prepareRun({ file, conn: connectionTo(sb), ...unattended({ settleDelayMs: 10 }, guards) });
    expect(again.plan!.toSend).toEqual([]);
    expect(again.plan!.currencies.map((c) => c.rows)).not.toContain(1);
    const done = await again.go({});
    expect((await readResults(done.resultsPath)).rows.map((r) => r.result.status)).toEqual(['FAILED_TO_SEND', 'PENDING']);
    expect(spent).toEqual([]);
    expect(await allPayouts(sb)).toHaveLength(1);
  });
});

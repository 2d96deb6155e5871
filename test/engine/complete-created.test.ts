// After the rows, a created payout whose initiate answer lacked the fee is read from the payout list,
// a GET each for those the list did not show (execute.ts completeCreated). A service that is not
// working then (a 5xx past the client's retries) is not asked once per payout: the next run reads them.
import { afterEach, expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { connectionTo, unattended } from '../ops/helpers.ts';
import { workDir, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

it('a service answering 5xx once the rows are sent: no GET per payout after the list failed', async () => {
  // (the variant reading's initiate answers without the fee: every payout is completed after the rows)
  sb = await startSandbox({ shapes: 'variant', rateLimitPerSecond: null });
  const dir = await workDir();
  const file = await writeBatch(dir, 'batch.csv', { rows: 6, currencies: ['GBP'] });
  const down = new Response(JSON.stringify({ statusCode: 503, message: 'Service Unavailable' }), { status: 503 });
  const reads: string[] = [];
  const failing: typeof fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if ((init?.method ?? 'GET') !== 'GET' || !/\/payouts(\?.*|\/[0-9a-f-]{36})?$/.test(url)) return fetch(input, init);
    reads.push(url);
    return down.clone();
  };
  const r = await runBatch({ file, conn: connectionTo(sb, failing), ...unattended({ settleDelayMs: 10 }) });
  expect(r.kind).toBe('ok');
  // the list's attempts (connectionTo: 2), and no GET /payouts/{id} for each of the 6
  expect(reads.filter((u) => /\/payouts\/[0-9a-f-]{36}$/.test(u))).toEqual([]);

  const next = await runBatch({ file, conn: connectionTo(sb), ...unattended({ settleDelayMs: 10 }) });
  expect(next.kind).toBe('ok');
  for (const o of next.outcomes.values()) expect(o.payout?.transactionFees).toBeDefined();
});

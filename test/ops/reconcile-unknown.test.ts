// A row whose initiate answer never came (UNKNOWN_OUTCOME) may have been paid: reconcile cannot tie
// its debit to it, so the batch does not tie out until a run settles it, and that debit is not
// called another state folder's.
import { expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { reconcile } from '../../src/follow-up/reconciliation.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import { readResults } from '../../src/results/results.ts';
import { connectionTo, startSb, unattended, workDir, writeBatch } from './helpers.ts';

it('a row of unknown outcome: the batch does not tie out, naming the row', async () => {
  const sb = await startSb();
  try {
    // every answer to the second row's initiate lost on the way back: the payout is created
    const keys: string[] = [];
    const lost: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const key = new Headers(init?.headers).get('idempotency-key');
      if (String(input instanceof Request ? input.url : input).endsWith('/payouts/initiate') && key) {
        if (!keys.includes(key)) keys.push(key);
        if (keys.indexOf(key) === 1) throw new TypeError('fetch failed');
      }
      return res;
    };
    const file = await writeBatch(await workDir(), 'batch.csv', { rows: 3, currencies: ['GBP'] });
    const conn = connectionTo(sb, lost);
    const run = await runBatch({ file, conn, ...unattended({ settleDelayMs: 10 }) });
    const rows = (await readResults(run.resultsPath)).rows;
    const unknown = rows.find((r) => r.result.status === 'UNKNOWN_OUTCOME')!;
    expect(unknown).toBeDefined();

    const rc = await reconcile({ client: connectionTo(sb).client, resultsFile: run.resultsPath, ledgers: [ledgerOf(conn)] });
    expect(rc.kind).toBe('rows-failed');
    expect(rc.report?.problems).toEqual([expect.stringMatching(new RegExp(`^row ${unknown.rowNumber} .*outcome`))]);
  } finally {
    await sb.close();
  }
});

// A row whose outcome is unknown, edited in the results file into one that is not valid, when the
// batch file is no longer as it ran (moved, or edited since): retry cannot settle it with its
// journalled body, and must not call it INVALID ("never sent") while its payout may exist.
import { rename } from 'node:fs/promises';

import { afterEach, describe, expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { readResults } from '../../src/results/read.ts';
import { writeResults } from '../../src/results/write.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, connectionTo, startSb, unattended } from '../ops/helpers.ts';
import { tempDirs, writeBatch, retryResults } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-unsettled-invalid-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

describe('an unsettled row edited into an invalid one, the batch file gone', () => {
  it('retry is refused naming the row and field, nothing sent; the row fixed, it is settled with its key: no second payout', async () => {
    sb = await startSb();
    const dir = await dirs.make();
    await writeBatch(dir, 'pay.csv', { rows: 2, currencies: ['GBP'], prefix: 'UNS' });
    let lose = true;
    // the service creates each payout; its answer never comes back while `lose`
    const via: typeof fetch = async (input, init) => {
      const answer = await fetch(input, init);
      if (lose && (input as string).endsWith('/initiate')) throw new TypeError('fetch failed');
      return answer;
    };
    const conn = connectionTo(sb, via);
    const run = await runBatch({ file: `${dir}/pay.csv`, conn, ...unattended({ settleDelayMs: 10 }) });
    expect((await readResults(run.resultsPath)).rows.map((r) => r.result.status)).toEqual(['UNKNOWN_OUTCOME', 'UNKNOWN_OUTCOME']);
    expect(await allPayouts(sb)).toHaveLength(2);

    await rename(`${dir}/pay.csv`, `${dir}/archived.csv`);
    const table = await readResults(run.resultsPath);
    const accountName = table.rows[0]!.cells.accountName!;
    table.rows[0]!.cells.accountName = '';
    await writeResults(run.resultsPath, table);
    lose = false;
    const refused = retryResults({
      ...unattended({ settleDelayMs: 10 }),
      resultsFile: run.resultsPath,
      conn,
    });
    await expect(refused).rejects.toMatchObject({ name: 'BatchRefused', reason: 'unsettled-row-invalid' });
    await expect(refused).rejects.toThrow(/pay\.results\.csv row 2: accountName: .*UNS-0001 .*outcome is unknown.*Nothing was sent/);
    expect(await allPayouts(sb)).toHaveLength(2);

    table.rows[0]!.cells.accountName = accountName;
    await writeResults(run.resultsPath, table);
    const settled = await retryResults({
      ...unattended({ settleDelayMs: 10 }),
      resultsFile: run.resultsPath,
      conn,
    });
    expect((await readResults(settled.resultsPath)).rows.map((r) => r.result.status)).toEqual(['PENDING', 'PENDING']);
    expect(await allPayouts(sb)).toHaveLength(2);
  });
});

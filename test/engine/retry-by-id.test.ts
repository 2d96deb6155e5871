// `retry BATCH-ID` works on the batch's results file as last written: after a retry of an edited
// retry-N, the next retry by id must send the rows as last edited, never the first cells again,
// in the run's folder (the run's results) as in another (the copy made there).

import { afterEach, describe, expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { readResults } from '../../src/results/read.ts';
import { writeResults } from '../../src/results/write.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, connectionTo, startSb, unattended } from '../ops/helpers.ts';
import { refusingInitiates, tempDirs, writeBatch, retryResults } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-retry-by-id-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

describe('retry of a batch named by its id', () => {
  for (const where of ['the run folder', 'another folder'] as const)
    it(`in ${where}: sends a refused row as last edited in the latest retry-N, not as first written`, async () => {
      sb = await startSb();
      const dir = await dirs.make();
      const here = where === 'the run folder' ? dir : await dirs.make();
      const path = await writeBatch(dir, 'pay.csv', { rows: 2, currencies: ['GBP'], prefix: 'BI', amount: () => '90.00' });
      let refusing = true;
      const conn = connectionTo(
        sb,
        refusingInitiates((body) => refusing && body.includes('Amelia Jones')),
      );
      const run = await runBatch({ file: path, conn, ...unattended({ settleDelayMs: 10 }) });
      const byId = () => retryResults({ ...unattended({ settleDelayMs: 10 }), resultsFile: run.batchId.slice(0, 16), here, conn });
      const first = await byId();
      const table = await readResults(first.resultsPath);
      table.rows[1]!.cells.sourceAmount = '45.00'; // the fix: refused again, under the same key
      await writeResults(first.resultsPath, table);
      const second = await retryResults({
        ...unattended({ settleDelayMs: 10 }),
        resultsFile: first.resultsPath,
        conn,
      });
      expect((await readResults(second.resultsPath)).rows[1]!.result.status).toBe('FAILED_TO_SEND');

      refusing = false;
      const row = (await readResults((await byId()).resultsPath)).rows[1]!;
      expect([row.cells.sourceAmount, row.result.status]).toEqual(['45.00', 'PENDING']);
      expect((await allPayouts(sb)).map((p) => p.sourceAmount).sort()).toEqual([45, 90]);
    });

  it("in a folder paid from monthly: never takes last month's retry-N beside this month's results for this batch's", async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const conn = connectionTo(
      sb,
      refusingInitiates((body) => body.includes('"sourceAmount":70')),
    );
    const o = unattended({ settleDelayMs: 10 });
    const path = await writeBatch(dir, 'pay.csv', { rows: 1, currencies: ['GBP'], prefix: 'JAN', amount: () => '70.00' });
    const january = await runBatch({ file: path, conn, ...o });
    const retried = await retryResults({ ...o, resultsFile: january.resultsPath, conn });
    expect(retried.resultsPath).toMatch(/pay\.results\.retry-1\.csv$/); // January's, refused again
    await writeBatch(dir, 'pay.csv', { rows: 1, currencies: ['GBP'], prefix: 'FEB', amount: () => '80.00' });
    const february = await runBatch({ file: path, conn, ...o });
    expect(february.resultsPath).toBe(january.resultsPath);
    const r = await retryResults({ ...o, resultsFile: february.batchId.slice(0, 16), here: dir, conn });
    expect((await readResults(r.resultsPath)).rows.map((x) => x.cells.reference)).toEqual(['FEB-0001']);
  });
});

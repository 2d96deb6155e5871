// A spreadsheet sort of the batch's columns without the result columns ("continue with the current
// selection") leaves each row with another row's key, payout id and status. retry must not report a
// row refused by the service as paid with another row's payout, nor leave it unsent. Sorted without the
// reference too, a refused row names a paid row's payee: never paid to them a second time.

import { readFile, writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { readResults } from '../../src/results/read.ts';
import { writeResults } from '../../src/results/write.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, connectionTo, startSb, unattended } from '../ops/helpers.ts';
import { refusingInitiates, tempDirs, writeBatch, retryResults } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-retry-apart-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

describe('retry of a results file whose batch columns were sorted apart from its result columns', () => {
  it('is refused naming the row, nothing sent; put back, the refused row is sent', async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const path = await writeBatch(dir, 'pay.csv', { rows: 2, currencies: ['GBP'], prefix: 'SA' });
    // SA-0002 (Amelia Jones) refused by the service: nothing created
    const refuse = refusingInitiates((body) => body.includes('Amelia Jones'));
    const run = await runBatch({ file: path, conn: connectionTo(sb, refuse), ...unattended({ settleDelayMs: 10 }) });
    const table = await readResults(run.resultsPath);
    expect(table.rows.map((r) => [r.cells.reference, r.result.status])).toEqual([
      ['SA-0001', 'PENDING'],
      ['SA-0002', 'FAILED_TO_SEND'],
    ]);
    const cells = table.rows.map((r) => r.cells);
    const apart = { ...table, rows: table.rows.map((r, i) => ({ ...r, cells: cells[1 - i]! })) };
    await writeResults(run.resultsPath, apart);

    const retry = () =>
      retryResults({
        ...unattended({ settleDelayMs: 10 }),
        resultsFile: run.resultsPath,
        conn: connectionTo(sb!),
      });
    await expect(retry()).rejects.toMatchObject({ name: 'BatchRefused', message: expect.stringMatching(/ row 2: .*SA-0002.*SA-0001/) });
    expect(await allPayouts(sb)).toHaveLength(1);

    await writeResults(run.resultsPath, table);
    const rows = (await readResults((await retry()).resultsPath)).rows;
    expect(rows.map((r) => [r.cells.reference, r.result.status])).toEqual([
      ['SA-0001', 'PENDING'],
      ['SA-0002', 'PENDING'],
    ]);
    expect(await allPayouts(sb)).toHaveLength(2);
  });

  it("sorted without its reference: the refused row now naming the paid row's payee and amount is not paid again", async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const path = await writeBatch(dir, 'pay.csv', { rows: 2, currencies: ['GBP'], prefix: 'SB' });
    const refuse = refusingInitiates((body) => body.includes('Amelia Jones'));
    const run = await runBatch({ file: path, conn: connectionTo(sb, refuse), ...unattended({ settleDelayMs: 10 }) });
    const table = await readResults(run.resultsPath);
    const [paid, refused] = table.rows.map((r) => r.cells);
    for (const c of table.inputColumns) if (c !== 'reference') [paid![c], refused![c]] = [refused![c]!, paid![c]!];
    await writeResults(run.resultsPath, table);

    const retried = await retryResults({
      ...unattended({ settleDelayMs: 10 }),
      resultsFile: run.resultsPath,
      conn: connectionTo(sb),
    });
    const row = (await readResults(retried.resultsPath)).rows[1]!;
    expect([row.cells.reference, row.cells.accountName, row.result.errorCode]).toEqual(['SB-0002', 'Oliver Brown', 'PROBABLE_DUPLICATE']);
    expect(await allPayouts(sb)).toHaveLength(1);
  });

  // (found by test/chaos/retry-fuzz.ts: a paid row's key pasted on a row the run found invalid)
  it("a row the run found invalid, given a paid row's results: refused, never reported paid with that payout", async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const path = await writeBatch(dir, 'pay.csv', { rows: 2, currencies: ['GBP'], prefix: 'SC' });
    await writeFile(path, (await readFile(path, 'utf8')).replace('Amelia Jones', ''));
    const run = await runBatch({ file: path, conn: connectionTo(sb), ...unattended({ settleDelayMs: 10 }) });
    const table = await readResults(run.resultsPath);
    expect(table.rows.map((r) => r.result.status)).toEqual(['PENDING', 'INVALID']);
    const cells = table.rows.map((r) => r.cells);
    await writeResults(run.resultsPath, { ...table, rows: table.rows.map((r, i) => ({ ...r, cells: cells[1 - i]! })) });

    const retry = retryResults({ ...unattended({ settleDelayMs: 10 }), resultsFile: run.resultsPath, conn: connectionTo(sb) });
    await expect(retry).rejects.toMatchObject({ name: 'BatchRefused', message: expect.stringMatching(/ row 2: .*SC-0002.*SC-0001/) });
    expect(await allPayouts(sb)).toHaveLength(1);
  });
});

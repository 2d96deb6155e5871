// A refused row retried goes first under its refused key (I3), whatever its reference cell says
// now: a spreadsheet that read the reference 000123 as the number 123 must not give the row a fresh
// key, or a copy of the original file run from another state folder pays it a second time.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { readResults } from '../../src/results/read.ts';
import { writeResults } from '../../src/results/write.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, connectionTo, startSb, unattended } from '../ops/helpers.ts';
import { refusingInitiates, tempDirs, writeBatch, retryResults } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-retry-ref-zeros-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

it('a refused row whose reference lost its leading zeros in the results file is paid once, another state folder running the original', async () => {
  sb = await startSb();
  const dir = await dirs.make();
  const path = await writeBatch(dir, 'pay.csv', { rows: 1, currencies: ['GBP'], prefix: 'ZR' });
  await writeFile(path, (await readFile(path, 'utf8')).replace('ZR-0001', '000123'));
  // refused by the service: nothing created
  const refuse = refusingInitiates();
  const run = await runBatch({ file: path, conn: connectionTo(sb, refuse), ...unattended({ settleDelayMs: 10 }) });
  const table = await readResults(run.resultsPath);
  expect(table.rows.map((r) => [r.cells.reference, r.result.status])).toEqual([['000123', 'FAILED_TO_SEND']]);

  // saved by a spreadsheet that took the reference for a number, then retried
  table.rows[0]!.cells.reference = '123';
  await writeResults(run.resultsPath, table);
  const retried = await retryResults({
    ...unattended({ settleDelayMs: 10 }),
    resultsFile: run.resultsPath,
    conn: connectionTo(sb),
  });
  expect((await readResults(retried.resultsPath)).rows[0]!.result.status).toBe('PENDING');

  // Bob runs the original file from his own state folder
  await runBatch({ file: path, conn: connectionTo(sb), stateDir: join(dir, 'bob'), ...unattended({ settleDelayMs: 10 }) });
  expect(await allPayouts(sb)).toHaveLength(1);
});

// A batch whose rows are not on consecutive lines (a blank line here) is written to its results
// file on consecutive lines, so its row numbers and the results file's differ. An unsettled row
// edited (into an invalid one, or to another payee) is settled with the body it was sent with: that
// payee is the one screened.
import { join } from 'node:path';
import { readFile, writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { readResults } from '../../src/results/read.ts';
import { writeResults } from '../../src/results/write.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, connectionTo, startSb, unattended } from '../ops/helpers.ts';
import { ROOT, tempDirs, writeBatch, retryResults } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-retry-rownumbers-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

describe('retry of a batch with a blank line, an unsettled row edited', () => {
  for (const [into, name] of [
    ['an invalid one', ''],
    ['another payee', 'Harry Taylor'],
  ] as const)
    it(`into ${into}: screens the payee it settles with, the batch file's: a listed payee is held, not paid`, async () => {
      sb = await startSb();
      const dir = await dirs.make();
      const path = await writeBatch(dir, 'pay.csv', { rows: 3, currencies: ['GBP'], prefix: 'GAP' });
      const [head, ...rest] = (await readFile(path, 'utf8')).replace('Harry Taylor', 'Adaeze Okafor').split('\n');
      await writeFile(path, [head, '', ...rest].join('\n'));
      // GAP-0003's request never reaches the service: its outcome is unknown, no payout exists
      const via: typeof fetch = async (input, init) => {
        if (
          Buffer.from((init?.body as Uint8Array | undefined) ?? [])
            .toString()
            .includes('12345678')
        )
          throw new TypeError('fetch failed');
        return fetch(input, init);
      };
      const run = await runBatch({ file: path, conn: connectionTo(sb, via), ...unattended({ settleDelayMs: 10 }) });
      const table = await readResults(run.resultsPath);
      expect(table.rows.map((r) => [r.rowNumber, r.result.status])).toEqual([
        [2, 'PENDING'],
        [3, 'PENDING'],
        [4, 'UNKNOWN_OUTCOME'],
      ]);
      expect(await allPayouts(sb)).toHaveLength(2);

      table.rows[2]!.cells.accountName = name;
      await writeResults(run.resultsPath, table);
      const screening = { lists: [join(ROOT, 'samples/sanctions/sdn.csv')] };
      const retried = await retryResults({
        ...unattended({ settleDelayMs: 10 }),
        resultsFile: run.resultsPath,
        conn: connectionTo(sb),
        screening,
      });
      const held = (await readResults(retried.resultsPath)).rows[2]!.result;
      // held by the screening: not settled, so still unknown, and no payout to the listed payee
      expect(held.status).toBe('UNKNOWN_OUTCOME');
      expect(await allPayouts(sb)).toHaveLength(2);
    });
});

// A row refused CORRIDOR_NOT_ENABLED (its pair switched off during the run), the pair switched on
// again: retry pays it once in both readings of a refused key. Where refusals are stored, key 1
// answers the same refusal and the pairs listing (spec §4.9: the enabled pairs, with no `enabled`
// field in the variant reading) must read as the cause gone, or the row could never be paid again.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { runBatch } from '../../src/engine/pipeline.ts';
import { readResults } from '../../src/results/read.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { ROOT, allPayouts, connectionTo, startSb, unattended } from '../ops/helpers.ts';
import { tempDirs, retryResults } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-retry-corridor-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

const REF = 'PAYROLL-2025-01-030';

describe('a row refused CORRIDOR_NOT_ENABLED, its pair enabled again since', () => {
  for (const shapes of ['strict', 'variant'] as const)
    it(`is paid once by retry (sandbox: ${shapes}, refusals ${shapes === 'variant' ? 'stored' : 'not stored'})`, async () => {
      sb = await startSb({ shapes });
      const dir = await dirs.make();
      const sample = (await readFile(join(ROOT, 'samples/payroll-2025-01.csv'), 'utf8')).replace(/^\uFEFF/, '').split(/\r?\n/);
      const row = sample.find((l) => l.startsWith(REF))!.replace(/,[^,]*,false$/, ',,true'); // USD to GBP, no document
      const file = join(dir, 'pay.csv');
      await writeFile(file, `${sample[0]}\n${row}\n`);
      const conn = connectionTo(sb);
      const pair = (await conn.client.listPairs({ all: true })).data.find((p) => p.baseCurrency === 'USD' && p.quoteCurrency === 'GBP')!;
      // someone switches the pair off between the preflight and the row's initiate
      let off = false;
      const via: typeof fetch = async (input, init) => {
        if (!off && (input as string).endsWith('/initiate')) {
          off = true;
          await conn.client.togglePair(pair.currencyPairId!, { enabled: false });
        }
        return fetch(input, init);
      };
      const run = await runBatch({ file, conn: connectionTo(sb, via), ...unattended({ settleDelayMs: 10 }) });
      expect((await readResults(run.resultsPath)).rows[0]!.result.errorCode).toBe('CORRIDOR_NOT_ENABLED');

      await conn.client.togglePair(pair.currencyPairId!, { enabled: true });
      const retried = await retryResults({
        ...unattended({ settleDelayMs: 10 }),
        resultsFile: run.resultsPath,
        conn,
      });
      expect(retried.keyProofs.map((p) => p.verdict)).toEqual([shapes === 'variant' ? 'spent' : 'paid']);
      const result = (await readResults(retried.resultsPath)).rows[0]!.result;
      expect([result.status, result.idempotencyKey]).toEqual(['PENDING', idempotencyKey(REF, shapes === 'variant' ? 2 : 1)]);
      expect(await allPayouts(sb)).toHaveLength(1);
    });
});

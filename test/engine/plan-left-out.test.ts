// `run --plan` sends only the plan's rows: each row the plan left out says, in the results, why the
// plan left it out (a probable duplicate, held by screening), never the generic "refused or stopped".
import { join } from 'node:path';
import { readFile, writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { planBatch } from '../../src/engine/plan-command.ts';
import { runBatch } from '../../src/engine/pipeline.ts';
import { readResults } from '../../src/results/read.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { connectionTo, startSb, unattended } from '../ops/helpers.ts';
import { ROOT, tempDirs, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-plan-left-out-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

describe('run --plan of a plan that left rows out', () => {
  it('writes each left-out row with the reason the plan gave it', async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const o = unattended({ settleDelayMs: 10 }, { allowPartial: true });
    // another batch paid the first row's payee and amount today: the plan finds that row a probable duplicate
    await runBatch({
      file: await writeBatch(dir, 'earlier.csv', { rows: 1, currencies: ['GBP'], prefix: 'PLE' }),
      conn: connectionTo(sb),
      ...o,
    });
    const file = await writeBatch(dir, 'pay.csv', { rows: 4, currencies: ['GBP'], prefix: 'PLO' });
    await writeFile(file, (await readFile(file, 'utf8')).replace('Harry Taylor', 'Adaeze Okafor')); // on the sample list
    const screening = { lists: [join(ROOT, 'samples/sanctions/sdn.csv')] };
    const out = join(dir, 'plan.json');
    const flags = { mergeDocuments: false, allowPartial: true, enablePairs: false, quote: false };
    const planned = await planBatch({ file, conn: connectionTo(sb), out, screening, ...flags });
    expect(planned.planFile!.rows.map((r) => r.reference)).toEqual(['PLO-0002', 'PLO-0004']);

    const run = await runBatch({ planFile: out, conn: connectionTo(sb), screening, ...o });
    expect(run.kind).toBe('ok');
    const rows = (await readResults(run.resultsPath)).rows.map((r) => [r.cells.reference, r.result.status, r.result.errorCode]);
    expect(rows).toEqual([
      ['PLO-0001', 'INVALID', 'PROBABLE_DUPLICATE'],
      ['PLO-0002', 'PENDING', undefined],
      ['PLO-0003', 'HELD_SCREENING', 'HELD_SCREENING'],
      ['PLO-0004', 'PENDING', undefined],
    ]);
  });
});

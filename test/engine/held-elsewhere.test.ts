// A reference another batch's screening held, in a file planned and run by nobody screening: `run`
// refuses it (the reservation, references-held-by-screening); `plan` shows it held, never to send.
import { join } from 'node:path';
import { readFile, writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { planBatch } from '../../src/engine/plan-command.ts';
import { runBatch } from '../../src/engine/pipeline.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { connectionTo, startSb, unattended } from '../ops/helpers.ts';
import { ROOT, tempDirs, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-held-elsewhere-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

describe('a reference held by another batch, planned without sanctions lists', () => {
  it('is planned held (HELD_SCREENING), as run refuses it, not to send', async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const path = await writeBatch(dir, 'pay.csv', { rows: 3, currencies: ['GBP'], prefix: 'HEL' });
    const csv = (await readFile(path, 'utf8')).replace('Harry Taylor', 'Adaeze Okafor');
    await writeFile(path, csv);
    const screening = { lists: [join(ROOT, 'samples/sanctions/sdn.csv')] };
    const run = await runBatch({
      file: path,
      conn: connectionTo(sb),
      screening,
      ...unattended({ settleDelayMs: 10 }, { allowPartial: true }),
    });
    const heldRow = [...run.plan!.notSent].find(([, i]) => i.code === 'HELD_SCREENING')![0];
    // the held row alone in a file of its own: another batch
    const lines = csv.trim().split('\n');
    const other = join(dir, 'held.csv');
    await writeFile(other, [lines[0], lines[heldRow - 1]].join('\n') + '\n');

    const flags = { mergeDocuments: false, allowPartial: false, enablePairs: false, quote: false };
    const { plan } = await planBatch({ file: other, conn: connectionTo(sb), ...flags });
    expect(plan.toSend).toEqual([]);
    expect(plan.notSent.get(2)).toMatchObject({
      code: 'HELD_SCREENING',
      message: expect.stringMatching(/another batch.*--sanctions-list/),
    });
    await expect(runBatch({ file: other, conn: connectionTo(sb), ...unattended() })).rejects.toMatchObject({
      reason: 'references-held-by-screening',
    });
  });
});

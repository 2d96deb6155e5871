// A row screening held, paid since by a retry that screened its edited payee: a later retry of a file
// still showing it held (the older file, or the same one retried again) without lists reports it paid.
import { join } from 'node:path';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { readResults } from '../../src/results/read.ts';
import { writeResults } from '../../src/results/write.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, connectionTo, startSb, unattended } from '../ops/helpers.ts';
import { ROOT, tempDirs, writeBatch, retryResults } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-held-since-paid-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

describe('a row held by screening, paid since, in a results file still showing it held', () => {
  it('retried without lists: reported as paid, with its payout, not HELD_SCREENING', async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const path = await writeBatch(dir, 'pay.csv', { rows: 3, currencies: ['GBP'], prefix: 'HSP' });
    await writeFile(path, (await readFile(path, 'utf8')).replace('Harry Taylor', 'Adaeze Okafor'));
    const screening = { lists: [join(ROOT, 'samples/sanctions/sdn.csv')] };
    const o = { conn: connectionTo(sb), ...unattended({ settleDelayMs: 10 }, { allowPartial: true }) };
    const run = await runBatch({ file: path, screening, ...o });
    const table = await readResults(run.resultsPath);
    const held = table.rows.findIndex((r) => r.result.status === 'HELD_SCREENING');
    expect(held).toBeGreaterThanOrEqual(0);
    const older = join(dir, 'pay.results.before-edit.csv');
    await copyFile(run.resultsPath, older);
    // the payee corrected (the list named the wrong one), screened again: paid
    table.rows[held]!.cells.accountName = 'Harry Taylor';
    await writeResults(run.resultsPath, table);
    const paid = await retryResults({ ...o, resultsFile: run.resultsPath, screening });
    const payout = (await readResults(paid.resultsPath)).rows[held]!.result;
    expect(payout.status).toBe('PENDING');
    expect(await allPayouts(sb)).toHaveLength(3);

    const again = await retryResults({ ...o, resultsFile: older });
    const row = (await readResults(again.resultsPath)).rows[held]!.result;
    expect([row.status, row.payoutId]).toEqual(['PENDING', payout.payoutId]);
    expect(await allPayouts(sb)).toHaveLength(3);
  });
});

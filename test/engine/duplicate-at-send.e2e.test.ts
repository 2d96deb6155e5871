// Issue 39: a created row renamed in a results file (its reference changed, its key, payout id and
// status cleared) and retried is a probable duplicate of the payout the ledger shows minutes ago:
// refused PROBABLE_DUPLICATE, nothing sent; `--allow-duplicate REF` sends it.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readResults } from '../../src/results/read.ts';
import { writeResults } from '../../src/results/write.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { allPayouts, cliIn, tempDirs, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-dup-send-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

describe('a created row renamed and retried', () => {
  it('is refused PROBABLE_DUPLICATE naming the earlier payout; paid with --allow-duplicate', async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    await writeBatch(dir, 'pay.csv', { rows: 3, currencies: ['GBP'], prefix: 'DUP' });
    const { cli, results } = cliIn(dir, sb.url);
    const run = await cli('run', 'pay.csv', '--yes');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const paid = await results('pay.results.csv');

    const file = join(dir, 'pay.results.csv');
    const table = await readResults(file);
    const row = table.rows[1]!;
    row.cells.reference = 'DUP-0002-AGAIN';
    row.result = { ...row.result, status: '', payoutId: '', payoutRef: '', idempotencyKey: '' };
    await writeResults(file, table);

    const refused = await cli('retry', 'pay.results.csv', '--yes');
    expect(refused.code, refused.stdout + refused.stderr).toBe(1);
    const after = await results('pay.results.retry-1.csv');
    expect(after[1]).toMatchObject({ reference: 'DUP-0002-AGAIN', errorCode: 'PROBABLE_DUPLICATE', payoutId: '' });
    expect(after[1]!.errorMessage).toContain('DUP-0002');
    expect(after[1]!.errorMessage).toContain(paid[1]!.payoutRef!);
    expect(await allPayouts(sb)).toHaveLength(3);

    const allowed = await cli('retry', 'pay.results.csv', '--yes', '--allow-duplicate', 'DUP-0002-AGAIN');
    expect(allowed.code, allowed.stdout + allowed.stderr).toBe(0);
    expect(await allPayouts(sb)).toHaveLength(4);
  }, 60_000);
});

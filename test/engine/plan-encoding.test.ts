// `run --plan` reads the batch file as the plan did: its sheet, and the --encoding `plan` was given,
// or the approved plan of an unchanged file is refused as changed.
import { join } from 'node:path';
import { readFile, writeFile } from 'node:fs/promises';
import iconv from 'iconv-lite';
import { afterEach, describe, expect, it } from 'vitest';
import { planBatch } from '../../src/engine/plan-command.ts';
import { runBatch } from '../../src/engine/pipeline.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, connectionTo, startSb, unattended } from '../ops/helpers.ts';
import { tempDirs, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-plan-encoding-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

describe('run --plan of a plan made with --encoding', () => {
  it('reads the file in that encoding without the flag: the planned bodies, paid', async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const file = await writeBatch(dir, 'pay.csv', { rows: 2, currencies: ['GBP'], prefix: 'PEN' });
    await writeFile(file, iconv.encode((await readFile(file, 'utf8')).replace('Amelia Jones', 'Tomáš Dvořák'), 'windows-1250'));
    const out = join(dir, 'plan.json');
    const flags = { mergeDocuments: false, allowPartial: false, enablePairs: false, quote: false };
    await planBatch({ file, encoding: 'windows-1250', conn: connectionTo(sb), out, ...flags });

    const run = await runBatch({ planFile: out, conn: connectionTo(sb), ...unattended({ settleDelayMs: 10 }) });
    expect(run.kind).toBe('ok');
    expect(await allPayouts(sb)).toHaveLength(2);
  });
});

// `run --json` prints one document on stdout however the run ends: also when the engine refuses the
// batch or cannot read it (a script reading `.exitCode` never gets an empty stdout).
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { cleanEnv, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';
import { startSb } from '../ops/helpers.ts';

let sb: LocalSandbox;
const dirs = tempDirs('pb-json-errors-');
beforeAll(async () => {
  sb = await startSb();
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

describe('run --json when the engine says no', () => {
  it('a batch file not there (exit 2) and a batch refused by the ledger (exit 3): the document says so', async () => {
    const dir = await dirs.make();
    const cli = (...args: string[]) =>
      runMain(['run', ...args, '-y'], { cwd: dir, env: cleanEnv({ PAYOUT_BASE_URL: sb.url, PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }) });
    const missing = await cli(join(dir, 'missing.csv'), '--json');
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.stdout)).toEqual({ exitCode: 2, error: expect.stringContaining('no such file') as string });

    await writeBatch(dir, 'payroll.csv', { rows: 1, currencies: ['GBP'], prefix: 'JSONERR' });
    expect((await cli(join(dir, 'payroll.csv'))).code).toBe(0);
    await copyFile(join(dir, 'payroll.csv'), join(dir, 'copy.csv'));
    const again = await cli(join(dir, 'copy.csv'), '--json');
    expect(again.code).toBe(3);
    expect(JSON.parse(again.stdout)).toEqual({ exitCode: 3, refused: [expect.stringContaining('same content as') as string] });
  });
});

// A reader that goes away (`run ... 2>&1 | head`, `validate big.csv | head`) silences the output,
// never the command: the run goes on to its end, writes its results and exits with its own code.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { cleanEnv, runCli, tempDirs, writeBatch } from '../engine/helpers.ts';
import { startSb } from '../ops/helpers.ts';

let sb: LocalSandbox;
const dirs = tempDirs('pb-closed-pipe-');
beforeAll(async () => {
  sb = await startSb();
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

describe('stdout and stderr closed by their reader', () => {
  it('run: the batch is finished, its results written, and the exit code is the run’s (1: a row invalid), not 0', async () => {
    const dir = await dirs.make();
    await writeBatch(dir, 'payroll.csv', { rows: 3, currencies: ['GBP'], prefix: 'PIPE', amount: (i) => ['10.00', 'abc', '12.00'][i]! });
    const r = await runCli(['run', 'payroll.csv', '-y', '--base-url', sb.url], {
      cwd: dir,
      env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }),
      // each pipe closed at its first line: the plan on stdout, the plan's log line on stderr
      onSpawn: (c) => {
        c.stdout!.once('data', () => c.stdout!.destroy());
        c.stderr!.once('data', () => c.stderr!.destroy());
      },
    });
    expect(r.code).toBe(1);
    const results = await readFile(join(dir, 'payroll.results.csv'), 'utf8');
    expect(results.match(/,PENDING,/g)).toHaveLength(2);
    expect(results).toContain(',INVALID,');
  });

  it('validate: a long report cut short still exits 1 (rows invalid), with no error of the pipe', async () => {
    const dir = await dirs.make();
    await writeBatch(dir, 'big.csv', { rows: 5000, currencies: ['GBP'], amount: () => 'abc' });
    const r = await runCli(['validate', 'big.csv', '--max-problems', '0'], {
      cwd: dir,
      env: cleanEnv(),
      onSpawn: (c) => c.stdout!.once('data', () => c.stdout!.destroy()),
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
  });
});

// A retry's output is written under a partial name and renamed when complete (issue 29, item 5):
// a retry killed midway (kill -9 while its initiates are in flight) leaves no retry-1 that looks finished, and
// the retry run again writes retry-1, complete, not retry-2.
import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { readResults } from '../../src/results/results.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { cleanEnv, ledgerJournals, runCli, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';
import { until } from '../ops/helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-retry-partial-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

describe('an interrupted retry', () => {
  it('killed while sending: no retry-1; the retry run again writes retry-1, complete', async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    const file = await writeBatch(dir, 'payroll.csv', { rows: 4, currencies: ['EUR'] });
    // every row invalid in the batch, fixed in its results file: the retry sends all four
    await writeFile(file, (await readFile(file, 'utf8')).replaceAll(',EUR,EUR,', ',EURO,EUR,'));
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
    const cli = (args: string[], onSpawn?: (c: ChildProcess) => void) =>
      runCli([...args, '--base-url', sb!.url, '--rate', '100'], { cwd: dir, env, onSpawn });
    // (one row has to be sent for retry to find the batch's journal: the first, fixed in the batch)
    await writeFile(file, (await readFile(file, 'utf8')).replace(',EURO,EUR,', ',EUR,EUR,'));
    // (the run sets the scene: by main() in this process)
    const run = await runMain(['run', 'payroll.csv', '--yes', '--base-url', sb.url, '--rate', '100'], { cwd: dir, env });
    expect(run.code).toBe(1);
    const results = join(dir, 'payroll.results.csv');
    await writeFile(results, (await readFile(results, 'utf8')).replaceAll(',EURO,EUR,', ',EUR,EUR,'));

    // The initiates answer after 30 s: the retry is killed once its journal says they are sent.
    const initiated = () =>
      ledgerJournals(join(dir, 'state')).flatMap((j) => readFileSync(j, 'utf8').match(/"t":"initiating"/g) ?? []).length;
    const before = initiated();
    sb.setFaults({ latencyMs: [30_000, 30_000], routes: ['initiate'] });
    const partial = join(dir, 'payroll.results.retry-1.partial.csv');
    let child: ChildProcess | undefined;
    const killed = cli(['retry', 'payroll.results.csv', '--yes'], (c) => (child = c));
    const final = join(dir, 'payroll.results.retry-1.csv');
    await until(() => initiated() > before, 20_000, 'the retry to journal an initiate');
    child!.kill('SIGKILL');
    expect((await killed).signal).toBe('SIGKILL');
    // (the results are written once, at the end: killed, the retry leaves none, partial or final)
    expect((await readdir(dir)).filter((n) => /retry-\d+(\.partial)?\.csv$/.test(n))).toEqual([]);
    expect(existsSync(partial) || existsSync(final)).toBe(false);

    sb.setFaults({});
    const again = await cli(['retry', 'payroll.results.csv', '--yes']);
    expect(again.code, again.stderr).toBe(0);
    const names = (await readdir(dir)).filter((n) => n.includes('retry'));
    expect(names.filter((n) => !n.startsWith('.')).sort()).toEqual(['payroll.results.retry-1.csv', 'payroll.results.retry-1.html']);
    const done = await readResults(final);
    expect(done.rows.map((r) => r.result.status)).toEqual(['PENDING', 'PENDING', 'PENDING', 'PENDING']);
    expect(again.stdout).toContain('payroll.results.retry-1.csv');
  });
});

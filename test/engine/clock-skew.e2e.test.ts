// This host's clock ahead of the service's: a payout this run created is this run's, never one
// "already paid at this account" (engine/execute.ts createdBefore reads the service's own clock,
// its answers' Date, against its createdAt). The sandbox dates its answers by its own clock.
import { afterAll, expect, it } from 'vitest';
import { join } from 'node:path';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { readResults } from '../../src/results/read.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { cliIn, initiates, tempDirs, writeBatch } from './helpers.ts';

const dirs = tempDirs('pb-skew-');
let sb: LocalSandbox | undefined;
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

it("a run on a host whose clock is 30 s ahead of the service's reports its payouts as created, and their money", async () => {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null, now: () => Date.now() - 30_000 });
  const dir = await dirs.make();
  await writeBatch(dir, 'payroll.csv', { rows: 4 });
  const { cli } = cliIn(dir, sb.url);
  const run = await cli('run', 'payroll.csv', '--yes', '--json');
  expect(run.code, run.stderr).toBe(0);
  expect(initiates(sb)).toHaveLength(4);
  expect(JSON.parse(run.stdout)).toMatchObject({ summary: { created: 4 } });
  const table = await readResults(join(dir, 'payroll.results.csv'));
  expect(table.rows.map((r) => r.result.status)).toEqual(['PENDING', 'PENDING', 'PENDING', 'PENDING']);
});

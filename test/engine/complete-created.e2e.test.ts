// A service whose initiate answers with only what spec §4.2 promises (the sandbox's variant reading:
// no fee, no createdAt): what the results need is read from the payout list after the rows, a page
// for up to 100 payouts, never one GET per row, and every row still shows the fee applied.
import { afterAll, expect, it } from 'vitest';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { readResults } from '../../src/results/read.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliIn, initiates, ledgerJournals, tempDirs, writeBatch } from './helpers.ts';

const dirs = tempDirs('pb-complete-');
let sb: LocalSandbox | undefined;
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

it('a minimal initiate answer is completed from the payout list, not by a GET per row', async () => {
  sb = await startSandbox({ shapes: 'variant', rateLimitPerSecond: null });
  const dir = await dirs.make();
  await writeBatch(dir, 'payroll.csv', { rows: 12 });
  const { cli, state } = cliIn(dir, sb.url);
  const run = await cli('run', 'payroll.csv', '--yes');
  expect(run.code, run.stderr).toBe(0);
  expect(initiates(sb)).toHaveLength(12);
  const count = (route: string) => sb!.requestLog().filter((r) => r.route === route).length;
  expect(count('getPayout')).toBe(0);
  expect(count('listPayouts')).toBe(1);
  // one `created` line per payout, and the `completed` line of what the list added to it
  const lines = readFileSync(ledgerJournals(state)[0]!, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { t: string });
  expect(lines.filter((l) => l.t === 'created')).toHaveLength(12);
  expect(lines.filter((l) => l.t === 'completed')).toHaveLength(12);
  const table = await readResults(join(dir, 'payroll.results.csv'));
  for (const row of table.rows) {
    expect(row.result.status).toBe('PENDING');
    expect(row.result.fee, `row ${row.rowNumber}`).toMatch(/^\d+\.\d+$/);
  }
});

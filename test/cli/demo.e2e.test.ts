import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { readResults } from '../../src/results/read.ts';

const run = promisify(execFile);

describe('payout-batch demo (npm run demo)', () => {
  it('runs the sample payroll end to end on the embedded sandbox: every row created once, results written outside samples/, exact balances', async () => {
    const { stdout, stderr } = await run(process.execPath, ['dist/bin.js', 'demo', '--json', '--rate', '200'], { timeout: 90_000 });
    expect(stderr).toBe('');
    const outcome = JSON.parse(stdout);
    expect(outcome.first.exitCode).toBe(0);
    expect(outcome.first.summary.byStatus).toEqual({ PENDING: 52 });
    expect(outcome.payoutsAtSandbox).toBe(52);
    // The same batch again found everything created and sent nothing.
    expect(outcome.replay).toEqual({ exitCode: 0, alreadyCreated: 52, initiatesSent: 0 });
    expect(outcome.balancesMatch).toBe(true);
    // The month-end reconciliation of the results ties out, and its file is beside them.
    expect(outcome.reconciliation).toMatchObject({ tiesOut: true, problems: [] });
    expect(outcome.reconciliation.file).toMatch(/payroll-2025-01\.results\.reconciliation\.csv$/);
    expect(outcome.resultsPath).not.toMatch(/\/samples\//);
    const results = await readResults(outcome.resultsPath);
    expect(results.rows).toHaveLength(52);
    expect(results.rows.every((r) => r.result.status === 'PENDING' && /^pb3-[0-9a-f]{32}-1$/.test(r.result.idempotencyKey ?? ''))).toBe(
      true,
    );
    // Rows with documents carry their documentUrls; the SEPA row with two files has both.
    expect(results.rows.filter((r) => (r.result.documentUrls ?? '').includes(';')).length).toBeGreaterThanOrEqual(1);
    expect(await readFile(outcome.journalPath, 'utf8')).toMatch(/"t":"initiating"/);
  });

  it('tells the story in plain lines and exits 0', async () => {
    const { stdout } = await run(process.execPath, ['dist/bin.js', 'demo', '--rate', '200'], { timeout: 90_000 });
    expect(stdout).toMatch(/Started the embedded sandbox/);
    expect(stdout).toMatch(/Confirmation skipped/);
    expect(stdout).toMatch(/Plan for .*payroll-2025-01\.csv/);
    expect(stdout).toMatch(/sent 0 initiate requests: nothing was paid twice/);
    expect(stdout).toMatch(/PENDING\s+52/);
    expect(stdout).toMatch(/Results file: .*payroll-2025-01\.results\.csv/);
    expect(stdout).toMatch(/52 of 52 payouts found with their debit/);
    expect(stdout).toMatch(/Everything ties out\./);
  });
});

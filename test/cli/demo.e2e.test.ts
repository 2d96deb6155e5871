import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { runDemo } from '../../src/demo/tour.ts';
import { readResults } from '../../src/results/read.ts';

const exec = promisify(execFile);
/** A temporary folder of the test's own, as the demo's TMPDIR: what the demo leaves behind is in it. */
const tmps: string[] = [];
const ownTmp = async () => tmps[tmps.push(await mkdtemp(join(tmpdir(), 'demo-test-'))) - 1]!;
afterEach(async () => {
  await Promise.all(tmps.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});
const run = async (args: string[], tmp: string) =>
  exec(process.execPath, ['dist/bin.js', ...args], { timeout: 90_000, env: { ...process.env, TMPDIR: tmp } });

describe('payout-batch demo (npm run demo)', () => {
  it('runs the sample payroll end to end on the embedded sandbox: every row created once, results written outside samples/, exact balances', async () => {
    const tmp = await ownTmp();
    const { stdout, stderr } = await run(['demo', '--json', '--rate', '200', '--keep'], tmp);
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
    // --keep: both temporary folders stay, named
    expect(outcome.kept.sort()).toEqual([dirname(outcome.resultsPath), dirname(outcome.journalPath)].sort());
    expect((await readdir(tmp)).sort()).toEqual(outcome.kept.map((d: string) => d.slice(tmp.length + 1)).sort());
  });

  it('tells the story in plain lines and exits 0', async () => {
    const tmp = await ownTmp();
    const { stdout } = await run(['demo', '--rate', '200'], tmp);
    expect(stdout).toMatch(/Started the embedded sandbox/);
    expect(stdout).toMatch(/Confirmation skipped/);
    expect(stdout).toMatch(/Plan for .*payroll-2025-01\.csv/);
    expect(stdout).toMatch(/sent 0 initiate requests: nothing was paid twice/);
    expect(stdout).toMatch(/PENDING\s+52/);
    expect(stdout).toMatch(/results +.*payroll-2025-01\.results\.csv/);
    expect(stdout).toMatch(/52 of 52 payouts found with their debit/);
    expect(stdout).toMatch(/Everything ties out\./);
    // every amount it prints grouped as the summary's: 8,601,000.50, not 8601000.50
    expect(stdout).toMatch(/net per currency: CNY -40,540\.00, .*NGN -8,601,000\.50/);
    // issue 43, 15g: its temporary folders (the copy, results and reports; the journal's) are gone, and it says how to keep them
    expect(stdout).toMatch(/Removed its folders \(.*payout-batch-demo-.*\): `npm run demo -- --keep` keeps/);
    expect(await readdir(tmp)).toEqual([]);
  });

  it('removes its temporary folders when it fails too', async () => {
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = await ownTmp();
    try {
      const failing = runDemo({
        onPlan: () => {
          throw new Error('the plan could not be shown');
        },
      });
      await expect(failing).rejects.toThrow('the plan could not be shown');
      expect(await readdir(process.env.TMPDIR)).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });
});

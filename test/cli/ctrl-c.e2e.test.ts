// Ctrl-C during a run, as a real process against a recording sandbox: the CLI says at once that it
// is stopping, no payout starts after the signal (no `initiating` line is journalled after the
// acknowledgement, and the sandbox receives no initiate beyond those), the requests in flight are
// answered and journalled, the rows not started are NOT_SENT, the exit code is its own (130), and
// running the same command again pays the rest, one payout per row; then a retry with nothing
// to send writes nothing.
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { allPayouts, cleanEnv, initiates, ledgerJournals, runCli, workDir, writeBatch } from '../engine/helpers.ts';
import { until } from '../ops/helpers.ts';

let sb: LocalSandbox;
beforeAll(async () => {
  // A slow initiate keeps rows in flight when the signal comes; documents are uploaded before it.
  sb = await startSandbox({
    shapes: TEST_SHAPES,
    rateLimitPerSecond: 1000,
    monthlyQuota: null,
    faults: { latencyMs: [300, 300], routes: ['initiate'] },
  });
});
afterAll(() => sb?.close());

const ROWS = 30;

/** The keys the journal holds an `initiating` line for. */
const initiatingKeys = (journal: string): string[] =>
  readFileSync(journal, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"t":"initiating"'))
    .map((l) => (JSON.parse(l) as { key: string }).key);

describe('Ctrl-C during a run', () => {
  it('stops at once: no payout starts after the signal, the rest is NOT_SENT, exit 130; running again pays the rest once', async () => {
    const dir = await workDir('pb-ctrlc-');
    await writeBatch(dir, 'payroll.csv', { rows: ROWS, prefix: 'CTRLC', documentsEvery: 3 });
    const state = join(dir, 'state');
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: state });
    const args = ['run', 'payroll.csv', '--yes', '--base-url', sb.url, '--rate', '20', '--concurrency', '4'];
    let child: ChildProcess | undefined;
    let stderr = '';
    let atAcknowledgement: string[] | undefined;
    const run = runCli(args, {
      cwd: dir,
      env,
      onSpawn: (c) => {
        child = c;
        c.stderr!.on('data', (d) => {
          stderr += d;
          // the moment the CLI says it is stopping: what the journal holds then
          if (!atAcknowledgement && stderr.includes('stopping:')) atAcknowledgement = initiatingKeys(ledgerJournals(state)[0]!);
        });
      },
    });
    await until(() => initiates(sb).length >= 5, 30_000, 'five initiates');
    child!.kill('SIGINT');
    const r = await run;

    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).toMatch(
      /stopping: no new payout will start; waiting for \d+ rows? in flight to be answered and journalled; press Ctrl-C again to stop at once/,
    );
    expect(atAcknowledgement).toBeDefined();
    const journalled = initiatingKeys(ledgerJournals(state)[0]!);
    // No `initiating` line after the acknowledgement, and each journalled key went out once: no initiate started after the signal.
    expect(journalled).toEqual(atAcknowledgement);
    expect(initiates(sb)).toHaveLength(journalled.length);
    expect(await allPayouts(sb)).toHaveLength(journalled.length);
    expect(journalled.length).toBeLessThan(ROWS);

    const results = readFileSync(join(dir, 'payroll.results.csv'), 'utf8');
    const notSent = results.split('\n').filter((l) => l.includes('NOT_SENT'));
    expect(notSent).toHaveLength(ROWS - journalled.length);
    for (const line of notSent) expect(line).toMatch(/stopped on request \(Ctrl-C\) before this payout started/);
    expect(r.stderr).toMatch(/Stopped on request: no payout was started after the signal/);
    expect(r.stderr).not.toContain('preflight:'); // (its steps are for a terminal)

    const again = await runCli(args, { cwd: dir, env });
    expect(again.code, again.stderr).toBe(0);
    expect(initiates(sb)).toHaveLength(ROWS);
    expect(await allPayouts(sb)).toHaveLength(ROWS);

    // Every row paid: a retry has nothing to send, and writes no retry-N file (the results file holds every row).
    const retry = await runCli(['retry', 'payroll.results.csv', '--yes', '--base-url', sb.url], { cwd: dir, env });
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stdout).toContain(`results      ${join(dir, 'payroll.results.csv')}`);
    expect(readdirSync(dir).filter((f) => f.includes('retry'))).toEqual([]);
    expect(initiates(sb)).toHaveLength(ROWS);
  });
});

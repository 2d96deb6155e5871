// The "Done when": a 300-row batch, the CLI killed with SIGKILL at random moments (at
// least 5 times) under faults, then resumed to completion. Exactly one payout per row, wallets
// debited by exactly the results file's totalDeductible. Scaled: the client at 400 requests per
// second (at the spec's 5/s this test would take minutes; at 100/s, seconds of pacing per run),
// small latency, the sandbox's limit off. The rate promise is not measured here (counted at the
// server's arrival times it depends on the machine's load): test/client/throttle.test.ts tests it
// on the client's own starts, and test/bench/throughput.ts measures it.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Dec } from '../../src/money.ts';
import { readResults } from '../../src/results/read.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { until } from '../ops/helpers.ts';
import { KEY, allPayouts, cleanEnv, runCli, wallets, workDir, writeBatch, type CliRun } from './helpers.ts';

const RATE = 400;
const ROWS = 300;
let sb: LocalSandbox | undefined;
afterAll(async () => {
  await sb?.close();
});

describe('kill -9 at random moments, then resume (scaled: the client at 400/s)', () => {
  it(`${ROWS} rows under faults, at least 5 SIGKILLs: one payout per row, exact balances`, async () => {
    const sandbox = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null, randomSeed: 20261122 });
    sb = sandbox;
    const dir = await workDir('pb-kill-');
    await writeBatch(dir, 'payroll.csv', { rows: ROWS, documentsEvery: 10, prefix: 'KILL' });
    const opening = await wallets(sb);
    sb.setFaults({ latencyMs: [2, 25], errorAfterCreate: 0.05, dropAfterCreate: 0.05, spurious429: 0.02 });
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
    const args = ['run', 'payroll.csv', '--base-url', sb.url, '--yes', '--rate', String(RATE)];

    let kills = 0;
    const runs: CliRun[] = [];
    let finished = false;
    // Kill after a random number of the run's own requests (1 to 120): in preflight, sending or
    // settling, never in the process's startup, whose length depends on how loaded the machine is
    // (a kill there would test nothing, and the journal would not exist yet).
    for (let round = 0; round < 12 && kills < 5; round++) {
      const after = 1 + Math.floor(Math.random() * 120);
      const from = sandbox.requestLog().length;
      const r = await runCli(args, {
        cwd: dir,
        env,
        timeoutMs: 60_000,
        onSpawn: (child) => {
          const poll = setInterval(() => {
            if (sandbox.requestLog().length - from < after) return;
            clearInterval(poll);
            child.kill('SIGKILL');
          }, 5);
          child.on('exit', () => clearInterval(poll));
        },
      });
      runs.push(r);
      // The child is gone (runCli resolved on its 'close'), but the sandbox may still be answering
      // its last requests (latency faults): wait until it has answered them all, so that they do
      // not count towards the next run's kill point.
      if (r.signal === 'SIGKILL') await until(() => sandbox.inFlight() === 0, 10_000, 'the killed run to be answered');
      if (r.signal === 'SIGKILL') kills++;
      else if (r.code === 0) {
        finished = true;
        break;
      }
    }
    expect(kills).toBeGreaterThanOrEqual(5);
    let last: CliRun | undefined;
    for (let i = 0; i < 4 && !finished; i++) {
      last = await runCli(args, { cwd: dir, env, timeoutMs: 90_000 });
      runs.push(last);
      if (last.code === 0) finished = true;
    }
    expect(finished, last ? `${last.stdout}\n${last.stderr.slice(-2000)}` : 'finished before the 5th kill').toBe(true);

    sb.setFaults({});
    // Exactly one payout per row.
    const payouts = await allPayouts(sb);
    expect(payouts).toHaveLength(ROWS);
    expect(new Set(payouts.map((p) => `${p.sourceCurrency} ${p.sourceAmount}`)).size).toBe(ROWS);
    // The results file: every row created, and the wallets moved by exactly its totals.
    const results = await readResults(join(dir, 'payroll.results.csv'));
    expect(results.rows).toHaveLength(ROWS);
    expect(results.rows.filter((r) => r.result.status === 'PENDING')).toHaveLength(ROWS);
    expect(new Set(results.rows.map((r) => r.result.payoutId)).size).toBe(ROWS);
    const debited = new Map<string, Dec>();
    for (const r of results.rows) {
      const c = r.cells.sourceCurrency!;
      debited.set(c, (debited.get(c) ?? new Dec(0)).plus(new Dec(r.result.totalDeductible!)));
    }
    const closing = await wallets(sb);
    for (const [c, open] of opening) {
      expect(new Dec(closing.get(c)!).toFixed(2), c).toBe(new Dec(open).minus(debited.get(c) ?? 0).toFixed(2));
    }
    // The resumed runs said what they found.
    expect(runs.some((r) => /Resuming this batch/.test(r.stdout))).toBe(true);
    // The key is in no output and no file of the batch folder.
    for (const r of runs) expect(r.stdout + r.stderr).not.toContain(KEY);
    expect(await readFile(join(dir, 'payroll.results.csv'), 'utf8')).not.toContain(KEY);
    // Generous: at least 6 CLI processes in turn (each pays Node's start-up) and 300 rows at 400/s
    // with latency faults, on 2 cores shared with the other test files.
  }, 150_000);
});

// `listen` applying webhooks to a batch while `run` is still sending it: the run's results file,
// written at its end, must keep the statuses listen recorded (in the journal), not write back
// the PENDING each payout had when it was created. Real processes and real HTTP: the CLI run in a
// child, the sandbox's signed webhooks to the listener on 127.0.0.1.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerSubscription, startListener } from '../../src/follow-up/webhook-receiver.ts';
import { readResults } from '../../src/results/results.ts';
import {
  cleanEnv,
  connectionTo,
  ledgerJournals,
  listenTeardown,
  runCli,
  setStatus,
  startSb,
  until,
  workDir,
  writeBatch,
} from './helpers.ts';

const SECRET = 'whsec_during_run_0123456789';
const t = listenTeardown('pb-listen-run-');

/** The journal's whole lines so far (a line being written is left out). */
const journalLines = () => {
  const journal = ledgerJournals()[0];
  if (!journal) return [];
  return readFileSync(journal, 'utf8')
    .split('\n')
    .slice(0, -1)
    .map((l) => JSON.parse(l) as { t: string; payoutId?: string; status?: string; payout?: { id: string } });
};
const statusLines = () => journalLines().filter((l) => l.t === 'status');

describe('listen while the batch is still running', () => {
  it("the run's results file ends with the statuses listen applied during the run", async () => {
    t.sb = await startSb();
    const dir = await workDir('pb-listen-run-');
    await writeBatch(dir, 'batch.csv', { rows: 200, currencies: ['GBP'], prefix: 'LDR' });
    const results = join(dir, 'batch.results.csv');
    t.listener = await startListener({ port: 0, secret: SECRET, stateDir: join(dir, 'listen-state'), results: [results] });
    await registerSubscription(connectionTo(t.sb).client, t.listener.url, SECRET);
    // Slow enough that the run is still sending after the webhooks.
    t.sb.setFaults({ latencyMs: [150, 250] });

    let exited = false;
    const run = runCli(['run', 'batch.csv', '--base-url', t.sb.url, '--yes', '--rate', '15'], {
      cwd: dir,
      env: cleanEnv(),
      timeoutMs: 120_000,
    }).finally(() => (exited = true));

    // The journal shows created rows (the results file is written once, at the end); move the first one on at the service.
    let payoutId = '';
    await until(
      () => {
        payoutId = journalLines().find((l) => l.t === 'created')?.payout?.id ?? '';
        return payoutId !== '';
      },
      30_000,
      'the journal to record a created row',
    );
    await setStatus(t.sb, payoutId, 'PROCESSING');
    await setStatus(t.sb, payoutId, 'SUCCESSFUL');
    await until(
      () => statusLines().some((l) => l.payoutId === payoutId && l.status === 'SUCCESSFUL'),
      10_000,
      'listen to record SUCCESSFUL',
    );
    // Otherwise this test would prove nothing: the run must write its results after listen did.
    expect(exited, 'the run finished before listen applied the webhooks: make the batch longer').toBe(false);

    const r = await run;
    expect(r.code, r.stderr.slice(-1500)).toBe(0);
    const row = (await readResults(results)).rows.find((x) => x.result.payoutId === payoutId)!;
    expect(row.result.status).toBe('SUCCESSFUL');
    // The others stayed as created, and nothing moved back.
    const statuses = new Set((await readResults(results)).rows.filter((x) => x.result.payoutId !== payoutId).map((x) => x.result.status));
    expect([...statuses]).toEqual(['PENDING']);
    expect(r.stdout).toMatch(/SUCCESSFUL\s+1\b/);
    // Generous: the run is slow on purpose (200 rows at 15/s with 150-250 ms latency, ~15 s) so
    // that listen applies a webhook while it still runs, and it is a child process on 2 loaded cores.
  }, 120_000);
});

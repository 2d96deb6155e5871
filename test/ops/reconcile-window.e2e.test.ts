// `reconcile` looks past the batch (issue 29 item 3), over real HTTP against the sandbox: a debit
// made a minute after the batch's last movement that no batch of this account explains is named,
// apart from the batch's own tie-out, which it does not fail (issue 43 item 5: another state
// folder's payouts are not this batch's problems), unless `--until` ends the period before it
// (another batch's debit is named as that batch's: reconcile.e2e.test.ts); and the original results file
// of a batch whose failed row `retry --resend-failed` paid again ties out with the rows' latest
// state from the ledger, naming the latest results file (that reconcile, about the ledger, not a
// process, by main() in this process).
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { Dec } from '../../src/money.ts';
import { readResults, writeResults } from '../../src/results/results.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { runMain } from '../engine/helpers.ts';
import { cleanEnv, connectionTo, paidBatch, runCli, setStatus, startSb, unattended, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

/** The sandbox's clock moves on (control route): what it stamps next is that much later. */
async function advanceClock(s: LocalSandbox, ms: number): Promise<void> {
  const r = await fetch(`${s.url}/_sandbox/clock/advance`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ms }),
  });
  if (r.status !== 200) throw new Error(`clock: ${r.status} ${await r.text()}`);
}

/** A payout from the same wallet sent from another state folder (another user or host): this ledger never saw it. */
async function strayPayout(s: LocalSandbox, dir: string): Promise<{ ref: string; total: string }> {
  const file = await writeBatch(dir, 'stray.csv', { rows: 1, prefix: 'STRAY', currencies: ['GBP'], amount: () => '7.77' });
  const stateDir = await mkdtemp(join(tmpdir(), 'pb-stray-state-'));
  const r = await runBatch({ file, conn: connectionTo(s), ...unattended({ settleDelayMs: 10 }), stateDir });
  if (r.kind !== 'ok') throw new Error(`stray payout not made: ${r.kind}`);
  const row = (await readResults(r.resultsPath)).rows[0]!.result;
  return { ref: row.payoutRef!, total: row.totalDeductible! };
}

interface Debit {
  id: string;
  amount: string;
  currency: string;
  walletId: string;
  reference: string;
  createdAt: string;
}

describe('reconcile looks past the batch', () => {
  it("names a debit a minute after the batch that nothing explains apart, not as the batch's failure; --until leaves it out", async () => {
    sb = await startSb();
    const { dir, results } = await paidBatch(sb, { rows: 2, amount: (i) => ['100.10', '20.05'][i]! });
    await advanceClock(sb, 60_000);
    const stray = await strayPayout(sb, dir);
    const env = cleanEnv();
    const conn = ['--base-url', sb.url, '--rate', '100'];

    const r = await runCli(['reconcile', results, ...conn, '--json'], { cwd: dir, env });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const j = JSON.parse(r.stdout);
    const [debit] = j.unexplained as Debit[];
    expect(j.unexplained).toEqual([
      {
        id: expect.any(String),
        type: 'DEBIT',
        amount: `-${stray.total}`,
        currency: 'GBP',
        walletId: j.totals[0].walletIds[0],
        reference: stray.ref,
        createdAt: expect.any(String),
      },
    ]);
    expect(j.totals).toMatchObject([{ currency: 'GBP', ok: true }]); // the batch itself ties out
    expect(j.tiesOut).toBe(true);
    expect(j.problems).toEqual([]);
    const named = `unexplained debit -${stray.total} GBP in wallet ${debit!.walletId} at ${debit!.createdAt} (reference ${stray.ref}, transaction ${debit!.id})`;
    expect(j.others).toEqual([named]);
    expect(j.period.to).toBeUndefined(); // up to the time it ran

    // the run's report stays the run's: reconcile writes its own beside it
    const runReport = join(dir, 'batch.results.html');
    writeFileSync(runReport, 'the report run wrote');
    const text = await runMain(['reconcile', results, ...conn], { cwd: dir, env }); // (the text: main() in this process)
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('1 unexplained debit, ');
    expect(text.stdout).toContain(`  - ${named}`);
    expect(text.stdout).not.toContain('  ! ');
    expect(text.stdout).not.toContain('Does not tie out');
    expect(text.stdout).toContain(`This batch ties out; 1 debit of the period is not this batch's (above).`);
    expect(readFileSync(runReport, 'utf8')).toBe('the report run wrote');
    const own = join(dir, 'batch.results.reconciliation.html');
    expect(text.stdout).toContain(`Report: ${own}`);
    expect(readFileSync(own, 'utf8')).toContain(stray.ref);

    // The period ended before that debit: the batch ties out.
    const until = new Date(Date.parse(debit!.createdAt) - 30_000).toISOString();
    const bounded = await runMain(['reconcile', results, ...conn, '--until', until, '--json'], { cwd: dir, env });
    expect(bounded.code, bounded.stdout).toBe(0);
    expect(JSON.parse(bounded.stdout)).toMatchObject({ tiesOut: true, unexplained: [], period: { to: until } });
  }, 180_000);

  it('reconciles an original results file after a resend with the latest state, and names the latest file', async () => {
    sb = await startSb();
    const { dir, results, ids } = await paidBatch(sb, { rows: 3, amount: (i) => ['300.10', '45.05', '0.30'][i]! });
    await setStatus(sb, ids[1]!, 'FAILED', { reason: 'bank closed the account' });
    const env = cleanEnv();
    const conn = ['--base-url', sb.url, '--rate', '100'];
    // the scene (status, then the failed row paid again) in this process: the bin's main()
    expect((await runMain(['status', results, ...conn], { cwd: dir, env })).code).toBe(1);
    const retry = await runMain(['retry', results, '--resend-failed', '--yes', ...conn], { cwd: dir, env });
    expect(retry.code, retry.stderr + retry.stdout).toBe(0);
    const latest = join(dir, 'batch.results.retry-1.csv');
    expect(existsSync(latest)).toBe(true);
    const now = (await readResults(latest)).rows.map((x) => x.result);
    expect(now[1]!.payoutId).not.toBe(ids[1]);

    const r = await runMain(['reconcile', results, ...conn, '--json'], { cwd: dir, env });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const j = JSON.parse(r.stdout);
    // the net is what the wallet moved: the three payouts now, the failed one refunded
    const paid = now.reduce((a, x) => a.plus(x.totalDeductible!), new Dec(0)).toFixed(2);
    expect(j.totals).toMatchObject([{ currency: 'GBP', net: `-${paid}`, expectedNet: `-${paid}`, ok: true }]);
    expect(j.rows.map((x: { payoutId: string }) => x.payoutId)).toEqual(now.map((x) => x.payoutId));
    expect(j.superseded).toEqual({ rows: [3], latest });
    expect(j.rows[1].earlier).toEqual([expect.objectContaining({ payoutId: ids[1], net: '0.00', ok: true })]);

    const text = await runMain(['reconcile', results, ...conn], { cwd: dir, env }); // (the text: main() in this process)
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`the latest results file is ${latest}`);

    // the latest saved as a workbook (a resend's results kept in Excel): still the one named
    const book = latest.replace(/\.csv$/, '.xlsx');
    await writeResults(book, { ...(await readResults(latest)), format: 'xlsx' });
    rmSync(latest);
    const again = await runMain(['reconcile', results, ...conn, '--json'], { cwd: dir, env });
    expect(JSON.parse(again.stdout).superseded).toEqual({ rows: [3], latest: book });
  }, 180_000);
});

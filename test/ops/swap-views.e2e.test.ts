// The swap after the run (issue 28), over real HTTP: a paid GBP batch whose journal holds a swap
// made here as swap-send would (POST swap with the batch's reference and key, then its lines);
// `status` refreshes it with one swaps-list request and prints it, `reconcile` ties its two legs
// out apart from the payouts, and the run's summary lists it. Before the swap, status asks the
// swaps list nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JournalWriter } from '../../src/journal/journal.ts';
import { readJournal } from '../journal/read-journal.ts';
import { runBatch } from '../../src/engine/pipeline.ts';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { swapReference, swapSnapshotOf } from '../../src/engine/swap.ts';
import type { SwapEvent } from '../../src/journal/lines.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { cliIn } from '../engine/helpers.ts';
import {
  cleanEnv,
  connectionTo,
  eurToGbpSwap,
  ledgerJournals,
  paidBatch,
  runCli,
  runMain,
  startSb,
  unattended,
  workDir,
  writeBatch,
} from './helpers.ts';

let sb: LocalSandbox;
beforeAll(async () => {
  sb = await startSb({ monthlyQuota: null });
});
afterAll(() => sb.close());

const swapRequests = () => sb.requestLog().filter((e) => e.route === 'listSwaps' || e.route === 'getSwap');

describe('the batch swap after the run', () => {
  it('status refreshes and prints it with one swaps-list request, reconcile ties both legs out, the summary lists it', async () => {
    const { dir, file, results } = await paidBatch(sb, { rows: 2, amount: (i) => ['100.10', '20.05'][i]! });
    const env = cleanEnv();
    const cli = (...args: string[]) => runCli([...args, '--base-url', sb.url, '--rate', '100'], { cwd: dir, env });
    const inProcess = (...args: string[]) => runMain([...args, '--base-url', sb.url, '--rate', '100'], { cwd: dir, env });

    // no swap in the journal: status asks the swaps list nothing (in process: the CLI's own step)
    const conn = connectionTo(sb);
    const before = await refreshStatus({ client: conn.client, resultsFile: results, ledgers: [ledgerOf(conn)] });
    expect([before.kind, before.swaps]).toEqual(['not-finished', []]);
    expect(swapRequests()).toEqual([]);

    // the swap, as swap-send makes it: the batch's reference and key, journalled around the request
    const journal = ledgerJournals()[0]!;
    const batchId = readJournal(journal).events.find((e) => e.t === 'batch')!.batchId as string;
    const reference = swapReference([batchId], 'GBP');
    const key = idempotencyKey(reference, 1, 'swap');
    const { client } = conn;
    const body = await eurToGbpSwap(client, reference);
    const at = new Date().toISOString();
    const lines: SwapEvent[] = [
      { t: 'swap', phase: 'initiating', currency: 'GBP', reference, attempt: 1, key, body: JSON.stringify(body), at },
    ];
    const created = await client.swap(JSON.stringify(body), { idempotencyKey: key });
    lines.push({ t: 'swap', phase: 'created', currency: 'GBP', reference, attempt: 1, key, swap: swapSnapshotOf(created.swap), at });
    const w = JournalWriter.open(journal);
    for (const l of lines) w.append(l);
    w.close();
    const id = created.swap.id;
    expect((await fetch(`${sb.url}/_sandbox/swaps/${id}/status`, { method: 'POST', body: '{"status":"SUCCESSFUL"}' })).status).toBe(200);

    const st = await cli('status', results);
    expect(st.code, st.stderr).toBe(5);
    expect(st.stdout).toContain(`swap to GBP ${reference}: ${id} SUCCESSFUL, 1,000.00 EUR -> 851.80 GBP at 0.8518`);
    expect(st.stdout).toContain(`swap to GBP ${id}: PROCESSING -> SUCCESSFUL`);
    expect(st.stdout).toMatch(/, 1 swap page, 0 swap status\)/);
    expect(swapRequests().map((e) => e.route)).toEqual(['listSwaps']);
    const statusLines = readJournal(journal).events.filter((e) => e.t === 'swap' && e.phase === 'status');
    expect(statusLines).toMatchObject([{ currency: 'GBP', reference, swap: { id, status: 'SUCCESSFUL', destinationAmount: '851.80' } }]);

    const rec = await inProcess('reconcile', results, '--json'); // (status is the process)
    expect(rec.code, rec.stderr + rec.stdout).toBe(0);
    const j = JSON.parse(rec.stdout);
    expect(j.problems).toEqual([]);
    expect(j.swaps).toMatchObject([
      { currency: 'GBP', reference, id, status: 'SUCCESSFUL', sourceCurrency: 'EUR', debit: '-1000.00', credit: '851.80', ok: true },
    ]);
    const totals = Object.fromEntries(j.totals.map((t: { currency: string }) => [t.currency, t]));
    expect(totals.EUR).toMatchObject({ debited: '0.00', swapped: '-1000.00', net: '-1000.00', ok: true });
    expect(totals.GBP).toMatchObject({ swapped: '851.80', ok: true });
    expect(j.unexplained).toEqual([]);
    expect(j.explained).toEqual([]);
    // status's swap being final now, it is not asked again
    expect(swapRequests()).toHaveLength(1);

    // the run resumed: its summary lists the swap as the journal last knew it
    const again = await runBatch({ file, conn: connectionTo(sb), ...unattended({ settleDelayMs: 10 }) });
    expect(again.summary.swaps).toEqual([
      {
        currency: 'GBP',
        reference,
        id,
        status: 'SUCCESSFUL',
        sourceAmount: '1000.00',
        sourceCurrency: 'EUR',
        destinationAmount: '851.80',
        destinationCurrency: 'GBP',
        exchangeRate: '0.8518',
      },
    ]);
  });

  it('run --fund-by-swap swaps once and pays every row; its summary lists the swap and reconcile ties out with it', async () => {
    // two USD withdrawals the USD wallet (1,000,000.00) cannot cover; the EUR wallet funds the rest
    const dir = await workDir('pb-swap-views-');
    await writeBatch(dir, 'payroll.csv', { rows: 2, prefix: 'FUND', currencies: ['USD'], amount: (i) => ['600000.00', '450000.00'][i]! });
    const { cli, inProcess } = cliIn(dir, sb.url);
    const run = await cli('run', 'payroll.csv', '--yes', '--fund-by-swap', '--json', '--no-report');
    expect(run.code, run.stderr).toBe(0);
    const { summary } = JSON.parse(run.stdout);
    expect(summary.created).toBe(2);
    expect(summary.swaps).toMatchObject([{ currency: 'USD', status: 'PROCESSING', sourceCurrency: 'EUR', destinationCurrency: 'USD' }]);
    const reference = summary.swaps[0].reference as string;
    const swaps = (await connectionTo(sb).client.listSwaps({ limit: 100 })).data.filter((x) => x.payoutRef === reference);
    expect(swaps.map((x) => x.id)).toEqual([summary.swaps[0].id]);

    // (reconcile by main() in this process: the case above runs it as a process)
    const rec = await inProcess('reconcile', 'payroll.results.csv', '--json', '--no-report');
    expect(rec.code, rec.stderr + rec.stdout).toBe(0);
    const j = JSON.parse(rec.stdout);
    expect(j.swaps).toMatchObject([
      { currency: 'USD', reference, credit: summary.swaps[0].destinationAmount, debit: `-${summary.swaps[0].sourceAmount}`, ok: true },
    ]);
    expect(j.totals.find((t: { currency: string }) => t.currency === 'USD')).toMatchObject({
      swapped: summary.swaps[0].destinationAmount,
      ok: true,
    });
  });
});

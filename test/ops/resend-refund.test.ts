// retry --resend-failed sends nothing while the refund of a failed payout is not in the wallet's
// transactions (the service's answer is withheld here), and the journal refuses a `resend` line for
// a payout that is not failed and refunded; once the refund shows, the retry itself confirms the
// failure and the refund with the service, journals them and sends the row again once. `status`
// reports no X -> X refresh as a move. A failed row edited into another row's payee and amount is
// a new payment: refused as a probable duplicate.

import { readFileSync } from 'node:fs';
import { describe, expect, it, afterEach } from 'vitest';
import { readResults, writeResults } from '../../src/results/results.ts';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import { isRealMove } from '../../src/follow-up/apply-status.ts';
import { foldJournal, type JournalLine } from '../../src/journal/lines.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, applyToTable, unattended, connectionTo, paidBatch, setStatus, startSb } from './helpers.ts';
import { retryResults } from '../engine/helpers.ts';

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

/** A fetch whose wallet transactions never show anything. */
const noTransactions: typeof fetch = async (input, init) => {
  const url = String(input instanceof Request ? input.url : input);
  if (url.includes('/api/public/transactions'))
    return new Response(JSON.stringify({ statusCode: 200, message: 'ok', data: [], meta: { total: 0, page: 1, limit: 50, size: 0 } }), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  return fetch(input, init);
};

/** `retry RESULTS --resend-failed --yes` in this process. */
const resendFailed = (resultsFile: string, conn = connectionTo(sb!)) =>
  retryResults({ ...unattended({ settleDelayMs: 10 }), resultsFile, conn, resendFailed: true });

/** A paid batch of two rows of 20.00 whose first payout FAILED (refund shown), its results edited, then retry --resend-failed. */
async function resendEdited(edit: (table: Awaited<ReturnType<typeof readResults>>) => void) {
  sb = await startSb();
  const { results, ids } = await paidBatch(sb, { rows: 2, amount: () => '20.00' });
  await setStatus(sb, ids[0]!, 'FAILED');
  await refreshStatus({ client: connectionTo(sb).client, resultsFile: results });
  const table = await readResults(results);
  edit(table);
  await writeResults(results, table);
  const r = await resendFailed(results);
  return { r, ids };
}

describe('resend only after the refund', () => {
  it('keeps a failed row whose refund is not there yet, sends nothing, and says so', async () => {
    sb = await startSb();
    const { results, ids } = await paidBatch(sb, { rows: 2 });
    await setStatus(sb, ids[0]!, 'FAILED');
    const conn = connectionTo(sb, noTransactions);
    const st = await refreshStatus({ client: conn.client, resultsFile: results });
    expect(st.failed).toEqual([expect.objectContaining({ payoutId: ids[0], refunded: undefined })]);
    expect(st.money.GBP!.refundsNotSeen).toBe(1);
    const before = sb.requestLog().filter((r) => r.route === 'initiate').length;
    const r = await resendFailed(results, conn);
    expect(sb.requestLog().filter((x) => x.route === 'initiate').length).toBe(before);
    expect(r.resent).toBe(0);
    expect(r.notResent).toEqual([
      expect.objectContaining({ payoutId: ids[0], status: 'FAILED', reason: expect.stringContaining('refund is not in') }),
    ]);
    expect(r.kind).toBe('rows-failed');
    expect(r.plan?.toSend).toEqual([]);
  });

  it('finds the refund `status` could not see yet, journals it, and sends the row again once', async () => {
    sb = await startSb();
    const { results, ids } = await paidBatch(sb, { rows: 2 });
    await setStatus(sb, ids[0]!, 'FAILED');
    await refreshStatus({ client: connectionTo(sb, noTransactions).client, resultsFile: results });
    const r = await resendFailed(results);
    expect([r.kind, r.resent, r.notResent]).toEqual(['ok', 1, []]);
    const lines = readFileSync(r.journalPath, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as JournalLine);
    expect(lines.filter((l) => l.t === 'refund')).toEqual([expect.objectContaining({ payoutId: ids[0], amount: expect.any(String) })]);
    expect(await allPayouts(sb)).toHaveLength(3);
    expect((await resendFailed(results)).resent).toBe(0);
    expect(await allPayouts(sb)).toHaveLength(3);
  });

  it.each([
    ['PENDING', 'the results file says FAILED, the service does not: nothing is sent', 2],
    ['FAILED', 'only the results file knew it FAILED: the retry asks the service, then sends the row again once', 3],
  ])('service %s: %s', async (service, _why, payouts) => {
    sb = await startSb();
    const { results, ids } = await paidBatch(sb, { rows: 2 });
    if (service === 'FAILED') await setStatus(sb, ids[0]!, 'FAILED');
    const table = await readResults(results);
    table.rows[0]!.result.status = 'FAILED';
    await writeResults(results, table);
    const r = await resendFailed(results);
    expect([r.resent, r.notResent]).toEqual([payouts - 2, []]);
    expect(await allPayouts(sb)).toHaveLength(payouts);
  });

  for (const other of ['kept', 'deleted'] as const)
    it(`a failed row edited into another row's payee and amount (that row ${other}) is not resent: a probable duplicate, said`, async () => {
      const { r, ids } = await resendEdited((table) => {
        for (const c of table.inputColumns) if (c !== 'reference') table.rows[0]!.cells[c] = table.rows[1]!.cells[c]!;
        if (other === 'deleted') table.rows.pop();
      });
      expect(r.resent).toBe(0);
      expect(r.notResent).toEqual([expect.objectContaining({ payoutId: ids[0], reason: expect.stringMatching(/probable duplicate/) })]);
      expect(await allPayouts(sb!)).toHaveLength(2);
    });

  it('a failed row edited into an invalid one is kept as it was, not resent, and says why', async () => {
    const { r, ids } = await resendEdited((table) => {
      table.rows[0]!.cells.sourceAmount = 'ten';
    });
    expect(r.resent).toBe(0);
    expect(r.notResent).toEqual([
      expect.objectContaining({
        rowNumber: 2,
        payoutId: ids[0],
        status: 'FAILED',
        reason: expect.stringMatching(/^the row is not valid as it stands: /),
      }),
    ]);
    expect((await readResults(r.resultsPath)).rows[0]!.result).toMatchObject({ status: 'FAILED', payoutId: ids[0] });
    expect(await allPayouts(sb!)).toHaveLength(2);
  });

  it('folds a resend line only for a failed, refunded payout', () => {
    const payout = { id: 'p1', status: 'PENDING', sourceAmount: 10, sourceCurrency: 'GBP', destinationCurrency: 'EUR', documents: 0 };
    const base: JournalLine[] = [
      { t: 'initiating', ref: 'R', row: 2, attempt: 1, key: 'k1', body: '{}', at: 'a' },
      { t: 'created', ref: 'R', attempt: 1, key: 'k1', requestId: 'q', payout, at: 'a' },
    ];
    const resend: JournalLine = { t: 'resend', ref: 'R', payoutId: 'p1', at: 'b' };
    expect(foldJournal([...base, resend]).rows.get('R')!.phase).toBe('created'); // in progress
    const failed: JournalLine = { t: 'status', ref: 'R', payoutId: 'p1', status: 'FAILED', source: 'get', at: 'b' };
    expect(foldJournal([...base, failed, resend]).rows.get('R')!.phase).toBe('created'); // no refund seen
    const refund: JournalLine = { t: 'refund', ref: 'R', payoutId: 'p1', amount: '10.50', at: 'c' };
    const s = foldJournal([...base, failed, refund, resend]).rows.get('R')!;
    expect(s.phase).toBe('rejected');
    expect(s.earlier?.map((p) => p.id)).toEqual(['p1']);
    // a second initiating is accepted only now, for attempt 2
    const again = foldJournal([
      ...base,
      failed,
      refund,
      resend,
      { t: 'initiating', ref: 'R', row: 2, attempt: 2, key: 'k2', body: '{}', at: 'd' },
    ]);
    expect(again.rows.get('R')).toMatchObject({ phase: 'initiating', attempt: 2, key: 'k2' });
  });
});

describe('status reports only real moves', () => {
  it('a newer copy of the same status refreshes the row but is not a move', () => {
    const table = {
      format: 'csv' as const,
      inputColumns: ['reference'],
      rows: [{ rowNumber: 2, cells: { reference: 'R' }, result: { status: 'PENDING', payoutId: 'p1', updatedAt: '2025-01-01T00:00:00Z' } }],
    };
    const r = applyToTable(table, 'f.csv', [{ payoutId: 'p1', status: 'PENDING', at: '2025-01-02T00:00:00Z', source: 'get' }]);
    expect(r.applied).toHaveLength(1);
    expect(r.applied.filter(isRealMove)).toEqual([]);
  });
});

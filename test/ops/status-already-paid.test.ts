// A batch some of whose rows another batch of the account had already paid (ALREADY_PAID, with that
// batch's payout): their payouts and money stay the other batch's, in `status` as in the run, and
// `reconcile` ties out this batch's own payouts only.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { reconcile } from '../../src/follow-up/reconciliation.ts';
import { applyStatus } from '../../src/follow-up/apply-status.ts';
import { foldAll } from '../../src/ledger/account-ledger.ts';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { readResults, writeResults } from '../../src/results/results.ts';
import { connectionTo, paidBatch, startSb, unattended, writeBatch } from './helpers.ts';

/** GEN-0001 and GEN-0002 paid by a first batch; then a file of GEN-0001..3 run from another state folder. */
async function paidAgain(sb: LocalSandbox) {
  const first = await paidBatch(sb, { rows: 2 });
  const conn = connectionTo(sb);
  const file = await writeBatch(first.dir, 'again.csv', { rows: 3, currencies: ['GBP'] });
  // (the service answers the same references' keys with the first batch's payouts)
  const stateDir = join(first.dir, 'other-state');
  const again = await runBatch({ file, conn, stateDir, ...unattended({ settleDelayMs: 10 }) });
  const statuses = async () => (await readResults(again.resultsPath)).rows.map((r) => r.result.status);
  expect(await statuses()).toEqual(['ALREADY_PAID', 'ALREADY_PAID', 'PENDING']);
  // `status again.results.csv --state-dir other-state`: that folder's ledger and the default one
  const o = { client: conn.client, resultsFile: again.resultsPath, ledgers: [ledgerOf(conn, { root: stateDir }), ledgerOf(conn)] };
  return { o, statuses };
}

describe('a batch with rows another batch paid', () => {
  it("status keeps them ALREADY_PAID and counts this batch's money only", async () => {
    const sb = await startSb();
    try {
      const { o, statuses } = await paidAgain(sb);
      const status = await refreshStatus(o);
      expect(await statuses()).toEqual(['ALREADY_PAID', 'ALREADY_PAID', 'PENDING']);
      expect(status.money).toEqual({ GBP: { payouts: 1, debited: '14.02', refunded: '0.00', net: '14.02' } });
    } finally {
      await sb.close();
    }
  });

  it("reconcile ties out this batch's payout only, never the other batch's debits", async () => {
    const sb = await startSb();
    try {
      const { o } = await paidAgain(sb);
      const report = (await reconcile(o)).report!;
      expect(report.totals.map((t) => [t.currency, t.net, t.expectedNet, t.ok])).toEqual([['GBP', '-14.02', '-14.02', true]]);
      expect(report.counts.created).toBe(1);
      expect(report.rows.map((r) => r.created)).toEqual([false, false, true]);
      expect(report.unexplained).toEqual([]);
      expect(report.ok).toBe(true);
    } finally {
      await sb.close();
    }
  });

  it('status and reconcile leave a row left out for another batch as it is (a plan made while that batch was sending)', async () => {
    const sb = await startSb();
    try {
      const first = await paidBatch(sb, { rows: 2 });
      const conn = connectionTo(sb);
      // the results of a plan's batch of the same rows, run from the same ledger: left out, no key of their own
      const table = await readResults(first.results);
      const elsewhere = { status: 'NOT_SENT', errorCode: 'SENT_BY_ANOTHER_BATCH', errorMessage: 'sent by another batch: left out' };
      const rows = table.rows.map((r) => ({ ...r, result: elsewhere }));
      const again = join(first.dir, 'again.results.csv');
      await writeResults(again, { ...table, rows });
      const o = { client: conn.client, resultsFile: again, ledgers: [ledgerOf(conn)] };
      const status = await refreshStatus(o);
      expect((await readResults(again)).rows.map((r) => [r.result.status, r.result.payoutId])).toEqual([
        ['NOT_SENT', undefined],
        ['NOT_SENT', undefined],
      ]);
      expect(status.money).toEqual({});
      const report = (await reconcile(o)).report!;
      expect(report.counts.created).toBe(0);
    } finally {
      await sb.close();
    }
  });

  it("a status change of the other batch's payout reaches that batch's journal (listen --results of this batch)", async () => {
    const sb = await startSb();
    try {
      const first = await paidBatch(sb, { rows: 1 });
      const conn = connectionTo(sb);
      const table = await readResults(first.results);
      const rows = table.rows.map((r) => ({ ...r, result: { ...r.result, status: 'ALREADY_PAID', errorCode: 'ALREADY_PAID' } }));
      const again = join(first.dir, 'again.results.csv');
      await writeResults(again, { ...table, rows });
      const at = new Date(Date.now() + 1000).toISOString();
      const update = { payoutId: first.ids[0]!, status: 'PROCESSING', at, source: 'webhook' as const };
      await applyStatus([{ file: again }], [update], { ledgers: [ledgerOf(conn)] });
      const [a] = await foldAll([ledgerOf(conn)]);
      expect([...a!.folded.rows.values()].map((s) => s.payout?.status)).toEqual(['PROCESSING']);
      expect((await readResults(again)).rows.map((r) => r.result.status)).toEqual(['ALREADY_PAID']);
    } finally {
      await sb.close();
    }
  });
});

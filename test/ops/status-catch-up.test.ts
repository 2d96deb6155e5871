// `status` brings a row up to the ledger's latest state (a status `listen` put only in the journal)
// and keeps what only the results file holds: the screening clearance the row was sent under.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { applyStatus } from '../../src/follow-up/apply-status.ts';
import { foldAll } from '../../src/ledger/account-ledger.ts';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import { readResults, writeResults } from '../../src/results/results.ts';
import type { ResultRow } from '../../src/results/types.ts';
import { connectionTo, paidBatch, setStatus, sortApart, startSb } from './helpers.ts';

describe('status catching up with the ledger', () => {
  it("keeps the row's screening clearance", async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 2 });
      const conn = connectionTo(sb);
      const clearance = 'clr-7f3a (ofac:36218, signed by Ada Lovelace, Alan Turing, until 2026-12-31T00:00:00.000Z)';
      const table = await readResults(b.results);
      table.rows[0]!.result.screeningClearance = clearance;
      await writeResults(b.results, table);
      // listen without --results: the status went to the batch's journal only
      await setStatus(sb, b.ids[0]!, 'PROCESSING');
      const at = new Date(Date.now() + 1000).toISOString();
      await applyStatus([], [{ payoutId: b.ids[0]!, status: 'PROCESSING', at, source: 'webhook' }], { ledgers: [ledgerOf(conn)] });

      await refreshStatus({ client: conn.client, resultsFile: b.results, ledgers: [ledgerOf(conn)] });
      const rows = (await readResults(b.results)).rows.map((r) => r.result);
      expect(rows.map((r) => r.status)).toEqual(['PROCESSING', 'PENDING']);
      expect(rows[0]!.screeningClearance).toBe(clearance);
    } finally {
      await sb.close();
    }
  });

  it('takes the ledger\'s "under review" when the row shows PENDING, the status the same (listen-fuzz)', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 1 });
      const conn = connectionTo(sb);
      // asked for information and answered while only the journal was kept up to date (a copy re-saved before, say)
      await setStatus(sb, b.ids[0]!, 'ADDITIONAL_INFO_REQUIRED');
      await setStatus(sb, b.ids[0]!, 'PENDING');
      const at = (s: number) => new Date(Date.now() + s * 1000).toISOString();
      await applyStatus(
        [],
        [
          { payoutId: b.ids[0]!, status: 'ADDITIONAL_INFO_REQUIRED', at: at(1), source: 'webhook' },
          { payoutId: b.ids[0]!, status: 'PENDING', statusDetail: 'ADDITIONAL_INFO_UNDER_REVIEW', at: at(2), source: 'webhook' },
        ],
        { ledgers: [ledgerOf(conn)] },
      );

      // (the payout list shows PENDING, as the row does, and no statusDetail: spec §2)
      await refreshStatus({ client: conn.client, resultsFile: b.results, ledgers: [ledgerOf(conn)] });
      const row = (await readResults(b.results)).rows[0]!.result;
      expect([row.status, row.statusDetail]).toEqual(['PENDING', 'ADDITIONAL_INFO_UNDER_REVIEW']);
    } finally {
      await sb.close();
    }
  });

  it('asked for information again after a person cleared the updatedAt cells: the row waits for us, not "under review" (listen-fuzz)', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 1 });
      const conn = connectionTo(sb);
      const status = () => refreshStatus({ client: conn.client, resultsFile: b.results, ledgers: [ledgerOf(conn)] });
      await setStatus(sb, b.ids[0]!, 'ADDITIONAL_INFO_REQUIRED');
      await status();
      await setStatus(sb, b.ids[0]!, 'PENDING');
      await status();
      const table = await readResults(b.results);
      expect(table.rows[0]!.result.statusDetail).toBe('ADDITIONAL_INFO_UNDER_REVIEW');
      delete table.rows[0]!.result.updatedAt;
      await writeResults(b.results, table);

      await setStatus(sb, b.ids[0]!, 'ADDITIONAL_INFO_REQUIRED'); // (asked again: spec §3)
      await status();
      const row = (await readResults(b.results)).rows[0]!.result;
      expect([row.status, row.statusDetail]).toEqual(['ADDITIONAL_INFO_REQUIRED', undefined]);
    } finally {
      await sb.close();
    }
  });

  it('asked for information again after a person cleared the updatedAt cells: listen puts it in the journal, status in the row (listen-fuzz)', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 1 });
      const conn = connectionTo(sb);
      const ledgers = [ledgerOf(conn)];
      const at = (s: number) => new Date(Date.now() + s * 1000).toISOString();
      const listen = (status: string, when: string, statusDetail?: string) =>
        applyStatus([{ file: b.results }], [{ payoutId: b.ids[0]!, status, statusDetail, at: when, source: 'webhook' }], { ledgers });
      await listen('ADDITIONAL_INFO_REQUIRED', at(1));
      await listen('PENDING', at(2), 'ADDITIONAL_INFO_UNDER_REVIEW');
      const table = await readResults(b.results);
      delete table.rows[0]!.result.updatedAt;
      await writeResults(b.results, table);

      await setStatus(sb, b.ids[0]!, 'ADDITIONAL_INFO_REQUIRED'); // (asked again: spec §3)
      const asked = at(3);
      const r = await listen('ADDITIONAL_INFO_REQUIRED', asked);
      expect(r.ignored.map((c) => c.decision.why)).toEqual(['older']); // (the row cannot tell it newer)
      const journal = [...(await foldAll(ledgers))[0]!.folded.rows.values()][0]!.payout!;
      expect([journal.status, journal.statusDetail, journal.updatedAt]).toEqual(['ADDITIONAL_INFO_REQUIRED', undefined, asked]);

      await refreshStatus({ client: conn.client, resultsFile: b.results, ledgers });
      const row = (await readResults(b.results)).rows[0]!.result;
      expect([row.status, row.statusDetail]).toEqual(['ADDITIONAL_INFO_REQUIRED', undefined]);
    } finally {
      await sb.close();
    }
  });

  it('moves the row that names the payout, wherever it stands, never a copy of it', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 3 });
      const conn = connectionTo(sb);
      const table = await readResults(b.results);
      const [r0, r1, r2] = table.rows as [ResultRow, ResultRow, ResultRow];
      // (a person sorted the rows, pasted a copy of the first and cleared the last's key and payout id)
      const bare = (r: ResultRow) => ({ ...r, result: { status: r.result.status } });
      const rows = [r2, bare(r0), r0, bare(r1)].map((r, i) => ({ ...r, rowNumber: i + 2 }));
      await writeResults(b.results, { ...table, rows });
      await setStatus(sb, b.ids[0]!, 'PROCESSING');
      const at = new Date(Date.now() + 1000).toISOString();
      await applyStatus([], [{ payoutId: b.ids[0]!, status: 'PROCESSING', at, source: 'webhook' }], { ledgers: [ledgerOf(conn)] });

      await refreshStatus({ client: conn.client, resultsFile: b.results, ledgers: [ledgerOf(conn)] });
      const after = (await readResults(b.results)).rows.map((r) => r.result);
      expect(after.map((r) => r.payoutId)).toEqual([b.ids[2], undefined, b.ids[0], b.ids[1]]);
      expect(after.map((r) => r.status)).toEqual(['PENDING', 'PENDING', 'PROCESSING', 'PENDING']);
    } finally {
      await sb.close();
    }
  });
});

describe('status of a results file whose batch columns were sorted apart from its result columns', () => {
  it('is refused naming the row, the file left as it was', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 2 });
      const conn = connectionTo(sb);
      await sortApart(b.results);
      const before = await readFile(b.results);
      // the first payout moved on in the journal only (listen without --results)
      await setStatus(sb, b.ids[0]!, 'PROCESSING');
      const at = new Date(Date.now() + 1000).toISOString();
      await applyStatus([], [{ payoutId: b.ids[0]!, status: 'PROCESSING', at, source: 'webhook' }], { ledgers: [ledgerOf(conn)] });

      const status = refreshStatus({ client: conn.client, resultsFile: b.results, ledgers: [ledgerOf(conn)] });
      await expect(status).rejects.toMatchObject({ name: 'BatchRefused', message: expect.stringMatching(/ row 2: .*GEN-0002.*GEN-0001/) });
      expect((await readFile(b.results)).equals(before)).toBe(true);
    } finally {
      await sb.close();
    }
  });
});

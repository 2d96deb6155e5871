// `reconcile` and `status` of a batch whose columns bear an export's names ("Payment Reference",
// "Currency"): each row is named by its reference, as the statement names it. The reconciliation of
// an Excel results file is a workbook of the same lines.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import * as XLSX from 'xlsx';
import { reconcile, reconciliationWorkbook } from '../../src/follow-up/reconciliation.ts';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import { readResults, writeResults } from '../../src/results/results.ts';
import { readResultsSheet } from '../../src/results/xlsx-reader.ts';
import { connectionTo, paidBatch, setStatus, sortApart, startSb } from './helpers.ts';

describe('reconcile and status of a batch with export column names', () => {
  // (status named the rows that moved by a column called `reference` only: without their reference here)
  it('name each row by its reference', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 2 });
      const text = await readFile(b.results, 'utf8');
      await writeFile(b.results, text.replace('reference,sourceAmount,sourceCurrency,', 'Payment Reference,Amount,Currency,'));
      const rc = await reconcile({ client: connectionTo(sb).client, resultsFile: b.results });
      expect(rc.report?.rows.map((r) => [r.reference, r.currency])).toEqual([
        ['GEN-0001', 'GBP'],
        ['GEN-0002', 'GBP'],
      ]);
      for (const id of b.ids) await setStatus(sb, id, 'PROCESSING');
      const st = await refreshStatus({ client: connectionTo(sb).client, resultsFile: b.results });
      expect(st.moved.map((c) => [c.rowNumber, c.reference, c.to])).toEqual([
        [2, 'GEN-0001', 'PROCESSING'],
        [3, 'GEN-0002', 'PROCESSING'],
      ]);
    } finally {
      await sb.close();
    }
  });
});

describe('reconcile of a results file whose batch columns were sorted apart from its result columns', () => {
  it("is refused naming the row, never tying one row's payout to another's reference", async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 2 });
      const conn = connectionTo(sb);
      await sortApart(b.results);
      const rc = reconcile({ client: conn.client, resultsFile: b.results, ledgers: [ledgerOf(conn)] });
      await expect(rc).rejects.toMatchObject({ name: 'BatchRefused', message: expect.stringMatching(/ row 2: .*GEN-0002.*GEN-0001/) });
    } finally {
      await sb.close();
    }
  });
});

describe('reconcile --statement of a results file whose row lost its payout id cell', () => {
  it("names the payout the tie-out gives the row by its journal, with the row's reference", async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 2 });
      const conn = connectionTo(sb);
      const table = await readResults(b.results);
      const { payoutId: _id, payoutRef: _ref, ...kept } = table.rows[0]!.result;
      await writeResults(b.results, { ...table, rows: [{ ...table.rows[0]!, result: kept }, table.rows[1]!] });
      const statement = join(b.dir, 'statement.xml');
      const rc = await reconcile({ client: conn.client, resultsFile: b.results, ledgers: [ledgerOf(conn)], statement });
      expect(rc.report?.rows.map((r) => [r.reference, r.payoutId, r.ok])).toEqual([
        ['GEN-0001', b.ids[0], true],
        ['GEN-0002', b.ids[1], true],
      ]);
      const entries = (await readFile(statement, 'utf8')).split('<Ntry>').slice(1);
      const kindAndId = (e: string) => [/<Cd>([A-Z]+)<\/Cd>\s*<Issr>/.exec(e)?.[1], /<EndToEndId>([^<]*)</.exec(e)?.[1]];
      expect(entries.map(kindAndId).sort()).toEqual([
        ['PAYOUT', 'GEN-0001'],
        ['PAYOUT', 'GEN-0002'],
      ]);
    } finally {
      await sb.close();
    }
  });
});

describe('reconcile of an Excel results file', () => {
  it('writes the reconciliation as a workbook beside it: the lines of the CSV one, amounts as numbers in a money format', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 2 });
      const xlsx = b.results.replace(/\.csv$/, '.xlsx');
      await writeResults(xlsx, { ...(await readResults(b.results)), format: 'xlsx' });
      const client = connectionTo(sb).client;
      const csv = (await reconcile({ client, resultsFile: b.results })).reconciliationPath!;
      const rc = await reconcile({ client, resultsFile: xlsx });
      expect(rc.reconciliationPath).toBe(xlsx.replace(/\.xlsx$/, '.reconciliation.xlsx'));
      const wb = XLSX.read(await readFile(rc.reconciliationPath!), { cellNF: true });
      expect(wb.SheetNames).toEqual(['Reconciliation']);
      const sheet = wb.Sheets.Reconciliation!;
      const cells = XLSX.utils.sheet_to_json<unknown[]>(sheet, { header: 1, raw: true, defval: '' });
      const records: string[][] = parse(await readFile(csv), { bom: true });
      const [header, ...lines] = records;
      const money = new Set(['totalDeductible', 'debit', 'refund', 'net']);
      expect(cells[0]).toEqual(header);
      expect(cells.slice(1)).toEqual(lines.map((l) => l.map((v, i) => (money.has(header![i]!) && v !== '' ? Number(v) : v))));
      const debit = XLSX.utils.encode_cell({ r: 1, c: header!.indexOf('debit') });
      expect([sheet[debit]?.t, sheet[debit]?.z]).toEqual(['n', '#,##0.00']);
    } finally {
      await sb.close();
    }
  });

  it("keeps a workbook's text as the CSV has it: a literal _x0041_ and a CR read back as written, an overlong problem cut", async () => {
    const text = 'INV_x0041_\rB';
    // SheetJS refused to write text over Excel's 32,767 characters: the whole workbook was lost
    const buf = Buffer.from(await reconciliationWorkbook([{ reference: text, problem: 'y'.repeat(40_000) }]));
    // read as Excel reads it: the cell's XML, its _xHHHH_ escapes undone once
    const [header, line] = readResultsSheet(buf, 'r.xlsx', 'Reconciliation', (_, m) => new Error(m)).records.map((r) => r.values);
    expect(line![header!.indexOf('reference')]).toBe(text);
    expect(line![header!.indexOf('problem')]).toMatch(/^y{32766}…$/);
  });
});

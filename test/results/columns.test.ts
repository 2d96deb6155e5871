import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as XLSX from 'xlsx';
import {
  RESULT_COLUMNS,
  NUMERIC_RESULT_COLUMNS,
  resultsPathFor,
  splitColumns,
  writeResults,
  readResults,
  ResultsError,
} from '../../src/results/index.ts';
import { readBatch, type RawRow } from '../../src/input/index.ts';
import { BATCH_COLUMNS, batchRow, createdResult, csvLines, table, tempDir } from './helpers.ts';

const tmp = tempDir('pb-results-cols-');
afterAll(tmp.cleanup);

describe('column order', () => {
  it('writes the input columns in their order, unknown ones kept, then the result columns', async () => {
    const p = tmp.path('order.csv');
    const cols = ['Cost centre', 'reference', 'zzz unknown', ...BATCH_COLUMNS.filter((c) => c !== 'reference' && c !== 'Cost centre')];
    await writeResults(p, { ...table('csv'), inputColumns: cols });
    expect(csvLines(p)[0]!.split(',')).toEqual([...cols, ...RESULT_COLUMNS]);
    const back = await readResults(p);
    expect(back.inputColumns).toEqual(cols);
    expect(back.rows[0]!.cells['zzz unknown']).toBe('');
    expect(back.rows[0]!.cells['Cost centre']).toBe('CC-7');
  });

  it('sorts rows by rowNumber', async () => {
    const p = tmp.path('sorted.csv');
    const t = table('csv', 4);
    await writeResults(p, { ...t, rows: [...t.rows].reverse() });
    const back = await readResults(p);
    expect(back.rows.map((r) => r.cells.reference)).toEqual(['PAY-1', 'PAY-2', 'PAY-3', 'PAY-4']);
    expect(back.rows.map((r) => r.rowNumber)).toEqual([2, 3, 4, 5]);
  });

  it('exports the numeric columns', () => {
    expect([...NUMERIC_RESULT_COLUMNS].sort()).toEqual([
      'appliedRate',
      'destinationAmount',
      'fee',
      'quotedRate',
      'refunded',
      'totalDeductible',
    ]);
    expect(RESULT_COLUMNS).toHaveLength(14);
  });

  it('does not repeat result columns when a results file is retried (columns as readBatch gives them)', async () => {
    const first = tmp.path('payroll.results.csv');
    await writeResults(first, table('csv', 2));
    const src = await readBatch(first);
    await src.close();
    // every header unique: the batch's documents column, the result's documentUrls
    expect(src.columns).toEqual([...BATCH_COLUMNS, ...RESULT_COLUMNS]);
    expect(new Set(src.columns).size).toBe(src.columns.length);
    const retry = tmp.path('payroll.results.retry-1.csv');
    await writeResults(retry, {
      format: 'csv',
      inputColumns: src.columns,
      rows: [{ rowNumber: 2, cells: batchRow(1), result: { status: 'PENDING', idempotencyKey: 'k2' } }],
    });
    expect(csvLines(retry)[0]!.split(',')).toEqual([...BATCH_COLUMNS, ...RESULT_COLUMNS]);
    const back = await readResults(retry);
    expect(back.inputColumns).toEqual(BATCH_COLUMNS);
    expect(back.rows[0]!.cells.documents).toBe('inv.pdf');
    expect(back.rows[0]!.result).toEqual({ status: 'PENDING', idempotencyKey: 'k2' });
  });

  it('keeps a batch column that only shares a name with a result column', () => {
    // a plain batch with its own "status" column is not a results layout: nothing is taken out
    expect(splitColumns(['reference', 'status', 'documents']).input).toEqual(['reference', 'status', 'documents']);
    const s = splitColumns(['reference', 'status', 'documents', ...RESULT_COLUMNS]);
    expect(s.isResults).toBe(true);
    expect(s.input).toEqual(['reference', 'status', 'documents']);
    expect(s.result.documentUrls).toBe('documentUrls');
  });

  it('round-trips a batch whose own columns are named status and documents', async () => {
    const p = tmp.path('own-status.csv');
    await writeResults(p, {
      format: 'csv',
      inputColumns: ['reference', 'status', 'documents'],
      rows: [
        {
          rowNumber: 2,
          cells: { reference: 'R1', status: 'employee', documents: 'a.pdf' },
          result: { status: 'PENDING', documentUrls: 'https://x/a.pdf' },
        },
      ],
    });
    const back = await readResults(p);
    expect(back.inputColumns).toEqual(['reference', 'status', 'documents']);
    expect(back.rows[0]!.cells).toEqual({ reference: 'R1', status: 'employee', documents: 'a.pdf' });
    expect(back.rows[0]!.result).toEqual({ status: 'PENDING', documentUrls: 'https://x/a.pdf' });
  });
});

describe('results files of the previous version (a "documents" result column)', () => {
  // As the previous version wrote them: the result column documentUrls was called "documents",
  // so a batch with its own documents column gave a header row naming "documents" twice.
  const OLD_RESULT = RESULT_COLUMNS.map((c) => (c === 'documentUrls' ? 'documents' : c));
  const oldCsv = [
    ['reference', 'sourceAmount', 'sourceCurrency', 'documents', ...OLD_RESULT].join(','),
    'PAY-1,100.00,EUR,inv.pdf;scan.png,PENDING,p-1,PO-1,k-1,,1,2.50,102.50,100.00,,,req-1,https://files.example/a.pdf; https://files.example/b.pdf,2025-01-31T09:30:00.000Z',
    'PAY-2,7.00,EUR,,FAILED_TO_SEND,,,k-2,,,,,,INSUFFICIENT_FUNDS,no funds,req-2,,',
  ].join('\r\n');

  it("reads the batch's documents as its own column and the last one as documentUrls", async () => {
    const p = tmp.path('old.results.csv');
    writeFileSync(p, `\uFEFF${oldCsv}\r\n`);
    const back = await readResults(p);
    expect(back.inputColumns).toEqual(['reference', 'sourceAmount', 'sourceCurrency', 'documents']);
    expect(back.rows[0]!.cells.documents).toBe('inv.pdf;scan.png');
    expect(back.rows[0]!.result).toMatchObject({
      status: 'PENDING',
      idempotencyKey: 'k-1',
      fee: '2.50',
      documentUrls: 'https://files.example/a.pdf; https://files.example/b.pdf',
      updatedAt: '2025-01-31T09:30:00.000Z',
    });
    expect(back.rows[1]!.result).toEqual({
      status: 'FAILED_TO_SEND',
      idempotencyKey: 'k-2',
      errorCode: 'INSUFFICIENT_FUNDS',
      errorMessage: 'no funds',
      requestId: 'req-2',
    });
    // written again (a retry's results): the new, unique names
    const again = tmp.path('old.results.retry-1.csv');
    await writeResults(again, back);
    expect(csvLines(again)[0]!.split(',')).toEqual(['reference', 'sourceAmount', 'sourceCurrency', 'documents', ...RESULT_COLUMNS]);
    expect((await readResults(again)).rows).toEqual(back.rows);
  });

  it('reads a lone "documents" in the result block as documentUrls, in CSV and XLSX', async () => {
    const header = ['reference', ...OLD_RESULT];
    const row = ['PAY-1', 'PENDING', 'p-1', '', 'k-1', '', '', '', '', '', '', '', '', 'https://files.example/a.pdf', ''];
    const csv = tmp.path('old-lone.results.csv');
    writeFileSync(csv, `${header.join(',')}\n${row.join(',')}\n`);
    const xlsx = tmp.path('old-lone.results.xlsx');
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([header, row]), 'Results');
    writeFileSync(xlsx, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);
    for (const p of [csv, xlsx]) {
      const back = await readResults(p);
      expect(back.inputColumns, p).toEqual(['reference']);
      expect(back.rows[0]!.result, p).toEqual({
        status: 'PENDING',
        payoutId: 'p-1',
        idempotencyKey: 'k-1',
        documentUrls: 'https://files.example/a.pdf',
      });
    }
  });

  it('takes a "documents" header for documentUrls only in the result block of a file without documentUrls', () => {
    // as readResults and readBatch name a repeated header
    expect(splitColumns(['reference', 'documents', ...OLD_RESULT.map((c) => (c === 'documents' ? 'documents (2)' : c))])).toMatchObject({
      input: ['reference', 'documents'],
      result: { documentUrls: 'documents (2)' },
    });
    // documentUrls there: every "documents" is the batch's own
    expect(splitColumns(['reference', 'status', 'idempotencyKey', 'documents', 'documentUrls'])).toMatchObject({
      input: ['reference', 'documents'],
      result: { status: 'status', idempotencyKey: 'idempotencyKey', documentUrls: 'documentUrls' },
    });
    // documentUrls cut out of a results file by hand: the batch's documents column (before status) stays the batch's
    const cut = splitColumns(['reference', 'documents', 'status', 'idempotencyKey']);
    expect(cut.input).toEqual(['reference', 'documents']);
    expect(cut.result.documentUrls).toBeUndefined();
  });
});

describe('reading a results file as a batch (retry input)', () => {
  it.each(['csv', 'xlsx'] as const)('readBatch maps its canonical columns and keeps result columns as extra cells (%s)', async (format) => {
    const p = tmp.path(`payroll.results.${format}`);
    await writeResults(p, { ...table(format, 2), delimiter: ';' });
    const src = await readBatch(p);
    const rows: RawRow[] = [];
    for await (const r of src.rows) rows.push(r);
    expect(src.fields.reference).toBe('reference');
    expect(src.fields.sourceAmount).toBe('sourceAmount');
    expect(src.fields.documents).toBe('documents');
    expect(src.mapping.status).toBeUndefined();
    expect(src.mapping.idempotencyKey).toBeUndefined();
    if (format === 'csv') expect(src.delimiter).toBe(';');
    expect(rows).toHaveLength(2);
    expect(rows[0]!.cells.reference).toBe('PAY-1');
    expect(rows[0]!.cells.status).toBe('PENDING');
    expect(rows[0]!.cells.idempotencyKey).toBe(createdResult(1).idempotencyKey);
    expect(rows[0]!.cells.fee).toBe('2.50');
    expect(rows[0]!.cells.documentUrls).toBe(createdResult(1).documentUrls);
    expect(rows[0]!.cells.documents).toBe('inv.pdf');
  });
});

describe('resultsPathFor', () => {
  it.each([
    ['payroll.csv', 'payroll.results.csv', 'csv'],
    ['in/payroll.xlsx', join('in', 'payroll.results.xlsx'), 'xlsx'],
    ['payroll.xls', 'payroll.results.xlsx', 'xlsx'],
    ['payroll.tsv', 'payroll.results.tsv', 'csv'],
    ['payroll', 'payroll.results.csv', 'csv'],
    ['payroll.results.csv', 'payroll.results.retry-1.csv', 'csv'],
    ['payroll.results.retry-1.csv', 'payroll.results.retry-2.csv', 'csv'],
    ['payroll.results.retry-9.xlsx', 'payroll.results.retry-10.xlsx', 'xlsx'],
  ])('%s → %s', (batch, path, format) => {
    expect(resultsPathFor(batch)).toEqual({ path, format });
  });

  it('follows the content when the reader found a workbook under a .csv name', () => {
    expect(resultsPathFor('payroll.csv', undefined, { inputFormat: 'xlsx' })).toEqual({ path: 'payroll.results.xlsx', format: 'xlsx' });
  });

  it('takes --results as given, its extension deciding the format', () => {
    expect(resultsPathFor('payroll.csv', 'out/r.xlsx')).toEqual({ path: 'out/r.xlsx', format: 'xlsx' });
    expect(resultsPathFor('payroll.xlsx', 'r.CSV')).toEqual({ path: 'r.CSV', format: 'csv' });
  });

  it('refuses --results with another extension or naming the batch itself', () => {
    expect(() => resultsPathFor('payroll.csv', 'r.xls')).toThrow(ResultsError);
    expect(() => resultsPathFor('payroll.csv', 'r.json')).toThrow(/\.csv or \.xlsx/);
    try {
      resultsPathFor('payroll.csv', './payroll.csv');
      expect.unreachable();
    } catch (e) {
      expect((e as ResultsError).code).toBe('BAD_RESULTS_PATH');
    }
  });
});

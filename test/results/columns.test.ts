import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as XLSX from 'xlsx';
import { resultHeaderOf } from '../../src/input/result-columns.ts';
import {
  RESULT_COLUMNS,
  NUMERIC_RESULT_COLUMNS,
  resultsPathFor,
  splitColumns,
  writeResults,
  readResults,
  ResultsError,
  type ResultsTable,
} from '../../src/results/results.ts';
import { readBatch, type RawRow } from '../../src/input/read-batch.ts';
import { BATCH_COLUMNS, batchRow, createdResult, csvLines, readSheet, table, tempDir } from './helpers.ts';

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

describe('a batch column named like a result column', () => {
  // the batch's own status and fee (an employee status, a fee it charges itself), and documents
  const OWN = ['reference', 'sourceAmount', 'status', 'fee', 'documents'];
  const own: ResultsTable = {
    format: 'csv',
    inputColumns: OWN,
    rows: [
      {
        rowNumber: 2,
        cells: { reference: 'R1', sourceAmount: '100.00', status: 'employee', fee: '1.00', documents: 'a.pdf' },
        result: { status: 'PENDING', idempotencyKey: 'k1', fee: '2.50', documentUrls: 'https://x/a.pdf' },
      },
      {
        rowNumber: 3,
        cells: { reference: 'R2', sourceAmount: '7.00', status: 'contractor', fee: '', documents: '' },
        result: { status: 'INVALID', errorCode: 'AMOUNT', errorMessage: 'too small' },
      },
    ],
  };
  const header = [...OWN, ...RESULT_COLUMNS.map((c) => (c === 'status' || c === 'fee' ? `result.${c}` : c))];

  it.each(['csv', 'xlsx'] as const)('keeps its name and the result column is result.<name>, read back apart (%s)', async (format) => {
    const p = tmp.path(`own.results.${format}`);
    await writeResults(p, { ...own, format });
    const written = format === 'csv' ? csvLines(p)[0]!.split(',') : XLSX.utils.sheet_to_json<string[]>(readSheet(p), { header: 1 })[0];
    expect(written).toEqual(header);
    expect(new Set(written).size).toBe(written!.length);
    const back = await readResults(p);
    expect(back.inputColumns).toEqual(OWN);
    expect(back.rows).toEqual(own.rows);
    // written again as a retry writes it: the same header, the same table
    const again = tmp.path(`own.results.retry-1.${format}`);
    await writeResults(again, back);
    expect(await readResults(again)).toEqual(back);
  });

  it('puts the prefix once more than on any batch column named like it', () => {
    expect(resultHeaderOf('status', ['reference'])).toBe('status');
    expect(resultHeaderOf('status', ['reference', 'status'])).toBe('result.status');
    expect(resultHeaderOf('status', ['status', 'result.result.status'])).toBe('result.result.result.status');
    expect(resultHeaderOf('fee', ['status', 'Fee', 'result.feeds'])).toBe('fee');
    const batch = ['reference', 'status', 'result.status', 'idempotencyKey'];
    const split = splitColumns([...batch, ...RESULT_COLUMNS.map((c) => resultHeaderOf(c, batch))]);
    expect(split.input).toEqual(batch);
    expect(split.result).toMatchObject({ status: 'result.result.status', idempotencyKey: 'result.idempotencyKey', fee: 'fee' });
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

  it.each(['csv', 'xlsx'] as const)(
    'readBatch gives its cells as the batch had them, not as neutralised for a spreadsheet (%s)',
    async (format) => {
      const p = tmp.path(`run-again.results.${format}`);
      const own = {
        accountName: '-Acme \u202e Ltd',
        narration: '+ bonus',
        reference: '=R-1',
        '@note': "'t Hooft",
        phoneNumber: '+447700900123',
      };
      const t = table(format, 1);
      await writeResults(p, {
        ...t,
        inputColumns: [...t.inputColumns, '@note'],
        rows: [{ ...t.rows[0]!, cells: { ...t.rows[0]!.cells, ...own } }],
      });
      const src = await readBatch(p);
      const rows: RawRow[] = [];
      for await (const r of src.rows) rows.push(r);
      expect(src.columns).toContain('@note');
      expect(rows[0]!.cells).toMatchObject(own);
    },
  );

  it('a batch that is not a results file keeps a leading apostrophe as written', async () => {
    const p = tmp.path('own.csv');
    writeFileSync(
      p,
      `${BATCH_COLUMNS.join(',')}\n${BATCH_COLUMNS.map((c) => (c === 'accountName' ? "'-Acme" : batchRow(1)[c])).join(',')}\n`,
    );
    const src = await readBatch(p);
    for await (const r of src.rows) expect(r.cells.accountName).toBe("'-Acme");
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

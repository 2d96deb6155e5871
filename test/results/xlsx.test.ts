import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import * as XLSX from 'xlsx';
import {
  writeResults,
  readResults,
  RESULT_COLUMNS,
  NUMERIC_RESULT_COLUMNS,
  type ResultsSource,
  type ResultsTable,
} from '../../src/results/results.ts';
import { BATCH_COLUMNS, createdResult, readSheet, table, tempDir } from './helpers.ts';

const tmp = tempDir('pb-results-xlsx-');
afterAll(tmp.cleanup);

const col = (name: string) => XLSX.utils.encode_col(BATCH_COLUMNS.length + RESULT_COLUMNS.indexOf(name as (typeof RESULT_COLUMNS)[number]));

describe('XLSX results', () => {
  it('writes the header, string cells as strings and the numeric columns as real numbers', async () => {
    const p = tmp.path('r.xlsx');
    await writeResults(p, table('xlsx', 2));
    const ws = readSheet(p);
    const header = XLSX.utils.sheet_to_json<string[]>(ws, { header: 1 })[0];
    expect(header).toEqual([...BATCH_COLUMNS, ...RESULT_COLUMNS]);
    for (const c of NUMERIC_RESULT_COLUMNS.filter((c) => RESULT_COLUMNS.includes(c as (typeof RESULT_COLUMNS)[number]))) {
      const cell = ws[`${col(c)}2`] as XLSX.CellObject;
      expect(cell.t, c).toBe('n');
    }
    expect(ws[`${col('fee')}2`]).toMatchObject({ t: 'n', v: 2.5, z: '#,##0.00', w: '2.50' });
    expect(ws[`${col('quotedRate')}2`]).toMatchObject({ t: 'n', v: 1.0823 });
    expect(ws[`${col('status')}2`]).toMatchObject({ t: 's', v: 'PENDING' });
    expect(ws.J2).toMatchObject({ t: 's', v: "'+447700900123" }); // phoneNumber: text, neutralised like CSV
    expect(ws.A2).toMatchObject({ t: 's', v: 'PAY-1' });
  });

  it('round-trips a table exactly', async () => {
    const t = table('xlsx', 3);
    t.rows[0]!.cells.narration = 'line 1\r\nline 2\rx\ny _x0041_ <&>';
    t.rows[1]!.result = { ...t.rows[1]!.result, fee: '-0.50', quotedRate: '0.00000001234', totalDeductible: '1234567890.12345' };
    t.rows[2]!.result = { status: 'REJECTED', idempotencyKey: 'k', errorMessage: '=cmd|x', requestId: 'r' };
    const p = tmp.path('rt.xlsx');
    await writeResults(p, t);
    const back = await readResults(p);
    expect(back.format).toBe('xlsx');
    expect(back.inputColumns).toEqual(BATCH_COLUMNS);
    expect(back.rows).toEqual(t.rows);
    expect(readSheet(p)[`${col('fee')}3`]).toMatchObject({ t: 'n', v: -0.5 });
  });

  it('keeps a number as text when a double cannot hold it exactly (more than 15 significant digits)', async () => {
    const p = tmp.path('big.xlsx');
    const exact = '12345678901234567.89';
    await writeResults(p, {
      format: 'xlsx',
      inputColumns: ['reference'],
      rows: [
        {
          rowNumber: 2,
          cells: { reference: 'R' },
          result: { status: 'PENDING', destinationAmount: exact, fee: '0.1', appliedRate: '1e5' },
        },
      ],
    });
    const ws = readSheet(p);
    expect(ws[`${XLSX.utils.encode_col(1 + RESULT_COLUMNS.indexOf('destinationAmount'))}2`]).toMatchObject({ t: 's', v: exact });
    expect(ws[`${XLSX.utils.encode_col(1 + RESULT_COLUMNS.indexOf('fee'))}2`]).toMatchObject({ t: 'n', v: 0.1 });
    expect(ws[`${XLSX.utils.encode_col(1 + RESULT_COLUMNS.indexOf('appliedRate'))}2`]).toMatchObject({ t: 's', v: '1e5' });
    expect((await readResults(p)).rows[0]!.result).toMatchObject({ destinationAmount: exact, fee: '0.1', appliedRate: '1e5' });
  });

  it('writes every amount as a number in a money format showing its decimals, and reads back the same text', async () => {
    const p = tmp.path('money.xlsx');
    const cells = (ref: string, amount: string, src: string, dst: string) => ({
      reference: ref,
      Amount: amount,
      sourceCurrency: src,
      destinationCurrency: dst,
    });
    const t: ResultsTable = {
      format: 'xlsx',
      inputColumns: ['reference', 'Amount', 'sourceCurrency', 'destinationCurrency'],
      rows: [
        {
          rowNumber: 2,
          cells: cells('EUR-1', '1234.50', 'EUR', 'JPY'),
          result: {
            status: 'FAILED',
            idempotencyKey: 'k1',
            fee: '2.50',
            totalDeductible: '1237.00',
            destinationAmount: '201234',
            refunded: '1237.00',
          },
        },
        {
          rowNumber: 3,
          // a batch workbook's amount as SheetJS shows it (#,##0.00), and KWD's three decimals
          cells: cells('KWD-1', '12,345,678.125', 'KWD', 'KWD'),
          result: {
            status: 'PENDING',
            idempotencyKey: 'k2',
            fee: '0.500',
            totalDeductible: '12345678.625',
            destinationAmount: '12345678.125',
          },
        },
        {
          rowNumber: 4,
          // more than 15 significant digits: a double cannot hold them, so they stay text (exact);
          // "100" keeps its own (no) decimals; -0.00 would read back as 0.00
          cells: cells('BIG-1', '1234567890123.4567', 'EUR', 'EUR'),
          result: {
            status: 'PENDING',
            idempotencyKey: 'k3',
            fee: '-0.00',
            totalDeductible: '100',
            destinationAmount: '1234567890123.45678',
          },
        },
      ],
    };
    await writeResults(p, t);
    const ws = readSheet(p);
    const header = XLSX.utils.sheet_to_json<string[]>(ws, { header: 1 })[0]!;
    const at = (name: string, row: number) => ws[`${XLSX.utils.encode_col(header.indexOf(name))}${row}`] as XLSX.CellObject;
    expect(at('Amount', 2)).toMatchObject({ t: 'n', v: 1234.5, z: '#,##0.00', w: '1,234.50' });
    expect(at('fee', 2)).toMatchObject({ t: 'n', v: 2.5, z: '#,##0.00' });
    expect(at('totalDeductible', 2)).toMatchObject({ t: 'n', v: 1237, z: '#,##0.00' });
    expect(at('destinationAmount', 2)).toMatchObject({ t: 'n', v: 201234, z: '#,##0', w: '201,234' });
    expect(at('refunded', 2)).toMatchObject({ t: 'n', v: 1237, z: '#,##0.00' });
    expect(at('Amount', 3)).toMatchObject({ t: 'n', v: 12345678.125, w: '12,345,678.125' });
    expect(at('fee', 3)).toMatchObject({ t: 'n', v: 0.5, z: '#,##0.000', w: '0.500' });
    expect(at('Amount', 4)).toMatchObject({ t: 's', v: '1234567890123.4567' });
    expect(at('destinationAmount', 4)).toMatchObject({ t: 's', v: '1234567890123.45678' });
    expect(at('fee', 4)).toMatchObject({ t: 's', v: "'-0.00" });
    expect(at('totalDeductible', 4)).toMatchObject({ t: 'n', v: 100, z: '#,##0' });
    expect(at('sourceCurrency', 2)).toMatchObject({ t: 's', v: 'EUR' });
    const back = await readResults(p);
    expect(back.rows).toEqual(t.rows);
  });

  it('reads the 0.00 number formats of results files from earlier versions', async () => {
    const aoa = [
      ['reference', 'sourceAmount', ...RESULT_COLUMNS],
      ['R1', '100.00', 'SUCCESSFUL', 'id-1', '', 'key-1', '', '', 2.5, 102.5, 100, '', '', '', '', ''],
    ];
    const ws = XLSX.utils.aoa_to_sheet(aoa);
    for (const c of ['I2', 'J2', 'K2']) (ws[c] as XLSX.CellObject).z = '0.00';
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, ws, 'Results');
    const p = tmp.path('old-formats.xlsx');
    writeFileSync(p, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);
    const back = await readResults(p);
    expect(back.rows[0]!.cells.sourceAmount).toBe('100.00');
    expect(back.rows[0]!.result).toMatchObject({ fee: '2.50', totalDeductible: '102.50', destinationAmount: '100.00' });
  });

  it('reads a results workbook built elsewhere (numbers in General format, a second sheet chosen by name)', async () => {
    const aoa = [
      ['reference', 'amount', ...RESULT_COLUMNS],
      ['R1', 'x', 'SUCCESSFUL', 'id-1', 'PO-1', 'key-1', 1.0823, 1.0825, 2.5, 102.5, 108.25, '', '', 'req', '', '2025-01-31T09:30:00Z'],
    ];
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['notes']]), 'Notes');
    XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(aoa), 'Results');
    const p = tmp.path('built.xlsx');
    writeFileSync(p, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);
    const back = await readResults(p, { sheet: 'results' });
    expect(back.inputColumns).toEqual(['reference', 'amount']);
    expect(back.rows).toEqual([
      {
        rowNumber: 2,
        cells: { reference: 'R1', amount: 'x' },
        result: {
          status: 'SUCCESSFUL',
          payoutId: 'id-1',
          payoutRef: 'PO-1',
          idempotencyKey: 'key-1',
          quotedRate: '1.0823',
          appliedRate: '1.0825',
          fee: '2.5',
          totalDeductible: '102.5',
          destinationAmount: '108.25',
          requestId: 'req',
          updatedAt: '2025-01-31T09:30:00Z',
        },
      },
    ]);
    await expect(readResults(p, { sheet: 'Nope' })).rejects.toMatchObject({ code: 'SHEET_NOT_FOUND' });
  });

  it('reads a date of a results workbook in the 1904 date system (Excel for Mac) as the date it shows, as readBatch does', async () => {
    // 2027-03-01 is serial 44985 from 1904-01-01; from 1899-12-30 that serial is 2023-02-28: a retry would send the row at once
    const aoa = [
      ['reference', 'ReqdExctnDt', ...RESULT_COLUMNS],
      ['R1', '', 'NOT_SENT', '', '', 'key-1', '', '', '', '', '', 'NOT_DUE', '', '', '', ''],
    ];
    const ws = XLSX.utils.aoa_to_sheet(aoa);
    ws.B2 = { t: 'n', v: 44985, z: 'yyyy-mm-dd' };
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, ws, 'Results');
    wb.Workbook = { WBProps: { date1904: true } };
    const p = tmp.path('mac.xlsx');
    writeFileSync(p, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);
    const back = await readResults(p);
    expect(back.rows[0]!.cells.ReqdExctnDt).toBe('2027-03-01');
    expect(back.rows[0]!.dates).toEqual({ ReqdExctnDt: '2027-03-01' });
  });

  it("keeps a person's own sheets when the file is written again (status, listen, attach)", async () => {
    const p = tmp.path('notes.xlsx');
    await writeResults(p, table('xlsx', 2));
    const wb = XLSX.read(readFileSync(p), { type: 'buffer' });
    const notes = [['approved by', 'on'], [], ['Grace Hopper', '2025-01-31']]; // (a row without cells is not in the file)
    XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(notes), 'Notes');
    writeFileSync(p, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);

    const t = await readResults(p);
    t.rows[0]!.result.status = 'PROCESSING';
    await writeResults(p, t);
    const back = XLSX.read(readFileSync(p), { type: 'buffer' });
    expect(back.SheetNames).toEqual(['Results', 'Notes']);
    expect(XLSX.utils.sheet_to_json(back.Sheets.Notes!, { header: 1, blankrows: true })).toEqual(notes);
    expect((await readResults(p)).rows.map((r) => r.result.status)).toEqual(['PROCESSING', 'PENDING']);
  });

  it("keeps the dates of a person's own sheets of a 1904 workbook (Excel for Mac) when the file is written again", async () => {
    const p = tmp.path('mac-notes.xlsx');
    await writeResults(p, table('xlsx', 1));
    const wb = XLSX.read(readFileSync(p), { type: 'buffer' });
    const notes = XLSX.utils.aoa_to_sheet([['approved on'], ['']]);
    notes.A2 = { t: 'n', v: 44985, z: 'yyyy-mm-dd' }; // 2027-03-01 from 1904-01-01; 2023-02-28 from 1899-12-30
    XLSX.utils.book_append_sheet(wb, notes, 'Notes');
    wb.Workbook = { WBProps: { date1904: true } };
    writeFileSync(p, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);

    await writeResults(p, await readResults(p));
    const back = XLSX.read(readFileSync(p), { type: 'buffer', cellNF: true });
    expect(back.Sheets.Notes!.A2).toMatchObject({ v: 44985, w: '2027-03-01' });
  });

  it('gives the same table for the same data written as CSV and as XLSX', async () => {
    const pc = tmp.path('same.csv');
    const px = tmp.path('same.xlsx');
    await writeResults(pc, table('csv', 3));
    await writeResults(px, table('xlsx', 3));
    const [c, x] = await Promise.all([readResults(pc), readResults(px)]);
    expect(x.rows).toEqual(c.rows);
    expect(x.rows[0]!.result).toEqual(createdResult(1));
  });

  it("reads back a run's table (each row's values made as it is written) exactly as the same table", async () => {
    const t = table('xlsx', 12);
    t.rows[7]!.cells.narration = 'line 1\r\nline 2 _x0041_ <&> \uD800 😀';
    t.rows[8]!.result = { status: 'REJECTED', idempotencyKey: 'k', errorMessage: '=cmd|x', requestId: 'r' };
    t.rows[9]!.result = { ...t.rows[9]!.result, statusDetail: 'Held for review', fee: '-0.50', quotedRate: '0.00000001234' };
    [t.rows[10], t.rows[11]] = [t.rows[11]!, t.rows[10]!]; // out of row order
    const source: ResultsSource = {
      format: 'xlsx',
      inputColumns: t.inputColumns,
      rows: t.rows.map((r) => ({ rowNumber: r.rowNumber, cells: r.cells })),
      resultAt: (i) => t.rows[i]!.result,
    };
    const [fromTable, fromSource] = [tmp.path('table.xlsx'), tmp.path('source.xlsx')];
    await writeResults(fromTable, t);
    await writeResults(fromSource, source);
    const [a, b] = [await readResults(fromTable), await readResults(fromSource)];
    expect(b).toEqual(a);
    expect(b.rows.map((r) => r.rowNumber)).toEqual(t.rows.map((r) => r.rowNumber).sort((x, y) => x - y));
    expect(b.rows[9]!.result.statusDetail).toBe('Held for review');
  });
});

import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import * as XLSX from 'xlsx';
import { readBatch, InputError, type RawRow } from '../../src/input/read-batch.ts';

const dir = mkdtempSync(join(tmpdir(), 'pb-read-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = (content: string | Buffer, ext = '.csv') => {
  const p = join(dir, `f${++n}${ext}`);
  writeFileSync(p, content);
  return p;
};

const HEAD = [
  'reference',
  'sourceAmount',
  'sourceCurrency',
  'destinationCurrency',
  'destinationCountryCode',
  'method',
  'accountName',
  'accountCurrency',
  'narration',
];
const ROW1 = ['R1', '10.00', 'EUR', 'EUR', 'DEU', 'SEPA', 'Zoë Müller', 'EUR', 'Salaire août'];
const ROW2 = ['R2', '20.00', 'EUR', 'EUR', 'FRA', 'SEPA', 'François Côté', 'EUR', 'Prime'];
const csv = (d: string, eol = '\n', rows = [HEAD, ROW1, ROW2]) => rows.map((r) => r.join(d)).join(eol) + eol;

async function all(path: string, opts = {}) {
  const s = await readBatch(path, opts);
  const rows: RawRow[] = [];
  for await (const r of s.rows) rows.push(r);
  return { s, rows };
}

describe('reading CSV', () => {
  it('a column headed constructor gives a plain cell, never the prototype', async () => {
    const { rows } = await all(
      file(
        csv(',', '\n', [
          [...HEAD, 'constructor'],
          [...ROW1, 'y'],
        ]),
      ),
    );
    const cells = rows[0]!.cells;
    expect(Object.getPrototypeOf(cells)).toBe(Object.getPrototypeOf({}));
    expect(cells.constructor).toBe('y');
    expect(cells.reference).toBe('R1');
  });

  it('names a column that gives no payout field in a warning, and keeps its cells (issue 43, item 11)', async () => {
    const { s, rows } = await all(
      file(
        csv(',', '\n', [
          [...HEAD, 'Payment Date', 'Cost centre'],
          [...ROW1, '2025-01-31', 'CC-7'],
        ]),
      ),
    );
    expect(rows[0]!.cells['Payment Date']).toBe('2025-01-31');
    expect(s.warnings).toContainEqual({
      code: 'COLUMN_UNKNOWN',
      message: 'columns "Payment Date", "Cost centre" name no payout field: not sent, kept as they are in the results file',
    });
  });

  it('refuses a column headed __proto__, naming it, rather than dropping it without a word (issue 29)', async () => {
    const path = file(
      csv(',', '\n', [
        [...HEAD, '__proto__'],
        [...ROW1, 'x'],
      ]),
    );
    await expect(all(path)).rejects.toMatchObject({
      code: 'UNUSABLE_HEADER',
      message: `${path}: column ${HEAD.length + 1} of header row 1 is headed "__proto__", which cannot name a column. Rename it.`,
    });
  });

  it.each([[','], [';'], ['\t'], ['|']])('detects the delimiter %j', async (d) => {
    const { s, rows } = await all(file(csv(d)));
    expect(s.delimiter).toBe(d);
    expect(rows.map((r) => r.cells.accountName)).toEqual(['Zoë Müller', 'François Côté']);
  });

  it('reads UTF-8 with and without BOM, CRLF and LF', async () => {
    for (const [content, enc] of [
      [csv(',', '\r\n'), 'utf-8'],
      ['\uFEFF' + csv(','), 'utf-8'],
    ] as const) {
      const { s, rows } = await all(file(content));
      expect(s.encoding).toBe(enc);
      expect(s.columns[0]).toBe('reference');
      expect(rows[1]!.cells.narration).toBe('Prime');
      expect(rows[0]!.cells.narration).toBe('Salaire août');
    }
  });

  it('reads UTF-16 LE and BE with BOM (Excel "Unicode text", tab-separated)', async () => {
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(csv('\t', '\r\n'), 'utf-16le')]);
    const be = Buffer.concat([Buffer.from([0xfe, 0xff]), iconv.encode(csv('\t', '\r\n'), 'utf-16be')]);
    for (const [buf, enc] of [
      [le, 'utf-16le'],
      [be, 'utf-16be'],
    ] as const) {
      const { s, rows } = await all(file(buf, '.txt'));
      expect(s.encoding).toBe(enc);
      expect(s.delimiter).toBe('\t');
      expect(rows[0]!.cells.accountName).toBe('Zoë Müller');
    }
  });

  it('detects Windows-1252 when the bytes are not UTF-8, and obeys --encoding', async () => {
    const p = file(iconv.encode(csv(';'), 'windows-1252'));
    const { s, rows } = await all(p);
    expect(s.encoding).toBe('windows-1252');
    expect(rows[1]!.cells.accountName).toBe('François Côté');
    const forced = await all(p, { encoding: 'cp1252' });
    expect(forced.s.encodingDetectedBy).toBe('--encoding');
    expect(forced.rows[0]!.cells.narration).toBe('Salaire août');
    await expect(readBatch(p, { encoding: 'klingon' })).rejects.toMatchObject({ code: 'ENCODING' });
  });

  it("reads --encoding of Mac Roman, Windows-1250 and -1251 by their common names (what Mac, Polish and Cyrillic Excel's CSV is)", async () => {
    for (const [names, encoding, name] of [
      [['macintosh', 'mac', 'MacRoman'], 'macintosh', 'Zoë Wójcik'],
      [['windows-1250', 'cp1250', 'Win-1250'], 'windows-1250', 'Łukasz Wąs'],
      [['windows-1251', 'CP1251'], 'windows-1251', 'Иван Петров'],
    ] as const) {
      const p = file(iconv.encode(csv(',', '\n', [HEAD, ROW1.map((v, i) => (i === 6 ? name : v))]), encoding));
      for (const n of names) {
        const { s, rows } = await all(p, { encoding: n });
        expect([s.encoding, rows[0]!.cells.accountName]).toEqual([encoding, name]);
      }
    }
  });

  it('counts rows as a spreadsheet does: a quoted cell over several lines is one row', async () => {
    const body = `${HEAD.join(',')}\n"R1",1,EUR,EUR,DEU,SEPA,"Line one\nline two",EUR,x\nR2,2,EUR,EUR,DEU,SEPA,B,EUR,"a\r\nb\r\nc"\nR3,3,EUR,EUR,DEU,SEPA,C,EUR,y\n`;
    const { rows } = await all(file(body));
    expect(rows.map((r) => r.rowNumber)).toEqual([2, 3, 4]);
    expect(rows[0]!.cells.accountName).toBe('Line one\nline two');
  });

  it('reads a quote inside an unquoted cell as text, and trims every cell as trim() does', async () => {
    const body = `${HEAD.join(',')}\nR1,1,EUR,EUR,DEU,SEPA,\u00a0Zoë\t,EUR,Salary "January" 2025\u3000\n`;
    const { rows } = await all(file(body));
    expect(rows[0]!.cells.narration).toBe('Salary "January" 2025');
    expect(rows[0]!.cells.accountName).toBe('Zoë');
  });

  it('finds the delimiter of the header below blank lines, as it skips them', async () => {
    for (const d of [';', '\t', '|']) {
      const { s, rows } = await all(file('\r\n \r\n' + csv(d, '\r\n')));
      expect(s.delimiter).toBe(d);
      expect(s.headerRow).toBe(3);
      expect(rows.map((r) => [r.rowNumber, r.cells.narration])).toEqual([
        [4, 'Salaire août'],
        [5, 'Prime'],
      ]);
    }
  });

  it('skips blank rows and a trailing totals row with warnings, never silently', async () => {
    const rows = [HEAD, ROW1, [], [], ROW2, ['', '30.00', '', '', '', '', '', '', ''], []];
    const { s, rows: got } = await all(file(rows.map((r) => r.join(',')).join('\n') + '\n'));
    expect(got.map((r) => r.rowNumber)).toEqual([2, 5]);
    expect(s.warnings.map((w) => [w.code, w.row, w.rowEnd])).toEqual([
      ['BLANK_ROWS', 3, 4],
      ['TOTALS_ROW', 6, undefined],
      ['BLANK_ROWS', 7, 7],
    ]);
  });

  it('validates a totals-looking row that is not the last one like any other', async () => {
    const rows = [HEAD, ROW1, ['Total', '30.00'], ROW2];
    const { s, rows: got } = await all(file(rows.map((r) => r.join(',')).join('\n')));
    expect(got.map((r) => r.rowNumber)).toEqual([2, 3, 4]);
    expect(s.warnings).toEqual([]);
  });

  it('a last row with a reference, a method and a payee is a payout, even to a payee named "Total"', async () => {
    const payees = [
      ['R3', '900.00', 'EUR', 'EUR', 'FRA', 'SEPA', 'TOTAL', 'EUR', 'Fuel'],
      [...ROW2.slice(0, 8), 'Total'],
    ];
    for (const last of payees) {
      const { s, rows: got } = await all(file(csv(',', '\n', [HEAD, ROW1, last])));
      expect(got.map((r) => r.rowNumber)).toEqual([2, 3]);
      expect(s.warnings).toEqual([]);
    }
    const { s } = await all(file(csv(',', '\n', [HEAD, ROW1, ['Total', '10.00', 'EUR']])));
    expect(s.warnings.map((w) => w.code)).toEqual(['TOTALS_ROW']);
  });

  it('honours an Excel "sep=" line and carries unknown columns through', async () => {
    const { s, rows } = await all(file(`sep=|\n${[...HEAD, 'Cost centre'].join('|')}\n${[...ROW1, 'CC-7'].join('|')}\n`));
    expect(s.delimiter).toBe('|');
    expect(rows[0]!.rowNumber).toBe(2);
    expect(rows[0]!.cells['Cost centre']).toBe('CC-7');
    expect(s.columns.at(-1)).toBe('Cost centre');
  });

  it('notes cells beyond the header (an unquoted delimiter)', async () => {
    const { rows } = await all(file(`${HEAD.join(',')}\nR1,1,234.56,EUR,EUR,DEU,SEPA,A,EUR,x\n`));
    expect(rows[0]!.extraCells).toBe(1);
  });

  it('stays flat: rows stream without reading the whole file first', async () => {
    const big = [HEAD.join(',')];
    for (let i = 0; i < 20000; i++) big.push(ROW1.join(',').replace('R1', `R${i}`));
    const s = await readBatch(file(big.join('\n')));
    const it = s.rows[Symbol.asyncIterator]();
    expect((await it.next()).value.rowNumber).toBe(2);
    await s.close();
  });
});

describe('file-level errors', () => {
  const code = async (p: string, opts = {}) => {
    try {
      const { rows } = await all(p, opts);
      return `ok ${rows.length}`;
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      return (e as InputError).code;
    }
  };
  it('names each unusable file', async () => {
    expect(await code(join(dir, 'nope.csv'))).toBe('FILE_NOT_FOUND');
    expect(await code(file(''))).toBe('EMPTY_FILE');
    expect(await code(file('\n\n  \n'))).toBe('EMPTY_FILE');
    expect(await code(file(HEAD.join(',') + '\n'))).toBe('EMPTY_FILE');
    expect(await code(file(Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 1, 2, 0, 0])))).toBe('UNSUPPORTED_FORMAT');
    expect(await code(file('a,b\n1,2\n'))).toBe('NO_HEADER');
    expect(await code(file('reference,amount\n1,2\n'))).toBe('MISSING_COLUMNS');
    expect(await code(file(csv(','), '.xlsx'))).toBe('UNSUPPORTED_FORMAT');
    expect(await code(file(`${HEAD.join(',')}\nR1,"unclosed\n`))).toBe('MALFORMED_CSV');
    expect(await code(dir)).toBe('UNREADABLE');
    expect(await code(file(csv(',')), { sheet: 'x' })).toBe('UNSUPPORTED_FORMAT');
  });
});

describe('reading Excel', () => {
  const workbook = (sheets: Record<string, unknown[][]>, bookType: XLSX.BookType = 'xlsx', hidden: string[] = []) => {
    const wb = XLSX.utils.book_new();
    for (const [name, aoa] of Object.entries(sheets)) XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(aoa), name);
    wb.Workbook = { Sheets: wb.SheetNames.map((name) => ({ name, Hidden: hidden.includes(name) ? 1 : 0 })) };
    return XLSX.write(wb, { type: 'buffer', bookType }) as Buffer;
  };

  it('a payroll not on the first sheet: the error names the sheet read, the others and --sheet (issue 43, item 11)', async () => {
    const p = file(workbook({ Notes: [['Payroll notes'], ['prepared by Alice']], 'January 2025': [HEAD, ROW1], Rates: [['x']] }), '.xlsx');
    const e = await readBatch(p).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(InputError);
    expect(e).toMatchObject({ code: 'NO_HEADER' });
    expect((e as Error).message).toContain(
      '(sheet "Notes" read; the workbook also has "January 2025", "Rates": name the payroll\'s with --sheet).',
    );
  });

  it('reads the first sheet, or the one named with --sheet, in .xlsx and .xls', async () => {
    for (const bookType of ['xlsx', 'biff8'] as const) {
      const buf = workbook({ First: [HEAD, ROW1], Second: [HEAD, ROW2] }, bookType);
      const p = file(buf, bookType === 'xlsx' ? '.xlsx' : '.xls');
      const a = await all(p);
      expect(a.s.format).toBe(bookType === 'xlsx' ? 'xlsx' : 'xls');
      expect(a.s.sheet).toBe('First');
      expect(a.rows[0]!.cells.accountName).toBe('Zoë Müller');
      const b = await all(p, { sheet: 'second' });
      expect(b.rows[0]!.cells.reference).toBe('R2');
      await expect(readBatch(p, { sheet: 'Third' })).rejects.toMatchObject({ code: 'SHEET_NOT_FOUND' });
    }
  });

  it('never reads a hidden sheet unless named: the first sheet shown, in .xlsx and .xls', async () => {
    for (const bookType of ['xlsx', 'biff8'] as const) {
      const p = file(workbook({ Old: [HEAD, ROW2], Payroll: [HEAD, ROW1] }, bookType, ['Old']), bookType === 'xlsx' ? '.xlsx' : '.xls');
      const a = await all(p);
      expect(a.s.sheet).toBe('Payroll');
      expect(a.rows.map((r) => r.cells.reference)).toEqual(['R1']);
      expect((await all(p, { sheet: 'Old' })).rows.map((r) => r.cells.reference)).toEqual(['R2']);
    }
  });

  it('reads what the user sees: formatted numbers, dates as ISO dates, formulas as their values', async () => {
    const ws = XLSX.utils.aoa_to_sheet([
      [...HEAD, 'Pay date', 'Check'],
      [...ROW1, '', ''],
    ]);
    ws.B2 = { t: 'n', v: 1234.5, z: '#,##0.00' };
    ws.J2 = { t: 'n', v: 45688, z: 'yyyy-mm-dd' };
    ws.K2 = { t: 'n', v: 2469, f: 'B2*2', z: '0' };
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, ws, 'S');
    const { rows } = await all(file(XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer, '.xlsx'));
    expect(rows[0]!.cells.sourceAmount).toBe('1,234.50');
    expect(rows[0]!.numbers?.sourceAmount).toBe(1234.5);
    expect(rows[0]!.cells['Pay date']).toBe('2025-01-31');
    expect(rows[0]!.cells.Check).toBe('2469');
  });

  it('reads number formats: a date cell is its ISO date, and keeps what Excel shows', async () => {
    const ws = XLSX.utils.aoa_to_sheet([HEAD, ROW1]);
    ws.B2 = { t: 'n', v: 46143, z: 'm/d/yy' }; // "1.5" typed in German Excel
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, ws, 'S');
    const { rows } = await all(file(XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer, '.xlsx'));
    expect(rows[0]!.cells.sourceAmount).toBe('2026-05-01');
    expect(rows[0]!.numbers?.sourceAmount).toBeUndefined();
    expect(rows[0]!.dates).toEqual({ sourceAmount: '5/1/26' });
  });

  it('reads a date of a workbook in the 1904 date system (old Mac Excel) as the date it shows, never 4 years early', async () => {
    // 2027-03-01 is serial 44985 from 1904-01-01; from 1899-12-30 that serial is 2023-02-28, a ReqdExctnDt long past
    const ws = XLSX.utils.aoa_to_sheet([
      [...HEAD, 'ReqdExctnDt'],
      [...ROW1, ''],
    ]);
    ws.J2 = { t: 'n', v: 44985, z: 'yyyy-mm-dd' };
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, ws, 'S');
    wb.Workbook = { WBProps: { date1904: true } };
    for (const bookType of ['xlsx', 'biff8'] as const) {
      const p = file(XLSX.write(wb, { type: 'buffer', bookType }) as Buffer, bookType === 'xlsx' ? '.xlsx' : '.xls');
      const { rows } = await all(p);
      expect(rows[0]!.cells.ReqdExctnDt, bookType).toBe('2027-03-01');
    }
  });

  it('refuses cells merged over rows below the header: the rows under the first show its value but hold none', async () => {
    // a ReqdExctnDt shown on both rows but held by the first: the second would be sent at once
    const ws = XLSX.utils.aoa_to_sheet([
      [...HEAD, 'ReqdExctnDt'],
      [...ROW1, '2099-03-01'],
      [...ROW2, ''],
    ]);
    ws['!merges'] = [XLSX.utils.decode_range('J2:J3')];
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, ws, 'S');
    for (const bookType of ['xlsx', 'biff8'] as const) {
      const p = file(XLSX.write(wb, { type: 'buffer', bookType }) as Buffer, bookType === 'xlsx' ? '.xlsx' : '.xls');
      const e = await all(p).catch((err: unknown) => err);
      expect(e, bookType).toMatchObject({ code: 'MERGED_CELLS', row: 2 });
      expect((e as Error).message).toContain('J2:J3');
    }
  });

  it('refuses a formula of a workbook to be recalculated when opened: its value is none yet (XlsxWriter writes 0)', async () => {
    const ws = XLSX.utils.aoa_to_sheet([
      [...HEAD, 'First', 'Last'],
      [...ROW1, 'Zoë', 'Müller'],
    ]);
    ws.G2 = { t: 'n', v: 0, f: 'J2&" "&K2' }; // the payee, as a program wrote it: the result 0, Excel to compute it
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, ws, 'S');
    const xml = (XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer).toString('latin1');
    const workbookPr = '<workbookPr codeName="ThisWorkbook"/>';
    const recalc = xml.replace(workbookPr, '<calcPr fullCalcOnLoad="1"/>'.padEnd(workbookPr.length)); // same length: the zip stays valid
    expect(recalc).not.toBe(xml);
    const e = await all(file(Buffer.from(recalc, 'latin1'), '.xlsx')).catch((err: unknown) => err);
    expect(e).toMatchObject({ code: 'UNSUPPORTED_FORMAT' });
    expect((e as Error).message).toContain('G2');
    // without the flag, a formula is read by the value it holds (Excel's own, computed when it saved)
    expect((await all(file(Buffer.from(xml, 'latin1'), '.xlsx'))).rows[0]!.cells.accountName).toBe('0');
  });

  it('refuses a formula that holds no computed value (a program wrote it without one): never read as 0 or as nothing', async () => {
    const ws = XLSX.utils.aoa_to_sheet([
      [...HEAD, 'First', 'Last'],
      [...ROW1, 'Zoë', 'Müller'],
    ]);
    ws.G2 = { t: 'n', v: 0, f: 'J2&" "&K2' }; // the payee, as Excel shows it once computed: "Zoë Müller"
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, ws, 'S');
    const xml = (XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer).toString('latin1');
    expect(xml).toContain('</f><v>0</v>');
    // written with no <v> (ExcelJS without a result), or an empty one: same length, so the zip stays valid
    for (const written of ['</f>        ', '</f><v></v> ']) {
      const e = await all(file(Buffer.from(xml.replace('</f><v>0</v>', written), 'latin1'), '.xlsx')).catch((err: unknown) => err);
      expect(e, written).toMatchObject({ code: 'UNSUPPORTED_FORMAT' });
      expect((e as Error).message, written).toContain('(the first in G2) hold no computed value');
    }
  });

  it("uses the sheet's own row numbers", async () => {
    const { rows } = await all(file(workbook({ S: [[], [], HEAD, ROW1] }), '.xlsx'));
    expect(rows[0]!.rowNumber).toBe(4);
  });
});

// The Excel traps: identifiers typed into number cells. Workbooks are built with SheetJS here.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as XLSX from 'xlsx';
import { collectBatch } from './collect.ts';
import { CANONICAL_FIELDS } from '../../src/input/batch-columns.ts';
import { EXAMPLES } from './examples.ts';
import type { PayoutMethod } from '../../src/spec/codes.ts';

const dir = mkdtempSync(join(tmpdir(), 'pb-xl-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'inv.pdf'), '%PDF-1.7\n');

/** A workbook of one example row whose cells in `numbers` are numeric cells (value, shown format). */
async function trap(method: PayoutMethod, numbers: Record<string, [number, string?]>, patch = (xml: string) => xml) {
  const cols = [...CANONICAL_FIELDS];
  const ws = XLSX.utils.aoa_to_sheet([cols, cols.map((c) => ({ ...EXAMPLES[method], documents: 'inv.pdf' })[c] ?? '')]);
  for (const [field, [v, z]] of Object.entries(numbers)) {
    const addr = XLSX.utils.encode_cell({ r: 1, c: cols.indexOf(field as never) });
    ws[addr] = { t: 'n', v, ...(z ? { z } : {}) };
  }
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, ws, 'S');
  const p = join(dir, `${method}-${Object.keys(numbers).join('-')}-${Math.random().toString(36).slice(2)}.xlsx`);
  // uncompressed: a patch of the same length keeps the zip valid
  writeFileSync(p, Buffer.from(patch((XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer).toString('latin1')), 'latin1'));
  const r = await collectBatch(p);
  return { problems: r.problems.map((x) => `${x.severity[0]}:${x.code}:${x.column}`), rows: r.rows, all: r.problems };
}

describe('Excel traps', () => {
  it('an account number that lost its leading zero is an error on that cell', async () => {
    const r = await trap('FASTER_PAYMENTS', { accountNumber: [1234567] });
    expect(r.problems).toEqual(['e:EXCEL_LEADING_ZEROS_LOST:accountNumber']);
    expect(r.all[0]!.message).toContain('7 digits');
    expect(r.all[0]!.value).toBe('***4567');
  });

  it('a sort code, routing number or NUBAN that lost leading zeros is an error', async () => {
    expect((await trap('FASTER_PAYMENTS', { sortCode: [60161] })).problems).toEqual(['e:EXCEL_LEADING_ZEROS_LOST:sortCode']);
    expect((await trap('ACH', { routingNumber: [21000021] })).problems).toEqual(['e:EXCEL_LEADING_ZEROS_LOST:routingNumber']);
    expect((await trap('NIP', { accountNumber: [123456785] })).problems).toEqual(['e:EXCEL_LEADING_ZEROS_LOST:accountNumber']);
    expect((await trap('NIP', { bankCode: [58] })).problems).toEqual(['e:EXCEL_LEADING_ZEROS_LOST:bankCode']);
  });

  it('scientific notation or more than 15 digits: digits lost', async () => {
    expect((await trap('CHINA_WIRE', { accountNumber: [1.23e15, '0.00E+00'] })).problems).toEqual(['e:EXCEL_DIGITS_LOST:accountNumber']);
    // 12 digits held whole, shown as 6.22E+11: refused for what the sheet shows, not said lost (found by input-fuzz.ts)
    const shown = await trap('SWIFT', { accountNumber: [622202000123, '0.00E+00'] });
    expect(shown.problems).toEqual(['e:EXCEL_DIGITS_LOST:accountNumber']);
    expect(shown.all[0]!.message).toBe(
      'the accountNumber is stored as a number shown in scientific notation: the sheet shows 6.22E+11, not the digits it holds, and a leading zero would be gone',
    );
    // what Excel keeps of a 19-digit account number
    expect((await trap('CHINA_WIRE', { accountNumber: [Number('6222020200012345678'), '0'] })).problems).toEqual([
      'e:EXCEL_DIGITS_LOST:accountNumber',
    ]);
    expect((await trap('SWIFT', { accountNumber: [123456789012345680000] })).problems).toEqual(['e:EXCEL_DIGITS_LOST:accountNumber']);
  });

  it('a reference Excel held as a number of more than 15 digits, or showed in scientific notation, or a CSV it saved so: digits lost', async () => {
    // what Excel keeps of a 19-digit invoice number
    expect((await trap('SEPA', { reference: [Number('1234567890123456789'), '0'] })).problems).toEqual(['e:EXCEL_DIGITS_LOST:reference']);
    expect((await trap('SEPA', { reference: [123456789012, '0.00E+00'] })).problems).toEqual(['e:EXCEL_DIGITS_LOST:reference']);
    expect((await trap('SEPA', { reference: [123456789012, '0'] })).problems).toEqual([]);
    const cols = [...CANONICAL_FIELDS];
    const row = (reference: string) => cols.map((c) => ({ ...EXAMPLES.SEPA, documents: 'inv.pdf', reference })[c] ?? '').join(',');
    writeFileSync(join(dir, 'sci.csv'), [cols.join(','), row('1.23457E+11'), row('INV-1E+5')].join('\n') + '\n');
    const csv = await collectBatch(join(dir, 'sci.csv'));
    expect(csv.problems.map((x) => `${x.row}:${x.code}:${x.column}`)).toEqual(['2:EXCEL_DIGITS_LOST:reference']);
  });

  it('a phone number as a number lost its +', async () => {
    // (the FPS ID of 7 digits as a number: a warning, it may have been 01234567)
    expect((await trap('HK_FPS', { fpsId: [1234567], phoneNumber: [85291234567] })).problems.sort()).toEqual([
      'e:EXCEL_LEADING_ZEROS_LOST:phoneNumber',
      'w:EXCEL_LEADING_ZEROS_LOST:fpsId',
    ]);
  });

  it('a numeric cell that still has all its digits is read as its digits, not its display', async () => {
    const r = await trap('FASTER_PAYMENTS', { accountNumber: [31926819, '#,##0'], sortCode: [601613] });
    expect(r.problems).toEqual([]);
    expect(r.rows[0]!.payout!.beneficiary.accountNumber).toBe('31926819');
  });

  it('a numeric cell whose number format shows its leading zeros is read as shown', async () => {
    const nip = await trap('NIP', { accountNumber: [123456785, '0000000000'], bankCode: [58, '000'] });
    expect(nip.problems).toEqual([]);
    expect(nip.rows[0]!.payout!.beneficiary).toMatchObject({ accountNumber: '0123456785', bankCode: '058' });
    // a column formatted for 10-digit NUBANs: a whole 8-digit UK account is still its 8 digits
    const uk = await trap('FASTER_PAYMENTS', { accountNumber: [31926819, '0000000000'] });
    expect(uk.problems).toEqual([]);
    expect(uk.rows[0]!.payout!.beneficiary.accountNumber).toBe('31926819');
    const ach = await trap('ACH', { accountNumber: [1234567, '000000000'] });
    expect(ach.problems).toEqual([]);
    expect(ach.rows[0]!.payout!.beneficiary.accountNumber).toBe('001234567');
    // an FPS ID (7 to 9 digits) or a NIP institution code (3, 5 or 6) shown with its zero: the number alone is another valid one
    const fps = await trap('HK_FPS', { fpsId: [12345678, '000000000'] });
    expect(fps.problems).toEqual([]);
    expect(fps.rows[0]!.payout!.beneficiary.fpsId).toBe('012345678');
    const nipBank = await trap('NIP', { bankCode: [90267, '000000'] });
    expect(nipBank.rows[0]!.payout!.beneficiary.bankCode).toBe('090267');
  });

  it('a numeric sort code shown with its zero by a format that groups it (00-00-00) is read as shown', async () => {
    // a Monzo account: sort code 04-00-04, typed as a number into a column formatted 00-00-00 (or 00 00 00)
    const monzo = (xml: string) => xml.replace('GB29NWBK60161331926819', 'GB92MONZ04000431926819');
    for (const z of ['00-00-00', '00 00 00']) {
      const r = await trap('FASTER_PAYMENTS', { sortCode: [40004, z] }, monzo);
      expect(r.problems, z).toEqual([]);
      expect(r.rows[0]!.payout!.beneficiary.sortCode, z).toBe('040004');
    }
    // with no format to show the zero, still refused
    expect((await trap('FASTER_PAYMENTS', { sortCode: [40004] }, monzo)).problems).toEqual(['e:EXCEL_LEADING_ZEROS_LOST:sortCode']);
  });

  it('a numeric account number whose length the method does not fix is a warning', async () => {
    const r = await trap('ACH', { accountNumber: [123456789] });
    expect(r.problems).toEqual(['w:EXCEL_LEADING_ZEROS_LOST:accountNumber']);
    // an FPS ID (7 to 9 digits) or a NIP institution code (3, 5 or 6) is valid with a zero lost too: typed 012345678, 090267
    expect((await trap('HK_FPS', { fpsId: [12345678] })).problems).toEqual(['w:EXCEL_LEADING_ZEROS_LOST:fpsId']);
    expect((await trap('NIP', { bankCode: [90267] })).problems).toEqual(['w:EXCEL_LEADING_ZEROS_LOST:bankCode']);
    // a length no zero fits: nothing lost, nothing said
    expect((await trap('HK_FPS', { fpsId: [123456789] })).problems).toEqual([]);
    expect((await trap('FASTER_PAYMENTS', { accountNumber: [31926819] })).problems).toEqual([]);
  });

  it('an amount or identifier cell formatted as a date is refused, with what Excel shows', async () => {
    // German Excel makes "1.5" the date 1 May: the cell holds 46143 and shows 5/1/26
    const r = await trap('SEPA', { sourceAmount: [46143, 'm/d/yy'] });
    expect(r.problems).toEqual(['e:EXCEL_DATE:sourceAmount']);
    expect(r.all[0]!.message).toBe('the cell is formatted as a date (shows "5/1/26"); format the column as a number');
    expect(r.all[0]!.value).toBe('5/1/26');
    expect(r.all[0]!.row).toBe(2);
    const id = await trap('FASTER_PAYMENTS', { sortCode: [46143, 'dd/mm/yyyy'] });
    expect(id.problems).toEqual(['e:EXCEL_DATE:sortCode']);
    expect(id.all[0]!.message).toBe('the cell is formatted as a date (shows "01/05/2026"); format the column as Text');
    // a reference typed "Jan-25" is the date 2025-01-01 shown "Jan-25": saved as CSV, it would be "Jan-25", another payout's key
    const ref = await trap('SEPA', { reference: [45658, 'mmm-yy'] });
    expect(ref.problems).toEqual(['e:EXCEL_DATE:reference']);
    expect(ref.all[0]!.value).toBe('Jan-25');
    // a number format that is not a date leaves the amount a number
    const n = await trap('SEPA', { sourceAmount: [46143, '#,##0.00'] });
    expect(n.problems).toEqual([]);
  });

  it("a date in a built-in format of another locale (Japanese Excel's 2026年5月1日, id 31) is a date too", async () => {
    for (const id of ['27', '31', '36', '57', '81']) {
      const r = await trap('SEPA', { sourceAmount: [46143, 'm/d/yy'] }, (xml) => xml.replaceAll('numFmtId="14"', `numFmtId="${id}"`));
      expect(r.problems, id).toEqual(['e:EXCEL_DATE:sourceAmount']);
    }
  });

  it('an amount cell formatted as a percentage is refused: 50 typed in it is held as 0.5', async () => {
    for (const z of ['0%', '0.00%']) {
      const r = await trap('SEPA', { sourceAmount: [0.5, z] });
      expect(r.problems, z).toEqual(['e:INVALID_AMOUNT:sourceAmount']);
      expect(r.all[0]!.message).toContain('as a percentage');
    }
  });

  it('a numeric amount is read by its value, and a value finer than shown is an error that says so', async () => {
    const ok = await trap('SEPA', { sourceAmount: [1250.5, '#,##0.00'] });
    expect(ok.problems).toEqual([]);
    expect(ok.rows[0]!.payout!.sourceAmount.toFixed()).toBe('1250.5');
    const r = await trap('SEPA', { sourceAmount: [1234.565, '#,##0.00'] });
    expect(r.problems).toEqual(['e:AMOUNT_PRECISION:sourceAmount']);
    expect(r.all[0]!.message).toContain('shows 1,234.57');
  });

  it('an amount a number format scales (shown in thousands or millions) is refused: the sheet shows another amount', async () => {
    for (const [v, z, shown] of [
      [1500000, '#,##0,', '1,500'],
      [1500000, '#,##0,"K"', '1,500K'],
      [2500000, '0.0,,"M"', '2.5M'],
    ] as const) {
      const r = await trap('SEPA', { sourceAmount: [v, z] });
      expect(r.problems, z).toEqual(['e:INVALID_AMOUNT:sourceAmount']);
      expect(r.all[0]!.message, z).toContain(`shows "${shown}" but holds ${v}`);
    }
    // a format that shows nothing (;;;) hides the amount
    expect((await trap('SEPA', { sourceAmount: [1500, ';;;'] })).all[0]!.message).toContain('shows nothing but holds 1500');
    // what a format adds or rounds away leaves it the amount shown
    for (const [v, z] of [
      [1500, '"€"#,##0.00'],
      [1500, '#,##0.00 "EUR"'],
      [0.5, '.00'],
      [1500, '0.00E+00'],
      [1250.5, '#,##0'],
      [12345678.25, 'General'],
    ] as const) {
      const r = await trap('SEPA', { sourceAmount: [v, z] });
      expect(r.problems, z).toEqual([]);
      expect(r.rows[0]!.payout!.sourceAmount.toNumber(), z).toBe(v);
    }
  });
});

describe('an Excel error value', () => {
  it('is no value: a formula that failed (#N/A) in a field sent is an error on that cell, from a workbook or its CSV', async () => {
    const cols = [...CANONICAL_FIELDS];
    const values = cols.map((c) => ({ ...EXAMPLES.SEPA, documents: 'inv.pdf' })[c] ?? '');
    const ws = XLSX.utils.aoa_to_sheet([
      [...cols, 'Check'],
      [...values, ''],
    ]);
    // a VLOOKUP that found no payee, and a check column of the user's own that is not sent
    ws[XLSX.utils.encode_cell({ r: 1, c: cols.indexOf('accountName') })] = { t: 'e', v: 0x2a, w: '#N/A' };
    ws[XLSX.utils.encode_cell({ r: 1, c: cols.length })] = { t: 'e', v: 0x07, w: '#DIV/0!' };
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, ws, 'S');
    const xlsx = join(dir, 'error-value.xlsx');
    writeFileSync(xlsx, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);
    const csv = join(dir, 'error-value.csv');
    writeFileSync(csv, XLSX.utils.sheet_to_csv(ws));
    for (const p of [xlsx, csv]) {
      const r = await collectBatch(p);
      expect(r.rows[0]!.valid, p).toBe(false);
      expect(r.problems.filter((x) => x.severity === 'error')).toEqual([
        expect.objectContaining({ code: 'EXCEL_ERROR', row: 2, column: 'accountName', value: '#N/A' }),
      ]);
    }
  });
});

describe('a hidden row', () => {
  it('a row the sheet hides (a filter, or Hide) is refused, never paid unseen', async () => {
    const cols = [...CANONICAL_FIELDS];
    const example = (reference: string, sourceAmount: string) =>
      cols.map((c) => ({ ...EXAMPLES.SEPA, documents: 'inv.pdf', reference, sourceAmount })[c] ?? '');
    const ws = XLSX.utils.aoa_to_sheet([cols, example('R1', '10'), example('R2', '20'), example('R3', '30')]);
    ws['!rows'] = [{}, {}, { hidden: true }];
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, ws, 'S');
    const xml = (XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer).toString('latin1');
    // streamed, and read whole (a sheet without <dimension>; uncompressed, so a patch of the same length keeps the zip valid)
    for (const [name, patched] of [
      ['streamed', xml],
      ['whole', xml.replace('<dimension ', '<dimensioX ')],
    ]) {
      const p = join(dir, `hidden-row-${name}.xlsx`);
      writeFileSync(p, Buffer.from(patched!, 'latin1'));
      const r = await collectBatch(p);
      expect(
        r.rows.map((x) => [x.rowNumber, x.valid]),
        name,
      ).toEqual([
        [2, true],
        [3, false],
        [4, true],
      ]);
      expect(r.problems).toEqual([expect.objectContaining({ severity: 'error', code: 'HIDDEN_ROW', row: 3 })]);
    }
  });
});

describe('a hidden column', () => {
  it('a payout field in a column the sheet hides is refused on that cell, never paid unseen', async () => {
    const cols = [...CANONICAL_FIELDS, 'Notes'];
    const example = (reference: string, notes: string) =>
      cols.map((c) => ({ ...EXAMPLES.SEPA, documents: 'inv.pdf', reference, Notes: notes })[c] ?? '');
    const ws = XLSX.utils.aoa_to_sheet([cols, example('R1', 'a'), example('R2', '')]);
    // the IBAN hidden (Hide), a column of the user's own hidden too: not sent, not refused
    ws['!cols'] = cols.map((c) => (c === 'iban' || c === 'Notes' ? { hidden: true } : {}));
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, ws, 'S');
    const xml = (XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer).toString('latin1');
    for (const [name, bytes] of [
      ['streamed', Buffer.from(xml, 'latin1')],
      ['whole', Buffer.from(xml.replace('<dimension ', '<dimensioX '), 'latin1')],
      ['xls', XLSX.write(wb, { type: 'buffer', bookType: 'xls' }) as Buffer],
    ] as const) {
      const p = join(dir, `hidden-column-${name}.${name === 'xls' ? 'xls' : 'xlsx'}`);
      writeFileSync(p, bytes);
      const r = await collectBatch(p);
      expect(
        r.rows.map((x) => [x.rowNumber, x.valid]),
        name,
      ).toEqual([
        [2, false],
        [3, false],
      ]);
      expect(
        r.problems.filter((x) => x.row !== undefined).map((x) => [x.row, x.code, x.column]),
        name,
      ).toEqual([
        [2, 'HIDDEN_COLUMN', 'iban'],
        [3, 'HIDDEN_COLUMN', 'iban'],
      ]);
    }
  });
});

describe('a cell beyond the header', () => {
  it('is refused with what a sheet needs (a header over it), not the advice of a CSV (quotes)', async () => {
    const cols = [...CANONICAL_FIELDS];
    const row = cols.map((c) => ({ ...EXAMPLES.SEPA, documents: 'inv.pdf' })[c] ?? '');
    const ws = XLSX.utils.aoa_to_sheet([cols, [...row, 'paid twice last year?']]);
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, ws, 'S');
    const p = join(dir, 'beyond-header.xlsx');
    writeFileSync(p, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);
    const r = await collectBatch(p);
    expect(r.problems).toEqual([expect.objectContaining({ code: 'EXTRA_CELLS', row: 2 })]);
    expect(r.problems[0]!.message).toContain('a column with no header');
    expect(r.problems[0]!.expected).toContain('a header over every column that holds a value');
  });
});

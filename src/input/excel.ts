// Excel (.xlsx and .xls) through SheetJS, read whole (it has no row streaming), then handed out
// row by row like CSV records. Each cell is the text the user sees (`w`; a formula its cached
// value), but a date cell is its ISO date, with what it shows handed over too (so validation can
// refuse a date in an amount or identifier column), and a numeric cell hands over its raw number
// (the Excel traps: lost leading zeros or digits, amounts shown rounded).
import * as XLSX from 'xlsx';
import { InputError, type Refuse } from './input-errors.ts';
import { checkWorkbook } from './zip-guard.ts';
import type { SourceRecord } from './records.ts';

/** Rows read between two turns of the event loop (blank ones included): Ctrl-C is heard only on a turn. */
const YIELD_EVERY = 2000;

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

// SheetJS's number-format helpers, which its type declarations leave untyped.
const SSF = XLSX.SSF as {
  is_date(format: string): boolean;
  parse_date_code(serial: number): { y: number; m: number; d: number; H: number; M: number; S: number } | null;
};

/**
 * A serial number shown with a date format, as an ISO date (2025-01-31, or 2025-01-31T09:30:00
 * with a time); undefined when the format is no date's. Shared with the results reader.
 */
export function excelDateText(serial: number, format: string | undefined): string | undefined {
  if (format === undefined || !SSF.is_date(format)) return undefined;
  const d = SSF.parse_date_code(serial);
  if (!d) return undefined;
  const date = `${pad(d.y, 4)}-${pad(d.m)}-${pad(d.d)}`;
  return d.H || d.M || d.S ? `${date}T${pad(d.H)}:${pad(d.M)}:${pad(Math.floor(d.S))}` : date;
}

function cellText(cell: XLSX.CellObject | undefined): { text: string; number?: number; date?: string } {
  if (!cell || cell.t === 'z' || cell.v === undefined || cell.v === null) return { text: '' };
  if (cell.t === 'n') {
    const v = cell.v as number;
    const text = excelDateText(v, cell.z === undefined ? undefined : String(cell.z));
    if (text !== undefined) return { text, date: cell.w ?? text };
    return { text: cell.w ?? String(v), number: v };
  }
  if (cell.t === 'b') return { text: cell.w ?? (cell.v ? 'TRUE' : 'FALSE') };
  if (cell.t === 'e') return { text: cell.w ?? '#ERROR' };
  return { text: cell.w ?? String(cell.v) };
}

/**
 * A workbook's sheet to read: the first, or the one named (exactly, else ignoring case). Shared
 * with the results reader, which refuses with its own error type.
 */
export function readSheet(buf: Buffer, file: string, sheetName: string | undefined, refuse: Refuse) {
  let wb: XLSX.WorkBook;
  try {
    // cellNF: each cell's number format, without which a date cell is only its serial number;
    // cellDates false: a date cell is that number (t 'n', never 'd'), read by cellText.
    // dense: rows as arrays of the cells present, so the rows walked are those of the cells, not of
    // the sheet's <dimension>, which may claim A1:XFD1048576 (17 billion cells) for a few rows.
    wb = XLSX.read(buf, {
      type: 'buffer',
      cellNF: true,
      cellDates: false,
      cellFormula: false,
      cellHTML: false,
      dense: true,
    });
  } catch (e) {
    throw refuse('UNSUPPORTED_FORMAT', `${file}: not a readable Excel workbook (${(e as Error).message}).`);
  }
  const sheets = wb.SheetNames;
  if (sheets.length === 0) throw refuse('EMPTY_FILE', `${file}: the workbook has no sheet.`);
  let name = sheets[0]!;
  if (sheetName !== undefined) {
    const found = sheets.find((s) => s === sheetName) ?? sheets.find((s) => s.toLowerCase() === sheetName.toLowerCase());
    if (!found)
      throw refuse(
        'SHEET_NOT_FOUND',
        `${file}: no sheet named "${sheetName}"; the workbook has ${sheets.map((s) => `"${s}"`).join(', ')}.`,
      );
    name = found;
  }
  return { name, sheets, ws: wb.Sheets[name]!, workbook: wb };
}

/** Opens a workbook. Throws InputError TOO_LARGE, before SheetJS sees a byte, for one over the limits. */
export async function openExcel(buf: Buffer, file: string, sheetName?: string) {
  await checkWorkbook(buf, file);
  const { name, sheets, ws } = readSheet(buf, file, sheetName, (code, message) => new InputError(code, file, message));
  const data = (ws['!data'] ?? []) as (XLSX.CellObject[] | undefined)[];
  // The declared range gives only where the sheet starts; its end is where the cells end.
  const ref = ws['!ref'];
  const start = ref ? XLSX.utils.decode_range(ref).s : { r: 0, c: 0 };
  // The header's width, once read: a later row's cells beyond it are only counted (EXTRA_CELLS),
  // so a row with one cell in column XFD costs that cell, not 16,384 empty ones.
  let width: number | undefined;
  async function* records(): AsyncGenerator<SourceRecord> {
    for (let r = start.r; r < data.length; r++) {
      if ((r - start.r + 1) % YIELD_EVERY === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      const cells = data[r] ?? [];
      const values: string[] = [];
      let numbers: (number | undefined)[] | undefined;
      let dates: (string | undefined)[] | undefined;
      const end = width === undefined ? cells.length : Math.min(cells.length, start.c + width);
      for (let c = start.c; c < end; c++) {
        const { text, number, date } = cellText(cells[c]);
        values.push(text);
        if (number !== undefined) (numbers ??= [])[c - start.c] = number;
        if (date !== undefined) (dates ??= [])[c - start.c] = date;
      }
      if (end < cells.length) {
        // beyond the header: the cells present only (the keys of a sparse array), packed after it
        for (const k of Object.keys(cells)) if (Number(k) >= end) values.push(cellText(cells[Number(k)]).text);
      }
      if (width === undefined && values.some((v) => v.trim() !== '')) width = values.length;
      yield { rowNumber: r + 1, values, ...(numbers && { numbers }), ...(dates && { dates }) };
    }
  }
  return { sheet: name, sheets, records: records() };
}

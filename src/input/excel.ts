// Excel (.xlsx and .xls) through SheetJS. A workbook is read whole (SheetJS has no row streaming);
// rows are then handed out one by one like CSV records.
//
// Every cell is read as the text the user sees (SheetJS's formatted text `w`), with two readings:
// - a date cell is read as its value, an ISO date (2025-01-31, or 2025-01-31T09:30:00 with a time),
//   not as its serial number nor in the machine's locale format;
// - a formula cell is read as its cached value, formatted the same way.
// A numeric cell also hands over its raw number, so validation can catch account numbers that
// lost their leading zeros or digits (the Excel traps) and amounts shown rounded.
import * as XLSX from 'xlsx';
import { InputError } from './errors.ts';
import { checkWorkbook } from './zip-guard.ts';
import type { RecordSource, SourceRecord } from './rows.ts';

export interface ExcelOpen {
  sheet: string;
  sheets: string[];
  records: RecordSource;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

function cellText(cell: XLSX.CellObject | undefined): { text: string; number?: number } {
  if (!cell || cell.t === 'z' || cell.v === undefined || cell.v === null) return { text: '' };
  if (cell.t === 'n') {
    const v = cell.v as number;
    if (cell.z !== undefined && XLSX.SSF.is_date(cell.z)) {
      const d = XLSX.SSF.parse_date_code(v);
      if (d) {
        const date = `${pad(d.y, 4)}-${pad(d.m)}-${pad(d.d)}`;
        const hasTime = d.H || d.M || d.S;
        return { text: hasTime ? `${date}T${pad(d.H)}:${pad(d.M)}:${pad(Math.floor(d.S))}` : date };
      }
    }
    return { text: cell.w ?? String(v), number: v };
  }
  if (cell.t === 'd') {
    const d = cell.v as Date;
    return {
      text: d
        .toISOString()
        .replace(/T00:00:00\.000Z$/, '')
        .replace(/\.000Z$/, ''),
    };
  }
  if (cell.t === 'b') return { text: cell.w ?? (cell.v ? 'TRUE' : 'FALSE') };
  if (cell.t === 'e') return { text: cell.w ?? '#ERROR' };
  return { text: cell.w ?? String(cell.v) };
}

/** Opens a workbook. Throws InputError TOO_LARGE, before SheetJS sees a byte, for one over the limits. */
export async function openExcel(buf: Buffer, file: string, sheetName?: string): Promise<ExcelOpen> {
  await checkWorkbook(buf, file);
  let wb: XLSX.WorkBook;
  try {
    wb = XLSX.read(buf, { type: 'buffer', cellDates: false, cellFormula: false, cellHTML: false, cellStyles: false, dense: false });
  } catch (e) {
    throw new InputError('UNSUPPORTED_FORMAT', file, `${file}: not a readable Excel workbook (${(e as Error).message}).`);
  }
  const sheets = wb.SheetNames;
  if (sheets.length === 0) throw new InputError('EMPTY_FILE', file, `${file}: the workbook has no sheet.`);
  let name = sheets[0]!;
  if (sheetName !== undefined) {
    const found = sheets.find((s) => s === sheetName) ?? sheets.find((s) => s.toLowerCase() === sheetName.toLowerCase());
    if (!found) {
      throw new InputError(
        'SHEET_NOT_FOUND',
        file,
        `${file}: no sheet named "${sheetName}"; the workbook has ${sheets.map((s) => `"${s}"`).join(', ')}.`,
      );
    }
    name = found;
  }
  const ws = wb.Sheets[name]!;
  const ref = ws['!ref'];
  const range = ref ? XLSX.utils.decode_range(ref) : undefined;
  let r = range ? range.s.r : 0;
  // the workbook is in memory: records are made one at a time as rows are read, never awaited
  const records: RecordSource = {
    next() {
      if (!range || r > range.e.r) return undefined;
      const values: string[] = [];
      const numbers: (number | undefined)[] = [];
      let anyNumber = false;
      for (let c = range.s.c; c <= range.e.c; c++) {
        const { text, number } = cellText(ws[XLSX.utils.encode_cell({ r, c })] as XLSX.CellObject | undefined);
        values.push(text);
        numbers.push(number);
        if (number !== undefined) anyNumber = true;
      }
      const rec: SourceRecord = { rowNumber: r + 1, values };
      if (anyNumber) rec.numbers = numbers;
      r++;
      return rec;
    },
    wait: () => Promise.resolve(),
  };
  return { sheet: name, sheets, records };
}

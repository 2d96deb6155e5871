// From records (arrays of cell texts with their spreadsheet row numbers) to batch rows: the header
// row, the column mapping, blank rows and a trailing totals row, shared by the CSV and Excel readers.
import { mapColumns, type CanonicalField, type ColumnMapping } from './columns.ts';
import { InputError } from './errors.ts';

/** One record as a reader produced it. */
export interface SourceRecord {
  /** The row number as the spreadsheet shows it (the header row is normally 1). */
  rowNumber: number;
  values: string[];
  /** Excel only: the raw number of a numeric cell, by column index (undefined elsewhere). */
  numbers?: (number | undefined)[];
  /** Excel only: what a date-formatted cell shows ("5/1/26"), by column index (its value is the ISO date). */
  dates?: (string | undefined)[];
}

/** One payout row of the file. */
export interface RawRow {
  /** Spreadsheet row number: header is row 1, the first data row 2 (see src/input/README.md "Row numbers"). */
  rowNumber: number;
  /** Every cell by the file's own (unique) header, trimmed of surrounding whitespace. */
  cells: Record<string, string>;
  /** Excel only: cells that were numbers, by header, with their raw value (for the Excel traps). */
  numbers?: Record<string, number>;
  /** Excel only: cells formatted as dates, by header, with the text Excel shows ("5/1/26"). */
  dates?: Record<string, string>;
  /** How many non-empty cells lay beyond the last header (a delimiter inside an unquoted value). */
  extraCells?: number;
}

export interface InputWarning {
  code: 'BLANK_ROWS' | 'TOTALS_ROW' | 'COLUMN_IGNORED';
  /** First row concerned (undefined for header notes). */
  row?: number;
  /** Last row of a range of blank rows. */
  rowEnd?: number;
  message: string;
}

const TOTAL_WORD = /^(grand\s*|sub\s*)?totals?\s*:?$|^sum\s*:?$/i;

function isBlank(values: string[]): boolean {
  return values.every((v) => v.trim() === '');
}

/** The cell at i is empty or blank (or there is no such column). */
function isEmptyAt(values: string[], i: number): boolean {
  return i < 0 || (values[i] ?? '').trim() === '';
}
/** A cell that labels a total: "total", "totals", "grand total", "subtotal" or "sum", with or without a colon. */
function isTotalLabel(v: string): boolean {
  return TOTAL_WORD.test(v.trim());
}

export interface ShapedRows extends ColumnMapping {
  headerRow: number;
  warnings: InputWarning[];
  rows: AsyncIterable<RawRow>;
}

/**
 * Reads the header from the first non-blank record and returns the remaining records as rows.
 * Blank rows are skipped with one warning per run of them; the last non-blank row is skipped
 * with a warning when it is a totals row: a cell reads "Total", "Totals", "Grand total",
 * "Subtotal" or "Sum", or reference, method and accountName are all empty while sourceAmount is not.
 */
export async function shapeRows(file: string, records: AsyncIterable<SourceRecord>): Promise<ShapedRows> {
  const it = records[Symbol.asyncIterator]();
  const { header, leadingBlank } = await readHeader(file, it);
  let mapped: ColumnMapping;
  try {
    mapped = mapColumns(header.values, file, header.rowNumber);
  } catch (e) {
    await it.return?.(); // the reader releases the file when its records are abandoned
    throw e;
  }
  const warnings: InputWarning[] = mapped.notes.map((message) => ({ code: 'COLUMN_IGNORED', message }));
  const toRow = (r: SourceRecord) => rowOf(r, mapped.columns);
  const looksLikeTotals = totalsTest(mapped);

  // The rest of the records as rows; the file is released when they end, fail or are abandoned.
  async function* rows(): AsyncGenerator<RawRow> {
    let blankFrom: number | undefined;
    let blankTo = 0;
    let pendingTotals: SourceRecord | undefined;
    let yielded = 0;
    const flushBlanks = () => {
      if (blankFrom === undefined) return;
      const range = blankFrom === blankTo ? `row ${blankFrom} is blank` : `rows ${blankFrom}-${blankTo} are blank`;
      warnings.push({ code: 'BLANK_ROWS', row: blankFrom, rowEnd: blankTo, message: `${range} and skipped` });
      blankFrom = undefined;
    };
    try {
      for (let next = await it.next(); !next.done; next = await it.next()) {
        const r = next.value;
        if (isBlank(r.values)) {
          if (blankFrom === undefined) blankFrom = r.rowNumber;
          blankTo = r.rowNumber;
          continue;
        }
        if (pendingTotals) {
          // not the last row after all: an ordinary row, validated like any other
          const held = pendingTotals;
          pendingTotals = undefined;
          yielded++;
          yield toRow(held);
        }
        flushBlanks();
        if (looksLikeTotals(r)) pendingTotals = r;
        else {
          yielded++;
          yield toRow(r);
        }
      }
      if (pendingTotals) {
        warnings.push({
          code: 'TOTALS_ROW',
          row: pendingTotals.rowNumber,
          message: `row ${pendingTotals.rowNumber} looks like a totals row (last row, ${
            pendingTotals.values.some(isTotalLabel) ? 'labelled as a total' : 'an amount with no reference, method or name'
          }) and was skipped`,
        });
      }
      flushBlanks();
      if (yielded === 0)
        throw new InputError('EMPTY_FILE', file, `${file}: the file has a header (row ${header.rowNumber}) but no payout rows.`);
    } finally {
      await it.return?.();
    }
  }

  if (leadingBlank.length) {
    const a = leadingBlank[0]!;
    const b = leadingBlank[leadingBlank.length - 1]!;
    warnings.push({
      code: 'BLANK_ROWS',
      row: a,
      rowEnd: b,
      message: `${a === b ? `row ${a} is` : `rows ${a}-${b} are`} blank above the header and skipped`,
    });
  }
  return { ...mapped, headerRow: header.rowNumber, warnings, rows: rows() };
}

/**
 * Reads up to the header: the first non-blank record (the blank ones before it noted). A reader
 * that fails or ends has released its file already.
 */
async function readHeader(file: string, it: AsyncIterator<SourceRecord>): Promise<{ header: SourceRecord; leadingBlank: number[] }> {
  const leadingBlank: number[] = [];
  for (;;) {
    const first = await it.next();
    if (first.done) {
      throw new InputError('EMPTY_FILE', file, `${file}: the file is empty: no header row and no payout rows.`);
    }
    if (!isBlank(first.value.values)) return { header: first.value, leadingBlank };
    leadingBlank.push(first.value.rowNumber);
  }
}

/** A record as a row: its cells by header (trimmed), with the cells beyond the last column counted. */
function rowOf(r: SourceRecord, columns: string[]): RawRow {
  const width = columns.length;
  const cells: Record<string, string> = {};
  // (assigning "__proto__" makes no cell: a header of that name is left out)
  columns.forEach((c, i) => {
    if (c !== '__proto__') cells[c] = (r.values[i] ?? '').trim();
  });
  const row: RawRow = { rowNumber: r.rowNumber, cells };
  const extra = r.values.slice(width).filter((v) => v.trim() !== '').length;
  if (extra) row.extraCells = extra;
  for (let i = 0; i < width; i++) {
    const n = r.numbers?.[i];
    const d = r.dates?.[i];
    if (n !== undefined) (row.numbers ??= {})[columns[i]!] = n;
    if (d !== undefined) (row.dates ??= {})[columns[i]!] = d;
  }
  return row;
}

/** Whether a record looks like a totals row: a total label, or an amount with no reference, method or name. */
function totalsTest({ columns, fields }: ColumnMapping): (r: SourceRecord) => boolean {
  const refIdx = columns.indexOf(fields.reference ?? '');
  const methodIdx = columns.indexOf(fields.method ?? '');
  const nameIdx = columns.indexOf(fields.accountName ?? '');
  const amountIdx = columns.indexOf(fields.sourceAmount ?? '');
  return (r) =>
    r.values.some(isTotalLabel) ||
    (isEmptyAt(r.values, refIdx) && isEmptyAt(r.values, methodIdx) && isEmptyAt(r.values, nameIdx) && !isEmptyAt(r.values, amountIdx));
}

export type { CanonicalField };

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
}

/** One payout row of the file. */
export interface RawRow {
  /** Spreadsheet row number: header is row 1, the first data row 2 (see README "Row numbers"). */
  rowNumber: number;
  /** Every cell by the file's own (unique) header, trimmed of surrounding whitespace. */
  cells: Record<string, string>;
  /** Excel only: cells that were numbers, by header, with their raw value (for the Excel traps). */
  numbers?: Record<string, number>;
  /** How many non-empty cells lay beyond the last header (a delimiter inside an unquoted value). */
  extraCells?: number;
}

export type InputWarningCode = 'BLANK_ROWS' | 'TOTALS_ROW' | 'COLUMN_IGNORED';
export interface InputWarning {
  code: InputWarningCode;
  /** First row concerned (undefined for header notes). */
  row?: number;
  /** Last row of a range of blank rows. */
  rowEnd?: number;
  message: string;
}

const TOTAL_WORD = /^(grand\s*|sub\s*)?totals?\s*:?$|^sum\s*:?$/i;

function isBlank(values: string[]): boolean {
  for (const v of values) if (v.length !== 0 && v.trim() !== '') return false;
  return true;
}
/** A cell that labels a total: short, and starting like "total", "grand total", "subtotal" or "sum". */
function isTotalLabel(v: string): boolean {
  if (v.length === 0 || v.length > 14) return false;
  const c = v.charCodeAt(0) | 0x20;
  return (c === 0x74 || c === 0x67 || c === 0x73 || c === 0x20) && TOTAL_WORD.test(v.trim());
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
export async function shapeRows(
  file: string,
  records: AsyncIterator<SourceRecord>,
  onDone: () => Promise<void> | void,
): Promise<ShapedRows> {
  let first: IteratorResult<SourceRecord>;
  const leadingBlank: number[] = [];
  for (;;) {
    first = await records.next();
    if (first.done) {
      await onDone();
      throw new InputError('EMPTY_FILE', file, `${file}: the file is empty: no header row and no payout rows.`);
    }
    if (!isBlank(first.value.values)) break;
    leadingBlank.push(first.value.rowNumber);
  }
  const header = first.value;
  let mapped: ColumnMapping;
  try {
    mapped = mapColumns(header.values, file, header.rowNumber);
  } catch (e) {
    await onDone();
    throw e;
  }
  const { columns, fields } = mapped;
  const warnings: InputWarning[] = mapped.notes.map((message) => ({ code: 'COLUMN_IGNORED', message }));
  const width = columns.length;
  const refIdx = columns.indexOf(fields.reference ?? '');
  const methodIdx = columns.indexOf(fields.method ?? '');
  const nameIdx = columns.indexOf(fields.accountName ?? '');
  const amountIdx = columns.indexOf(fields.sourceAmount ?? '');

  const toRow = (r: SourceRecord): RawRow => {
    const cells: Record<string, string> = {};
    for (let i = 0; i < width; i++) {
      const v = r.values[i];
      cells[columns[i]!] = v === undefined ? '' : v.trim();
    }
    const row: RawRow = { rowNumber: r.rowNumber, cells };
    if (r.values.length > width) {
      let extra = 0;
      for (let i = width; i < r.values.length; i++) if (r.values[i]!.trim() !== '') extra++;
      if (extra) row.extraCells = extra;
    }
    if (r.numbers) {
      for (let i = 0; i < width; i++) {
        const n = r.numbers[i];
        if (n !== undefined) (row.numbers ??= {})[columns[i]!] = n;
      }
    }
    return row;
  };
  const looksLikeTotals = (r: SourceRecord): boolean => {
    const v = (i: number) => (i >= 0 ? (r.values[i] ?? '').trim() : '');
    for (const c of r.values) if (isTotalLabel(c)) return true;
    return v(refIdx) === '' && v(methodIdx) === '' && v(nameIdx) === '' && v(amountIdx) !== '';
  };

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
      for (;;) {
        const next = await records.next();
        if (next.done) break;
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
      if (yielded === 0) throw new InputError('EMPTY_FILE', file, `${file}: the file has a header (row ${header.rowNumber}) but no payout rows.`);
    } finally {
      await onDone();
    }
  }

  if (leadingBlank.length) {
    const a = leadingBlank[0]!;
    const b = leadingBlank[leadingBlank.length - 1]!;
    warnings.push({ code: 'BLANK_ROWS', row: a, rowEnd: b, message: `${a === b ? `row ${a} is` : `rows ${a}-${b} are`} blank above the header and skipped` });
  }
  return { ...mapped, headerRow: header.rowNumber, warnings, rows: rows() };
}

export type { CanonicalField };

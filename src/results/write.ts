// Writing a results file: the batch's columns in their order, then the result columns (named so
// that every header is unique: columns.ts resultHeaderOf).
//
// CSV (csv-stringify): UTF-8 with a BOM (Excel then reads the accents right), CRLF line endings,
// the input's delimiter; a field is quoted when it holds the delimiter, a quote, CR or LF, or
// starts or ends with a space (a spreadsheet would trim it).
//
// XLSX (SheetJS): text cells are typed strings (t:'s', through the shared string table). Excel
// never runs a string cell as a formula, but the same quote prefix is applied anyway so a results
// file reads back identically whichever format it was written in, and a sheet saved from it as CSV
// stays safe. Rates and amounts are real numeric cells (t:'n') when the decimal survives a double
// exactly (see numbers.ts); otherwise they are text. The amounts (the batch's sourceAmount, fee,
// totalDeductible, destinationAmount, refunded) carry a money format (#,##0.00), the rates 0.0000.
import { stringify } from 'csv-stringify/sync';
import * as XLSX from 'xlsx';
import { matchHeader } from '../input/columns.ts';
import {
  MONEY_RESULT_COLUMNS,
  NUMERIC_RESULT_COLUMNS,
  OPTIONAL_RESULT_COLUMNS,
  RESULT_COLUMNS,
  resultHeaderOf,
  splitColumns,
  type ResultColumn,
} from './columns.ts';
import { neutralise } from './neutralise.ts';
import { isPlainDecimal, numberCell } from './numbers.ts';
import { rename } from 'node:fs/promises';
import { writeFileAtomic } from '../files/atomic.ts';
import { withLock } from '../files/lock.ts';
import { serialised } from '../files/queue.ts';
import { resultsLockPath } from './paths.ts';
import { ResultsError } from './errors.ts';
import type { ResultRow, ResultsSource, ResultsTable } from './types.ts';
import { SWAP_AMOUNT_COLUMNS, SWAP_COLUMNS, SWAPS_SHEET, type SwapLine } from './swaps.ts';

const NUMERIC = new Set<string>(NUMERIC_RESULT_COLUMNS);
const MONEY = new Set<string>(MONEY_RESULT_COLUMNS);
/** Excel's limit on the text of one cell. */
const XLSX_MAX_TEXT = 32767;
const RESULTS_SHEET = 'Results';

export interface ResultsLayout {
  /** The batch's own columns, in order (result columns of a results file run again taken out). */
  input: string[];
  /** The result columns written: RESULT_COLUMNS, then the OPTIONAL_RESULT_COLUMNS some row holds. */
  result: ResultColumn[];
  /** The header row: `input`, then each of `result` under its unique name. */
  header: string[];
}

/**
 * The header row written for a table: the batch's own columns, then RESULT_COLUMNS, then those
 * OPTIONAL_RESULT_COLUMNS that some row holds (`rows` absent: none of them).
 */
export function resultsHeader(inputColumns: readonly string[], rows: readonly ResultRow[] = []): ResultsLayout {
  const input = splitColumns(inputColumns).input;
  const optional = OPTIONAL_RESULT_COLUMNS.filter((c) => rows.some((r) => (r.result[c] ?? '') !== ''));
  const result: ResultColumn[] = [...RESULT_COLUMNS, ...optional];
  return { input, result, header: [...input, ...result.map((c) => resultHeaderOf(c, input))] };
}

/** Rows in row-number order (a stable sort: rows in order already stay as they are). */
const byRowNumber = (rows: readonly ResultRow[]): ResultRow[] => [...rows].sort((a, b) => a.rowNumber - b.rowNumber);

/** A table whose values the run makes row by row (ResultsSource), as a plain table. */
function tableOf(table: ResultsTable | ResultsSource): ResultsTable {
  if (!('resultAt' in table)) return table;
  const { resultAt, rows, ...rest } = table;
  return { ...rest, rows: rows.map((r, i) => ({ rowNumber: r.rowNumber, cells: r.cells, result: resultAt(i) })) };
}

/** Writes the results file atomically. Calls for the same path run in call order. Throws ResultsError WRITE_FAILED. */
export async function writeResults(path: string, source: ResultsTable | ResultsSource): Promise<void> {
  return serialised(path, async () => {
    const table = tableOf(source);
    const content = table.format === 'csv' ? csvText(table) : xlsxBytes(table);
    try {
      await writeFileAtomic(path, [content]);
    } catch (e) {
      const { code, message } = e as NodeJS.ErrnoException;
      const why = (code && WHY_NOT_WRITTEN[code]) ?? code ?? message;
      throw new ResultsError(
        'WRITE_FAILED',
        path,
        `${path}: cannot write the results file: ${why}. The previous version, if any, is unchanged.`,
        { cause: e },
      );
    }
  });
}

/**
 * A results file complete under its partial name (paths.ts partialResultsPath) put in its place:
 * one rename, under the lock of the place (`status` may be writing a file of that name). Throws
 * ResultsError WRITE_FAILED.
 */
export async function publishResults(partial: string, path: string): Promise<void> {
  try {
    await withLock(resultsLockPath(path), () => rename(partial, path), { purpose: 'results write' });
  } catch (e) {
    const { code, message } = e as NodeJS.ErrnoException;
    const why = (code && WHY_NOT_WRITTEN[code]) ?? code ?? message;
    throw new ResultsError('WRITE_FAILED', path, `${path}: cannot put the results in place: ${why}. They are complete in ${partial}.`, {
      cause: e,
    });
  }
}

const DENIED = 'permission denied (the folder must be writable: the file is replaced through a temporary file beside it)';
const WHY_NOT_WRITTEN: Record<string, string> = {
  EACCES: DENIED,
  EPERM: DENIED,
  ENOENT: 'the folder does not exist',
  ENOSPC: 'the disk is full',
  EISDIR: 'a folder has that name',
};

// ---------------------------------------------------------------- CSV

/** A cell starting or ending with a space is quoted, so that a spreadsheet keeps the space. */
const EDGE_SPACE = /^ | $/;

/** The whole CSV text, BOM and a CRLF after every line included. */
export function csvText(table: ResultsTable): string {
  const { input, header, result } = resultsHeader(table.inputColumns, table.rows);
  const lines = byRowNumber(table.rows).map((row) => [
    ...input.map((c) => neutralise(row.cells[c] ?? '')),
    // a plain decimal in a numeric column stays a number: "-12.50" is not neutralised
    ...result.map((c) => {
      const v = row.result[c] ?? '';
      return NUMERIC.has(c) && isPlainDecimal(v) ? v : neutralise(v);
    }),
  ]);
  return stringify([header.map(neutralise), ...lines], {
    bom: true,
    delimiter: table.delimiter ?? ',',
    record_delimiter: '\r\n',
    quote_record_delimiter: true, // a lone CR or LF in a cell too, not only CRLF
    quoted_match: EDGE_SPACE,
  });
}

// ---------------------------------------------------------------- XLSX

/**
 * SheetJS escapes XML and control characters but not two things OOXML needs for an exact round
 * trip: a literal "_x0041_" in the text (which readers decode as "A": its underscore is written
 * _x005F_) and CR (a raw CR is turned into LF by every XML parser: written _x000D_, as Excel does).
 */
function escapeOoxmlText(s: string): string {
  let out = s;
  if (out.includes('_')) out = out.replace(/_(?=x[0-9a-fA-F]{4}_)/g, '_x005F_');
  if (out.includes('\r')) out = out.replace(/\r/g, '_x000D_');
  return out;
}

function textCell(text: string): XLSX.CellObject | undefined {
  if (text === '') return undefined;
  let v = neutralise(text);
  // Excel refuses longer text; cut rather than lose the whole checkpoint (never happens to ids or amounts)
  if (v.length > XLSX_MAX_TEXT) v = `${v.slice(0, XLSX_MAX_TEXT - 1)}…`;
  return { t: 's', v: escapeOoxmlText(v) };
}

function resultCell(c: ResultColumn, text: string | undefined): XLSX.CellObject | undefined {
  if (text === undefined || text === '') return undefined;
  return (NUMERIC.has(c) && numberCell(text, MONEY.has(c))) || textCell(text);
}

/** Is this batch header its amount column (sourceAmount, or an alias such as "Amount")? */
const isAmountHeader = (header: string): boolean => matchHeader(header)?.field === 'sourceAmount';

/** Column widths in characters: the header's, widened to the longest of the first 200 rows, at most 60. */
function columnWidths(header: readonly string[], data: readonly (readonly (XLSX.CellObject | undefined)[])[]): number[] {
  const widths = header.map((h) => Math.min(60, Math.max(8, h.length + 2)));
  for (const line of data.slice(1, 201)) {
    line.forEach((cell, k) => {
      if (cell) widths[k] = Math.min(60, Math.max(widths[k]!, String(cell.v).length + 2));
    });
  }
  return widths;
}

export function xlsxBytes(table: ResultsTable): Uint8Array {
  const { input, header, result } = resultsHeader(table.inputColumns, table.rows);
  const amount = input.map(isAmountHeader);
  const rows = byRowNumber(table.rows);
  const data: (XLSX.CellObject | undefined)[][] = [
    header.map((h) => textCell(h)),
    ...rows.map((row) => [
      // the batch's amount column: a number as the result amounts are, else text as the batch had it
      ...input.map((c, k) => (amount[k] && numberCell(row.cells[c] ?? '', true)) || textCell(row.cells[c] ?? '')),
      ...result.map((c) => resultCell(c, row.result[c])),
    ]),
  ];
  const ws = {
    '!data': data as XLSX.CellObject[][],
    '!ref': XLSX.utils.encode_range({ s: { r: 0, c: 0 }, e: { r: rows.length, c: header.length - 1 } }),
    '!cols': columnWidths(header, data).map((wch) => ({ wch })),
  } as XLSX.WorkSheet;
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, ws, RESULTS_SHEET);
  if (table.swaps?.length) XLSX.utils.book_append_sheet(wb, swapsSheet(table.swaps), SWAPS_SHEET);
  return XLSX.write(wb, { type: 'buffer', bookType: 'xlsx', bookSST: true, compression: true }) as Uint8Array;
}

/** The second sheet "Swaps": the batch's swaps, after the results sheet so `retry` still reads the rows first. */
function swapsSheet(swaps: readonly SwapLine[]): XLSX.WorkSheet {
  const cell = (c: (typeof SWAP_COLUMNS)[number], text = '') =>
    (c === 'exchangeRate' || SWAP_AMOUNT_COLUMNS.includes(c) ? numberCell(text, c !== 'exchangeRate') : undefined) ?? textCell(text);
  const data: (XLSX.CellObject | undefined)[][] = [
    SWAP_COLUMNS.map((c) => textCell(c)),
    ...swaps.map((s) => SWAP_COLUMNS.map((c) => cell(c, s[c]))),
  ];
  return {
    '!data': data,
    '!ref': XLSX.utils.encode_range({ s: { r: 0, c: 0 }, e: { r: swaps.length, c: SWAP_COLUMNS.length - 1 } }),
    '!cols': columnWidths(SWAP_COLUMNS, data).map((wch) => ({ wch })),
  } as XLSX.WorkSheet;
}

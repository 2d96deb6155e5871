// Writing a results file: the batch's columns in their order, then the result columns.
//
// CSV: UTF-8 with a BOM (Excel then reads the accents right), CRLF line endings, the input's
// delimiter; a field is quoted when it holds the delimiter, a quote, CR or LF, or starts or ends
// with a space. The CSV is built as one string by hand rather than through csv-stringify: a
// checkpoint rewrites the whole file every few seconds, and this is a few times faster
// (100,000 rows well under a second).
//
// XLSX (SheetJS): text cells are typed strings (t:'s', through the shared string table). Excel
// never runs a string cell as a formula, but the same quote prefix is applied anyway so a results
// file reads back identically whichever format it was written in, and a sheet saved from it as CSV
// stays safe. Rates and amounts are real numeric cells (t:'n') when the decimal survives a double
// exactly (see numbers.ts); otherwise they are text. The amounts (the batch's sourceAmount, fee,
// totalDeductible, destinationAmount, refunded) carry a money format (#,##0.00), the rates 0.0000.
import { Worker } from 'node:worker_threads';
import * as XLSX from 'xlsx';
import { matchHeader } from '../input/columns.ts';
import {
  MONEY_RESULT_COLUMNS,
  NUMERIC_RESULT_COLUMNS,
  OPTIONAL_RESULT_COLUMNS,
  RESULT_COLUMNS,
  splitColumns,
  type ResultColumn,
} from './columns.ts';
import { neutralise } from './neutralise.ts';
import { isPlainDecimal, moneyCell, numericCell } from './numbers.ts';
import { writeFileAtomic } from '../files/atomic.ts';
import { serialised } from '../files/queue.ts';
import { ResultsError } from './errors.ts';
import type { ResultRow, ResultsSource, ResultsTable, ResultValues } from './types.ts';

const BOM = '\uFEFF';
const NUMERIC = new Set<string>(NUMERIC_RESULT_COLUMNS);
const MONEY = new Set<string>(MONEY_RESULT_COLUMNS);
/** Excel's limit on the text of one cell. */
export const XLSX_MAX_TEXT = 32767;

/**
 * The header row written for a table: the batch's own columns, then RESULT_COLUMNS, then those
 * OPTIONAL_RESULT_COLUMNS that some row holds (`rows` absent: none of them).
 */
export function resultsHeader(
  inputColumns: readonly string[],
  rows?: readonly ResultRow[],
): { input: string[]; header: string[]; result: ResultColumn[] } {
  return headerWith(inputColumns, rows ? optionalHeld(rows) : []);
}

const holds = (v: ResultValues, c: ResultColumn): boolean => (v[c] ?? '') !== '';
/** The OPTIONAL_RESULT_COLUMNS that some row holds. */
const optionalHeld = (rows: readonly ResultRow[]): ResultColumn[] =>
  OPTIONAL_RESULT_COLUMNS.filter((c) => rows.some((r) => holds(r.result, c)));
/** Each row's values by its position, whichever kind of table. */
const valuesOf = (table: ResultsTable | ResultsSource): ((index: number) => ResultValues) =>
  'resultAt' in table ? table.resultAt : (i) => table.rows[i]!.result;

function headerWith(
  inputColumns: readonly string[],
  optional: readonly ResultColumn[],
): { input: string[]; header: string[]; result: ResultColumn[] } {
  const input = splitColumns(inputColumns).input;
  const result: ResultColumn[] = [...RESULT_COLUMNS, ...optional];
  return { input, header: [...input, ...result], result };
}

/** Positions in row-number order (undefined: the rows are in order already, as a batch's are). */
function rowOrder(rows: readonly { rowNumber: number }[]): number[] | undefined {
  for (let i = 1; i < rows.length; i++) {
    if (rows[i - 1]!.rowNumber > rows[i]!.rowNumber) return rows.map((_, k) => k).sort((a, b) => rows[a]!.rowNumber - rows[b]!.rowNumber);
  }
  return undefined;
}

const byRowNumber = (rows: readonly ResultRow[]): ResultRow[] => {
  const order = rowOrder(rows);
  return order ? order.map((i) => rows[i]!) : (rows as ResultRow[]);
};

/** Every row's values made at once (XLSX, and a CSV some row of which holds an optional column). */
function materialise(source: ResultsSource): ResultsTable {
  const { resultAt, rows, ...rest } = source;
  return { ...rest, rows: rows.map((r, i) => ({ rowNumber: r.rowNumber, cells: r.cells, result: resultAt(i) })) };
}

/** Writes the results file atomically. Calls for the same path run in call order. Throws ResultsError WRITE_FAILED. */
export async function writeResults(path: string, table: ResultsTable | ResultsSource): Promise<void> {
  return serialised(path, async () => {
    let chunks: (string | Uint8Array)[];
    if (table.format === 'csv') chunks = [await csvText(table, letOthersIn)];
    else if (table.format === 'xlsx') chunks = [await xlsxFile(table)];
    else throw new ResultsError('WRITE_FAILED', path, `${path}: unknown results format "${String(table.format)}".`);
    try {
      await writeFileAtomic(path, chunks);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const why =
        code === 'EACCES' || code === 'EPERM'
          ? 'permission denied (the folder must be writable: the file is replaced through a temporary file beside it)'
          : code === 'ENOENT'
            ? 'the folder does not exist'
            : code === 'ENOSPC'
              ? 'the disk is full'
              : code === 'EISDIR'
                ? 'a folder has that name'
                : (code ?? (e as Error).message);
      throw new ResultsError(
        'WRITE_FAILED',
        path,
        `${path}: cannot write the results file: ${why}. The previous version, if any, is unchanged.`,
        { cause: e },
      );
    }
  });
}

// ---------------------------------------------------------------- CSV

function csvQuoter(delimiter: string): (s: string) => string {
  if (delimiter.length !== 1 || delimiter === '"' || delimiter === '\r' || delimiter === '\n') {
    throw new ResultsError('WRITE_FAILED', '', `unusable CSV delimiter ${JSON.stringify(delimiter)}.`);
  }
  const special = new RegExp(`["\\r\\n${delimiter.replace(/[\\^\]-]/g, '\\$&')}]|^ | $`);
  return (s) => {
    if (s === '' || !special.test(s)) return s;
    return `"${s.includes('"') ? s.replace(/"/g, '""') : s}"`;
  };
}

/** Rows made into text at a time, with the event loop let in between (csvText, xlsxOffThread). */
const ROWS_PER_PIECE = 1000;

/**
 * Between two pieces of a results file: other callbacks of the event loop run. A checkpoint of
 * 100,000 rows takes most of a second; in one block, no request would start meanwhile, and the
 * requests started just before it would reach the service together after it (one piece: ~5 ms).
 */
const letOthersIn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The whole CSV text, BOM included; `pause` is awaited between pieces of ROWS_PER_PIECE lines. */
export async function csvText(table: ResultsTable | ResultsSource, pause?: () => Promise<void>): Promise<string> {
  if ('resultAt' in table) {
    // The header comes first, so the values made row by row are written for RESULT_COLUMNS alone;
    // when a row turns out to hold an optional column (statusDetail after `status` or `listen`),
    // every row's values are made first and the text is built again with those columns.
    const text = await csvLines(table, table.resultAt, [], pause);
    if (text !== undefined) return text;
    table = materialise(table);
  }
  return (await csvLines(table, valuesOf(table), optionalHeld(table.rows), pause))!;
}

/**
 * The CSV text of `table` with the result columns RESULT_COLUMNS + `optional`, each row's values
 * from `valuesAt(i)`. Undefined when `optional` is empty and a row holds an optional column.
 */
async function csvLines(
  table: ResultsTable | ResultsSource,
  valuesAt: (index: number) => ResultValues,
  optional: readonly ResultColumn[],
  pause: (() => Promise<void>) | undefined,
): Promise<string | undefined> {
  const delimiter = table.delimiter ?? ',';
  const quote = csvQuoter(delimiter);
  const { input, header, result } = headerWith(table.inputColumns, optional);
  const strict = optional.length === 0;
  // Built this way because a resume rewrites 100,000 rows within a 2 s budget (measured against
  // one join of all the lines with BOM and last CRLF added around it):
  // - lines are joined 1,000 at a time: 100,000 line strings all kept to the end outlive the young
  //   generation and the GC copies them; the lines of one piece die young (-25 ms of ~380);
  // - the BOM starts the first line and the last CRLF comes from joining a final '', so the text
  //   is one flat string: BOM + text + CRLF is a rope that writing copies once more to flatten
  //   before encoding (-40 ms in csvText + Buffer.from).
  // Not done, measured no faster: skipping empty cells before neutralise/quote, a per-cell char
  // scan instead of the regex, one check of the whole joined line; a line built by += is 6 times
  // slower (the final join walks a rope per line).
  const lines: string[] = [BOM + header.map((h) => quote(neutralise(h))).join(delimiter)];
  const pieces: string[] = [];
  const { rows } = table;
  const order = rowOrder(rows);
  const fields = new Array<string>(header.length);
  for (let k = 0; k < rows.length; k++) {
    const at = order ? order[k]! : k;
    const row = rows[at]!;
    const values = valuesAt(at);
    if (strict) for (const c of OPTIONAL_RESULT_COLUMNS) if (holds(values, c)) return undefined;
    let i = 0;
    for (const c of input) fields[i++] = quote(neutralise(row.cells[c] ?? ''));
    for (const c of result) {
      const v = values[c] ?? '';
      fields[i++] = NUMERIC.has(c) && isPlainDecimal(v) ? v : quote(neutralise(v));
    }
    lines.push(fields.join(delimiter));
    if (lines.length === ROWS_PER_PIECE) {
      pieces.push(lines.join('\r\n'));
      lines.length = 0;
      if (pause) await pause();
    }
  }
  lines.push('');
  pieces.push(lines.join('\r\n'));
  return pieces.join('\r\n');
}

// ---------------------------------------------------------------- XLSX

/**
 * SheetJS escapes XML and control characters but not two things OOXML needs for an exact round
 * trip: a literal "_x0041_" in the text (which readers decode as "A": its underscore is written
 * _x005F_) and CR (a raw CR is turned into LF by every XML parser: written _x000D_, as Excel does).
 */
export function escapeOoxmlText(s: string): string {
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
  if (NUMERIC.has(c)) {
    const n = MONEY.has(c) ? moneyCell(text) : numericCell(text);
    if (n) return { t: 'n', v: n.v, z: n.z };
  }
  return textCell(text);
}

/** A cell of the batch's amount column: a number as the result amounts are, else text as the batch had it. */
function amountCell(text: string): XLSX.CellObject | undefined {
  const n = moneyCell(text);
  return n ? { t: 'n', v: n.v, z: n.z } : textCell(text);
}

/** Is this batch header its amount column (sourceAmount, or an alias such as "Amount")? */
const isAmountHeader = (header: string): boolean => matchHeader(header)?.field === 'sourceAmount';

export const RESULTS_SHEET = 'Results';

/**
 * From this many rows, an XLSX results file is built in a worker thread. SheetJS builds a
 * workbook in one block: 0.5 s for 10,000 rows, 6 to 14 s for 100,000, during which a run on this
 * thread would start no request and read no answer. A worker costs about 0.2 s to start (tsx and
 * SheetJS load there), more than a small table takes here.
 */
export const XLSX_THREAD_ROWS = 5000;

async function xlsxFile(table: ResultsTable | ResultsSource): Promise<Uint8Array> {
  const here = () => xlsxBytes('resultAt' in table ? materialise(table) : table);
  if (table.rows.length < XLSX_THREAD_ROWS) return here();
  try {
    return await xlsxOffThread(table);
  } catch {
    // a worker that cannot start or dies: the same bytes made here, the old way
    return here();
  }
}

// Bundled, the worker is dist/xlsx-thread.js beside the chunk holding this code. Run from the
// TypeScript sources (vitest), a worker thread does not inherit the loader of its parent, so a
// small entry registers tsx first.
const WORKER_ENTRY = import.meta.url.endsWith('.ts') ? './xlsx-thread-entry.js' : './xlsx-thread.js';

/**
 * xlsxBytes in a worker thread. The table goes there as one JSON text, built here 1,000 rows at a
 * time with the event loop let in between (each row's values made as it is reached); the bytes
 * come back transferred.
 */
export async function xlsxOffThread(table: ResultsTable | ResultsSource): Promise<Uint8Array> {
  const valuesAt = valuesOf(table);
  const pieces: string[] = [];
  let lines: string[] = [];
  for (let i = 0; i < table.rows.length; i++) {
    const r = table.rows[i]!;
    lines.push(JSON.stringify({ rowNumber: r.rowNumber, cells: r.cells, result: valuesAt(i) }));
    if (lines.length === ROWS_PER_PIECE) {
      pieces.push(lines.join(','));
      lines = [];
      await letOthersIn();
    }
  }
  if (lines.length) pieces.push(lines.join(','));
  const json = `{"format":"xlsx","inputColumns":${JSON.stringify(table.inputColumns)},"rows":[${pieces.join(',')}]}`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(WORKER_ENTRY, import.meta.url));
    worker.once('message', (bytes: Uint8Array) => {
      resolve(bytes);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the XLSX worker stopped (exit code ${code}) before answering`)));
    worker.postMessage(json);
  });
}

export function xlsxBytes(table: ResultsTable): Uint8Array {
  const { input, header, result } = resultsHeader(table.inputColumns, table.rows);
  const amount = input.map(isAmountHeader);
  const rows = byRowNumber(table.rows);
  const data = new Array<(XLSX.CellObject | undefined)[]>(rows.length + 1);
  data[0] = header.map((h) => textCell(h));
  const widths = header.map((h) => Math.min(60, Math.max(8, h.length + 2)));
  rows.forEach((row, r) => {
    const line = new Array<XLSX.CellObject | undefined>(header.length);
    let i = 0;
    for (const [k, c] of input.entries()) line[i++] = amount[k] ? amountCell(row.cells[c] ?? '') : textCell(row.cells[c] ?? '');
    for (const c of result) line[i++] = resultCell(c, row.result[c]);
    if (r < 200) {
      line.forEach((cell, k) => {
        const len = cell ? String(cell.v).length + 2 : 0;
        if (len > widths[k]!) widths[k] = Math.min(60, len);
      });
    }
    data[r + 1] = line;
  });
  const ws = {
    '!data': data as XLSX.CellObject[][],
    '!ref': XLSX.utils.encode_range({ s: { r: 0, c: 0 }, e: { r: rows.length, c: header.length - 1 } }),
    '!cols': widths.map((wch) => ({ wch })),
  } as XLSX.WorkSheet;
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, ws, RESULTS_SHEET);
  return XLSX.write(wb, { type: 'buffer', bookType: 'xlsx', bookSST: true, compression: true }) as Uint8Array;
}

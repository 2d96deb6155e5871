// Reading a batch file: CSV (streamed) or Excel, to rows keyed by the file's own headers, with
// the mapping of those headers to the payout columns. No validation happens here.
import { open, readFile, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { InputError } from './errors.ts';
import { sniffKind, parseEncodingName, type Delimiter, type TextEncoding } from './detect.ts';
import { openCsv } from './csv.ts';
import { checkWorkbookFileSize } from './zip-guard.ts';
import { shapeRows, type InputWarning, type RawRow, type ShapedRows } from './rows.ts';
import type { CanonicalField } from './columns.ts';

export { InputError } from './errors.ts';
export { detectEncoding, detectDelimiter, parseEncodingName, sniffKind, type TextEncoding } from './detect.ts';
export type { RawRow } from './rows.ts';

export type BatchFormat = 'csv' | 'xlsx' | 'xls';

export interface ReadOptions {
  /** CSV only: utf-8, utf-16le, utf-16be or windows-1252 (aliases such as cp1252 and latin1 accepted). */
  encoding?: string;
  /** Excel only: the sheet to read (default: the first). */
  sheet?: string;
}

export interface BatchSource {
  /** The path as given. */
  file: string;
  format: BatchFormat;
  /** CSV: the encoding read and how it was chosen. */
  encoding?: TextEncoding;
  encodingDetectedBy?: string;
  delimiter?: Delimiter;
  /** Excel: the sheet read, and all sheets of the workbook. */
  sheet?: string;
  sheets?: string[];
  headerRow: number;
  /** The file's headers in order (made unique and non-empty). */
  columns: string[];
  /** header → canonical field, for the headers that map to one. */
  mapping: Record<string, CanonicalField>;
  /** canonical field → header. */
  fields: Partial<Record<CanonicalField, string>>;
  /** Notes about the file, appended while rows are read: complete once `rows` is exhausted. */
  warnings: InputWarning[];
  /** The payout rows, in file order. Single pass. */
  rows: AsyncIterable<RawRow>;
  /** Releases the file when `rows` is not read to the end. */
  /** A function property, not a method: callers take it out of the source and call it later. */
  close: () => Promise<void>;
}

const HEAD_BYTES = 1024 * 1024;

/** Opens a batch file. Throws InputError for a file that cannot be used (exit code 2). */
export async function readBatch(path: string, options: ReadOptions = {}): Promise<BatchSource> {
  const file = path;
  let size: number;
  try {
    const st = await stat(path);
    if (st.isDirectory()) throw new InputError('UNREADABLE', file, `${file}: is a folder, not a batch file.`);
    size = st.size;
  } catch (e) {
    if (e instanceof InputError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new InputError('FILE_NOT_FOUND', file, `${file}: no such file.`);
    throw new InputError('UNREADABLE', file, `${file}: cannot read the file (${code ?? (e as Error).message}).`);
  }
  if (size === 0) throw new InputError('EMPTY_FILE', file, `${file}: the file is empty (0 bytes).`);

  let head: Buffer;
  try {
    const fh = await open(path, 'r');
    try {
      const buf = Buffer.alloc(Math.min(size, HEAD_BYTES));
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      head = buf.subarray(0, bytesRead);
    } finally {
      await fh.close();
    }
  } catch (e) {
    throw new InputError(
      'UNREADABLE',
      file,
      `${file}: cannot read the file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}).`,
    );
  }

  const kind = sniffKind(head);
  const ext = extname(path).toLowerCase();
  if (kind === 'binary') {
    throw new InputError(
      'UNSUPPORTED_FORMAT',
      file,
      `${file}: not a CSV or Excel file (it holds binary data). Save the batch as CSV (UTF-8) or .xlsx.`,
    );
  }
  if ((ext === '.xlsx' || ext === '.xls') && kind === 'csv') {
    throw new InputError(
      'UNSUPPORTED_FORMAT',
      file,
      `${file}: named ${ext} but not an Excel workbook; is it a CSV renamed? Rename it .csv or save it again from Excel.`,
    );
  }

  if (kind === 'xlsx' || kind === 'xls') {
    if (options.encoding)
      throw new InputError('ENCODING', file, `${file}: --encoding applies to CSV files only; this is an Excel workbook.`);
    checkWorkbookFileSize(file, size); // before reading it whole
    let buf: Buffer;
    try {
      buf = await readFile(path);
    } catch (e) {
      throw new InputError('UNREADABLE', file, `${file}: cannot read the file (${(e as Error).message}).`);
    }
    const { openExcel } = await import('./excel.ts');
    const x = await openExcel(buf, file, options.sheet);
    return { file, format: kind, sheet: x.sheet, sheets: x.sheets, ...sourceOf(await shapeRows(file, x.records)), close: async () => {} };
  }

  if (options.sheet !== undefined)
    throw new InputError('UNSUPPORTED_FORMAT', file, `${file}: --sheet applies to Excel workbooks only; this is a CSV file.`);
  let encoding: TextEncoding | undefined;
  if (options.encoding) {
    encoding = parseEncodingName(options.encoding);
    if (!encoding)
      throw new InputError('ENCODING', file, `unknown --encoding "${options.encoding}": use utf-8, utf-16le, utf-16be or windows-1252.`);
  }
  const csv = openCsv(path, file, head, encoding);
  const { encoding: read, encodingDetectedBy, delimiter } = csv;
  const shaped = sourceOf(await shapeRows(file, csv.records));
  return { file, format: 'csv', encoding: read, encodingDetectedBy, delimiter, ...shaped, close: async () => csv.close() };
}

/** The shaped rows as a source's fields, in the order a source lists them. */
function sourceOf({ headerRow, columns, mapping, fields, warnings, rows }: ShapedRows) {
  return { headerRow, columns, mapping, fields, warnings, rows };
}

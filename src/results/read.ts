// Reading a results file back, neutralising undone: an exact round trip of the write (unlike
// readBatch, cells are not trimmed and no "totals" row is dropped; only empty rows are skipped).
// Encoding, delimiter and kind detection come from src/input, so both readers agree on a file.
import { open, type FileHandle } from 'node:fs/promises';
import { Readable, pipeline } from 'node:stream';
import { parse as parseCsvStream, CsvError } from 'csv-parse';
import iconv from 'iconv-lite';
import { DELIMITERS, GUESSED_1252, sniffKind, type Delimiter, type TextEncoding } from '../input/detect.ts';
import { mapColumns, matchHeader, uniqueColumns, type ColumnMapping } from '../input/batch-columns.ts';
import { InputError, type Refuse } from '../input/input-errors.ts';
import { csvLayout, csvRefusals, CSV_OPTIONS } from '../input/csv-reader.ts';
import { encodingOption, fileHead, fileSize, type ReadOptions } from '../input/reader.ts';
import { OPTIONAL_RESULT_COLUMNS, RESULT_COLUMNS, REQUIRED_RESULT_COLUMNS, splitColumns } from '../input/result-columns.ts';
import type { ResultColumn } from '../input/result-columns.ts';
import { unneutralise } from '../input/neutralise.ts';
import { ResultsError } from './results-errors.ts';
import type { ResultRow, ResultsFormat, ResultsTable, ResultValues } from './types.ts';
import { SpillList } from '../files/spill.ts';
import type { SourceRecord } from '../input/records.ts';

const isBlank = (values: readonly string[]) => values.every((v) => v === '');

/** A results file whose rows are read as they are iterated, once (a CSV parsed a record at a time): what a report of any size reads. */
interface ResultsStream extends Omit<ResultsTable, 'rows'> {
  rows: AsyncIterable<ResultRow>;
  /** The file is closed when its rows are read to the end or left part way; rows never read: by this (withResults). */
  close: () => Promise<void>;
}

/** `use` given the file's rows as they are read; the file closed after, whether `use` read them, some, or none. */
export async function withResults<T>(file: string, options: ReadOptions, use: (t: ResultsStream) => Promise<T>): Promise<T> {
  const table = await streamResults(file, options);
  try {
    return await use(table);
  } finally {
    await table.close();
  }
}

export const readResults = (file: string, options: ReadOptions = {}): Promise<ResultsTable> => readInto(file, options, [] as ResultRow[]);

/** A results file's rows kept in a file (spill.ts) as they are read, not in memory: read again a row at a time. */
export const spillResults = (file: string) => readInto(file, {}, new SpillList<ResultRow>((r) => r as ResultRow));

async function readInto<L extends { push(row: ResultRow): unknown }>(file: string, options: ReadOptions, kept: L) {
  const { rows, close: _, ...table } = await streamResults(file, options);
  for await (const r of rows) kept.push(r);
  return { ...table, rows: kept };
}

export async function streamResults(file: string, options: ReadOptions = {}): Promise<ResultsStream> {
  const refuse: Refuse = (code, message) => new ResultsError(code, file, message);
  await fileSize(file, 'a results file', refuse);
  const unreadable = (e: NodeJS.ErrnoException): never => {
    throw new ResultsError('UNREADABLE', file, `${file}: cannot read the file (${e.code ?? e.message}).`, { cause: e });
  };
  // (one open file for every pass over it: a results file replaced meanwhile is never read half old, half new)
  const fh = await open(file).catch(unreadable);
  try {
    const { buffer, bytesRead } = await fh.read(Buffer.alloc(1024 * 1024), 0, 1024 * 1024, 0);
    const start = buffer.subarray(0, bytesRead);
    const kind = sniffKind(start.subarray(0, 8192));
    if (kind === 'binary') throw new ResultsError('UNSUPPORTED_FORMAT', file, `${file}: not a CSV or Excel file (it holds binary data).`);
    const encoding = encodingOption(file, kind, options, refuse);
    if (kind === 'csv') {
      const { head, records, delimiter, encodingGuessed } = await readCsv(fh, start, file, encoding);
      return { ...resultsTableOf(file, 'csv', head, records), delimiter, encodingGuessed, close: () => fh.close() };
    }
    // (SheetJS reads a workbook whole)
    const buf = await fh.readFile().catch(unreadable);
    await fh.close();
    // (SheetJS, 650 KB, loaded only when a workbook is read)
    const { records, ...sheets } = (await import('./xlsx-reader.ts')).readResultsSheet(buf, file, options.sheet, refuse);
    return { ...resultsTableOf(file, 'xlsx', records, records), ...sheets, close: async () => {} };
  } catch (e) {
    await fh.close();
    throw e;
  }
}

export const readHead = async (path: string): Promise<string> => (await fileHead(path, 4096)).toString('utf8');

/** What status, reconcile, attach, report and a pain.002 read of a row's batch cells: each must be one column. */
const READ_FIELDS = ['reference', 'sourceAmount', 'sourceCurrency'] as const;

/**
 * The batch's columns of a results file by field, as readBatch maps them, each field two columns name left out. `file`
 * given: refused (naming it and the columns) unless reference, sourceAmount and sourceCurrency are one column each.
 */
export function batchColumns(t: Pick<ResultsTable, 'inputColumns'>, file?: string): ColumnMapping['fields'] {
  try {
    return mapColumns(t.inputColumns, file ?? 'results', 1, file === undefined ? [] : READ_FIELDS).fields;
  } catch (e) {
    if (!(e instanceof InputError) || (e.code !== 'MISSING_COLUMNS' && e.code !== 'DUPLICATE_COLUMNS')) throw e;
    throw new ResultsError(e.code, e.file, e.message);
  }
}

/**
 * A results file's rows naming one payout: the first holds it, a later one (a row copied in the file) is counted once, as
 * `status`, `reconcile` and the report count it. Called a row at a time: undefined, or why that row counts nothing.
 */
export function copiedPayouts(): (payoutId: string | undefined, rowNumber: number) => string | undefined {
  const first = new Map<string, number>();
  return (id, row) => {
    const was = id ? first.get(id) : undefined;
    if (id && was === undefined) first.set(id, row);
    return was === undefined ? undefined : `payout ${id} is row ${was}'s too: counted once`;
  };
}

// ---------------------------------------------------------------- records to table

/** Records read before the header must be found in them (blank lines above it). */
const HEAD = 20;
/** Bytes of CSV read at a time. */
const PIECE = 64 * 1024;

/** The table of a results file: its header found in `head`, its rows made from `records` (every record, header included) as they are read. */
function resultsTableOf(
  file: string,
  format: ResultsFormat,
  head: readonly SourceRecord[],
  records: Iterable<SourceRecord> | AsyncIterable<SourceRecord>,
): Omit<ResultsStream, 'close'> {
  const headerRec = head.find((r) => !isBlank(r.values));
  if (!headerRec) throw new ResultsError('EMPTY_FILE', file, `${file}: the file has no header row.`);
  const headers = uniqueColumns(headerRec.values.map(unneutralise));
  const split = splitColumns(headers);
  if (!split.isResults) throw notResults(file, headerRec.rowNumber, split.missing);

  const index = new Map(headers.map((h, i) => [h, i]));
  const inputIdx = split.input.map((h) => index.get(h)!);
  // (a batch cell a spreadsheet stored as a number, for retry's Excel traps; not the amount, which write.ts makes one)
  const numeric = split.input.flatMap((h, j) => (matchHeader(h)?.field === 'sourceAmount' ? [] : [[h, inputIdx[j]!] as const]));
  const resultIdx: [ResultColumn, number][] = [...RESULT_COLUMNS, ...OPTIONAL_RESULT_COLUMNS]
    .filter((c) => split.result[c] !== undefined)
    .map((c) => [c, index.get(split.result[c]!)!]);

  async function* rows(): AsyncGenerator<ResultRow> {
    let any = false;
    for await (const { rowNumber, values, numbers, dates } of records) {
      if (rowNumber <= headerRec!.rowNumber || isBlank(values)) continue;
      any = true;
      // fromEntries defines own properties, so a header such as "__proto__" is a cell like any other
      const cells: Record<string, string> = Object.fromEntries(split.input.map((h, j) => [h, unneutralise(values[inputIdx[j]!] ?? '')]));
      const result: ResultValues = {};
      for (const [c, i] of resultIdx) {
        const v = values[i] ?? '';
        if (v !== '') result[c] = unneutralise(v);
      }
      const held = numeric.flatMap(([h, i]) => (numbers?.[i] === undefined ? [] : [[h, numbers[i]] as const]));
      const shown = split.input.flatMap((h, j) => (dates?.[inputIdx[j]!] === undefined ? [] : [[h, dates[inputIdx[j]!]!] as const]));
      const traps = {
        ...(held.length && { numbers: Object.fromEntries(held) }),
        ...(shown.length && { dates: Object.fromEntries(shown) }),
      };
      yield { rowNumber, cells, result, ...traps };
    }
    // (a run writes a row for every row of its batch, and a batch has one: a file cut short after its header)
    if (!any) throw new ResultsError('EMPTY_FILE', file, `${file}: the header row and no row: not the results of a run (cut short?).`);
  }
  return { format, inputColumns: split.input, rows: rows() };
}

function notResults(file: string, headerRow: number, missing: readonly ResultColumn[]): ResultsError {
  const required = REQUIRED_RESULT_COLUMNS.filter((c) => missing.includes(c));
  const what =
    required.length === REQUIRED_RESULT_COLUMNS.length
      ? `its header row (row ${headerRow}) has none of the result columns ${required.join(' and ')}${
          missing.length === RESULT_COLUMNS.length ? ' (nor any other result column)' : ''
        }; it looks like a batch file, not the results of a run`
      : `its header row (row ${headerRow}) lacks the result column ${required.join(', ')}`;
  return new ResultsError(
    'NOT_A_RESULTS_FILE',
    file,
    `${file}: not a results file: ${what}. Pass the results file a run wrote (e.g. payroll.results.csv).`,
  );
}

// ---------------------------------------------------------------- CSV

async function readCsv(fh: FileHandle, start: Buffer, file: string, encoding?: TextEncoding) {
  const layout = csvLayout(start, encoding);
  /** `rowNumber`: records read so far (a record too long or too wide is named by its row, as the batch reader names it). */
  const malformed = (e: unknown, rowNumber = 0) => {
    if (!(e instanceof CsvError))
      return new ResultsError('UNREADABLE', file, `${file}: cannot read the file: ${(e as Error).message}`, { cause: e });
    return new ResultsError('MALFORMED_CSV', file, csvRefusals(file, delimiter).of(e, rowNumber).message, { cause: e });
  };
  /** The file's records, parsed as they are read (stopping early closes the pass, not the file). */
  const parsed = (delimiter: string): AsyncIterable<string[]> => {
    // (bom false: the BOM was skipped by detectEncoding's byte count, a second U+FEFF belongs to the first header; the "sep=;" line is no record)
    const parser = parseCsvStream({ ...CSV_OPTIONS, bom: false, delimiter, from_line: layout.sepLineFirst ? 2 : 1 });
    pipeline(Readable.from(csvText(fh, layout)), parser, () => {});
    return parser;
  };
  /** The first `to` records (all of them: Infinity). */
  const firstRecords = async (delimiter: string, to: number) => {
    const out: string[][] = [];
    for await (const values of parsed(delimiter)) if (out.push(values) >= to) break;
    return out;
  };
  const first = layout.delimiter;
  const candidates = layout.sepLineFirst ? [first] : [first, ...DELIMITERS.filter((d) => d !== first)];
  let delimiter: Delimiter = first;
  let head: string[][] | undefined; // (the first records, as parsed with the delimiter found)
  for (const d of candidates) {
    const tried = await firstRecords(d, HEAD).catch(() => undefined);
    if (!tried) continue;
    const header = tried.find((r) => !isBlank(r));
    if (header && splitColumns(uniqueColumns(header.map(unneutralise))).isResults) {
      delimiter = d;
      head = tried;
      break;
    }
  }
  try {
    head ??= await firstRecords(delimiter, HEAD);
    if (head.length === HEAD && head.every(isBlank)) head = await firstRecords(delimiter, Infinity);
  } catch (e) {
    throw malformed(e);
  }
  async function* records(): AsyncGenerator<SourceRecord> {
    let rowNumber = 0;
    try {
      for await (const values of parsed(delimiter)) yield { rowNumber: ++rowNumber, values };
    } catch (e) {
      throw malformed(e, rowNumber);
    } finally {
      await fh.close();
    }
  }
  const encodingGuessed = layout.detected.detectedBy === GUESSED_1252;
  return { head: head.map((values, i) => ({ rowNumber: i + 1, values })), records: records(), delimiter, encodingGuessed };
}

/** The CSV's text a piece at a time, decoded, without its BOM. */
async function* csvText(fh: FileHandle, { detected }: ReturnType<typeof csvLayout>): AsyncGenerator<string> {
  const decoder = iconv.getDecoder(detected.encoding, { stripBOM: false });
  // (read at positions, not through a stream of the file: a stream closes the file when it is left)
  for (let at = detected.bomBytes; ;) {
    const { buffer, bytesRead } = await fh.read(Buffer.alloc(PIECE), 0, PIECE, at);
    if (!bytesRead) break;
    at += bytesRead;
    const text = decoder.write(buffer.subarray(0, bytesRead));
    if (text) yield text;
  }
  const rest = decoder.end();
  if (rest) yield rest;
}

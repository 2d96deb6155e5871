// Records (cell texts with their row numbers) to batch rows: the header, the column mapping, blank
// rows and a trailing totals row, shared by the CSV and Excel readers.
import { mapColumns, matchHeader, type CanonicalField, type ColumnMapping } from './batch-columns.ts';
import { InputError } from './input-errors.ts';
import { unneutralise } from './neutralise.ts';
import { splitColumns } from './result-columns.ts';

export interface SourceRecord {
  rowNumber: number;
  values: string[];
  /** Excel only: the raw number of a numeric cell, by column index (undefined elsewhere). */
  numbers?: (number | undefined)[];
  /** Excel only: what a date-formatted cell shows ("5/1/26"), by column index (its value is the ISO date). */
  dates?: (string | undefined)[];
  /** Excel only: the sheet hides the row (Hide, or a filter). */
  hidden?: boolean;
  /** Excel only: the column indexes of its non-empty cells in columns the sheet hides. */
  hiddenCells?: number[];
}

export interface RawRow {
  /** As the spreadsheet shows it (src/input/README.md "Row numbers"). */
  rowNumber: number;
  /** Every cell by the file's own (unique) header, trimmed of surrounding whitespace. */
  cells: Record<string, string>;
  /** Excel only: cells that were numbers, by header, with their raw value (for the Excel traps). */
  numbers?: Record<string, number>;
  /** Excel only: cells formatted as dates, by header, with the text Excel shows ("5/1/26"). */
  dates?: Record<string, string>;
  /** How many non-empty cells lay beyond the last header (a delimiter inside an unquoted value). */
  extraCells?: number;
  /** Excel only: the sheet hides the row, so whoever checked the sheet did not see it. */
  hidden?: boolean;
  /** Excel only: the headers of its non-empty cells in columns the sheet hides (whoever checked the sheet did not see them). */
  hiddenColumns?: string[];
  /** pain.001 only: the row's element (an XPath), which problems name instead of row and column. */
  xml?: {
    path: string;
    elements: Partial<Record<CanonicalField | 'ChrgBr' | 'Unsupported' | 'AmtCcy', string>>;
    /** What the reader found wrong with its elements (an ambiguous method): an error on `field`. */
    issues: { field: CanonicalField; message: string; expected: string }[];
  };
}

export interface InputWarning {
  code: 'BLANK_ROWS' | 'TOTALS_ROW' | 'COLUMN_IGNORED' | 'COLUMN_UNKNOWN';
  /** First row concerned (none for header notes); rowEnd: the last of a run of blank rows. */
  row?: number;
  rowEnd?: number;
  message: string;
}

const TOTAL_WORD = /^(grand\s*|sub\s*)?totals?\s*:?$|^sum\s*:?$/i;

const isBlank = (values: string[]): boolean => values.every((v) => v.trim() === '');

const isTotalLabel = (v: string): boolean => TOTAL_WORD.test(v.trim());

const blankRows = (from: number, to: number, where = ''): InputWarning => ({
  code: 'BLANK_ROWS',
  row: from,
  rowEnd: to,
  message: `${from === to ? `row ${from} is` : `rows ${from}-${to} are`} blank${where} and skipped`,
});

export type ShapedRows = Awaited<ReturnType<typeof shapeRows>>;

/** The header from the first non-blank record, the rest as rows: blank rows and a last totals row skipped with a warning. */
export async function shapeRows(file: string, records: AsyncIterable<SourceRecord>) {
  const it = records[Symbol.asyncIterator]();
  // up to the header, the first non-blank record (a reader that fails or ends has released its file)
  const leadingBlank: number[] = [];
  let first = await it.next();
  for (; !first.done && isBlank(first.value.values); first = await it.next()) leadingBlank.push(first.value.rowNumber);
  if (first.done) throw new InputError('EMPTY_FILE', file, `${file}: the file is empty: no header row and no payout rows.`);
  // A results file run as a batch: its cells as the batch gave them, before the writer neutralised them (as retry reads them).
  const ofResults = splitColumns(first.value.values.map(unneutralise)).isResults;
  const cellsOf = (r: SourceRecord): SourceRecord => (ofResults ? { ...r, values: r.values.map(unneutralise) } : r);
  const header = cellsOf(first.value);
  let mapped: ColumnMapping;
  try {
    mapped = mapColumns(header.values, file, header.rowNumber);
  } catch (e) {
    await it.return?.(); // the reader releases the file when its records are abandoned
    throw e;
  }
  const { columns, mapping, fields, notes } = mapped;
  // appended while rows are read: complete once `rows` is exhausted
  const warnings: InputWarning[] = notes.map((message) => ({ code: 'COLUMN_IGNORED', message }));
  // a column no payout field is named by ("Payment Date") is said, never dropped without a word
  const unknown = header.values.flatMap((h, i) => (h.trim() && !matchHeader(h) ? [`"${columns[i]}"`] : []));
  if (unknown.length)
    warnings.push({
      code: 'COLUMN_UNKNOWN',
      message: `${unknown.length === 1 ? 'column' : 'columns'} ${unknown.join(', ')} ${unknown.length === 1 ? 'names' : 'name'} no payout field: not sent, kept as ${unknown.length === 1 ? 'it is' : 'they are'} in the results file`,
    });
  if (leadingBlank.length) warnings.push(blankRows(leadingBlank[0]!, leadingBlank.at(-1)!, ' above the header'));
  const looksLikeTotals = totalsTest(mapped);

  // The rest of the records as rows; the file is released when they end, fail or are abandoned.
  async function* rows(): AsyncGenerator<RawRow> {
    let blank: [number, number] | undefined;
    let held: SourceRecord | undefined; // a totals row: skipped if it is the last
    let read = 0; // non-blank records
    try {
      for (let next = await it.next(); !next.done; next = await it.next()) {
        const r = cellsOf(next.value);
        if (isBlank(r.values)) {
          blank = [blank?.[0] ?? r.rowNumber, r.rowNumber];
          continue;
        }
        read++;
        if (held) yield rowOf(held, columns); // not the last row after all: an ordinary row, validated like any other
        if (blank) warnings.push(blankRows(...blank));
        blank = undefined;
        held = looksLikeTotals(r) ? r : undefined;
        if (!held) yield rowOf(r, columns);
      }
      if (held) {
        const why = held.values.some(isTotalLabel) ? 'labelled as a total' : 'an amount with no reference, method or name';
        warnings.push({
          code: 'TOTALS_ROW',
          row: held.rowNumber,
          message: `row ${held.rowNumber} looks like a totals row (last row, ${why}) and was skipped`,
        });
      }
      if (blank) warnings.push(blankRows(...blank));
      if (read === (held ? 1 : 0))
        throw new InputError('EMPTY_FILE', file, `${file}: the file has a header (row ${header.rowNumber}) but no payout rows.`);
    } finally {
      await it.return?.();
    }
  }
  return { headerRow: header.rowNumber, columns, mapping, fields, warnings, rows: rows() };
}

/** A record as a row: its cells by header (trimmed), with the cells beyond the last column counted. */
function rowOf(r: SourceRecord, columns: string[]): RawRow {
  const row: RawRow = { rowNumber: r.rowNumber, cells: {} };
  const extra = r.values.slice(columns.length).filter((v) => v.trim() !== '').length;
  if (extra) row.extraCells = extra;
  if (r.hidden) row.hidden = true;
  const hiddenColumns = r.hiddenCells?.flatMap((i) => columns[i] ?? []);
  if (hiddenColumns?.length) row.hiddenColumns = hiddenColumns;
  columns.forEach((c, i) => {
    row.cells[c] = (r.values[i] ?? '').trim(); // (a "__proto__" header is refused: batch-columns.ts)
    if (r.numbers?.[i] !== undefined) (row.numbers ??= {})[c] = r.numbers[i];
    if (r.dates?.[i] !== undefined) (row.dates ??= {})[c] = r.dates[i];
  });
  return row;
}

/** A totals row: a total label without all of reference, method and name (a payee may be "Total"), or an amount with none. */
function totalsTest({ columns, fields }: ColumnMapping): (r: SourceRecord) => boolean {
  const at = (f: CanonicalField) => columns.indexOf(fields[f] ?? '');
  const [reference, method, name, amount] = [at('reference'), at('method'), at('accountName'), at('sourceAmount')];
  const empty = (values: string[], i: number) => i < 0 || (values[i] ?? '').trim() === '';
  const given = (r: SourceRecord) => [reference, method, name].filter((i) => !empty(r.values, i)).length;
  return (r) => (r.values.some(isTotalLabel) && given(r) < 3) || (given(r) === 0 && !empty(r.values, amount));
}

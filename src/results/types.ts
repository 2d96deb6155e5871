import type { WorkSheet } from 'xlsx';
import type { RowList } from '../files/spill.ts';
import type { ResultColumn } from '../input/result-columns.ts';
import type { BatchFormat } from '../input/reader.ts';
import type { RawRow } from '../input/records.ts';
import type { SwapLine } from './swap-summary.ts';

/** The formats a results file is written in (paths.ts RESULTS_WRITERS has a writer for each). */
export type ResultsFormat = 'csv' | 'xlsx';

/** Numbers as exact decimal strings; documentUrls '; '-joined. An empty cell reads back as absent. */
export type ResultValues = Partial<Record<ResultColumn, string>>;

/**
 * A batch row (its number orders the rows written; a missing header is written empty) and its results. Reading
 * XLSX, `numbers` and `dates` are the batch's cells (not its amount) for retry's Excel traps, as readBatch gives them.
 */
export type ResultRow = Pick<RawRow, 'rowNumber' | 'cells' | 'numbers' | 'dates'> & { result: ResultValues };

export interface ResultsTable {
  format: ResultsFormat;
  /** The batch's headers in order (result columns among them are dropped, not repeated). */
  inputColumns: string[];
  rows: ResultRow[];
  /** CSV only: the input's delimiter (default ","); whether its encoding was guessed (GUESSED_1252). */
  delimiter?: string;
  encodingGuessed?: boolean;
  /** XLSX only: the second sheet "Swaps". */
  swaps?: SwapLine[];
  /** XLSX only: the workbook's other sheets (a person's notes), written back after ours as read. */
  otherSheets?: [name: string, sheet: WorkSheet][];
  /** XLSX only: the workbook's date system is 1904 (Excel for Mac), that of the other sheets' dates: written so again. */
  date1904?: true;
}

/** A table whose rows may be kept in a file (spill.ts) and read again a row at a time. */
export type ResultsList = Omit<ResultsTable, 'rows'> & { rows: RowList<ResultRow> };

/** A table whose result values the run makes when the file is written: `resultAt(i)` is those of `rows[i]`. */
export interface ResultsSource extends Omit<ResultsTable, 'rows'> {
  rows: RowList<Pick<ResultRow, 'rowNumber' | 'cells'>>;
  resultAt: (index: number) => ResultValues;
}

/** One results format, and the results files and batches it is chosen for (paths.ts). */
export interface ResultsWriter {
  format: ResultsFormat;
  /** The extensions of a results file of this format (--results); the first is the one written by default. */
  extensions: readonly string[];
  /** The batches whose results are written in this format: by the format read, or (unread) by extension. */
  forBatches: { formats: readonly BatchFormat[]; extensions: readonly string[] };
  /** The file, in chunks made one at a time (the CSV writer never holds it whole). */
  chunks(table: ResultsSource): Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>;
}

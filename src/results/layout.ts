// The layout of a results file, whatever its format (csv-writer.ts, xlsx-writer.ts): which columns, in which
// order, under which headers, and the rows in the batch's order.
import { OPTIONAL_RESULT_COLUMNS, RESULT_COLUMNS, resultHeaderOf, splitColumns, type ResultColumn } from './result-columns.ts';
import type { ResultRow } from './types.ts';

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
export const byRowNumber = (rows: readonly ResultRow[]): ResultRow[] => [...rows].sort((a, b) => a.rowNumber - b.rowNumber);

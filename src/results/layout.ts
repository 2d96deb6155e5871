// The layout of a results file, whatever its format: its columns, their headers, the rows' order.
import { OPTIONAL_RESULT_COLUMNS, RESULT_COLUMNS, resultHeaderOf, splitColumns, type ResultColumn } from '../input/result-columns.ts';
import type { ResultsSource, ResultsTable, ResultValues } from './types.ts';
import type { RowList } from '../files/spill.ts';

/**
 * The header row (`header`): the batch's own columns (`input`, result columns of a results file run
 * again taken out), then the result columns written (`result`: RESULT_COLUMNS, then the OPTIONAL_RESULT_COLUMNS some row holds).
 */
export function resultsHeader(inputColumns: readonly string[], results: Iterable<ResultValues> = []) {
  const input = splitColumns(inputColumns).input;
  const held = new Set<ResultColumn>();
  for (const v of results) for (const c of OPTIONAL_RESULT_COLUMNS) if ((v[c] ?? '') !== '') held.add(c);
  const result: ResultColumn[] = [...RESULT_COLUMNS, ...OPTIONAL_RESULT_COLUMNS.filter((c) => held.has(c))];
  return { input, result, header: [...input, ...result.map((c) => resultHeaderOf(c, input))] };
}

/** Each row's results, made one at a time (none is kept). */
export function* resultsOf(table: Pick<ResultsSource, 'rows' | 'resultAt'>): Generator<ResultValues> {
  for (let i = 0; i < table.rows.length; i++) yield table.resultAt(i);
}

/** The rows' indexes in row-number order (a stable sort); rows in that order already are not copied. */
export function* inRowOrder(rows: RowList<{ rowNumber: number }>): Generator<number> {
  // (not Float64Array.from(rows): it takes every row of the list into an array first)
  const numbers = new Float64Array(rows.length);
  rows.forEach((r, i) => (numbers[i] = r.rowNumber));
  let sorted = true;
  for (let i = 1; i < numbers.length && sorted; i++) sorted = numbers[i - 1]! <= numbers[i]!;
  if (sorted) for (let i = 0; i < numbers.length; i++) yield i;
  else yield* [...numbers.keys()].sort((a, b) => numbers[a]! - numbers[b]! || a - b);
}

/** A plain table as a source whose values are read row by row. */
export const sourceOf = (table: ResultsTable | ResultsSource): ResultsSource =>
  'resultAt' in table ? table : { ...table, resultAt: (i) => table.rows[i]!.result };

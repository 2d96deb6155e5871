// Results files: written after and during a run (the batch's columns, then the result columns),
// read back for retry and status. See src/results/README.md "Results file".
export {
  RESULT_COLUMNS,
  OPTIONAL_RESULT_COLUMNS,
  NUMERIC_RESULT_COLUMNS,
  REQUIRED_RESULT_COLUMNS,
  splitColumns,
  type ResultColumn,
  type ColumnSplit,
} from './columns.ts';
export type { ResultValues, ResultRow, ResultsTable, ResultsSource } from './types.ts';
export { resultsPathFor, type ResultsFormat, type ResultsPathOptions } from './paths.ts';
export { writeResults, resultsHeader, RESULTS_SHEET, type ResultsLayout } from './write.ts';
export { readResults, type ReadResultsOptions } from './read.ts';
export { neutralise, unneutralise, isFormulaLike } from './neutralise.ts';
export { ResultsError, isResultsError, RESULTS_ERROR_CODES, type ResultsErrorCode } from './errors.ts';

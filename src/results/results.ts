// Results files, written by a run and read back by retry and status: src/results/README.md "Results file".
export { RESULT_COLUMNS, OPTIONAL_RESULT_COLUMNS, NUMERIC_RESULT_COLUMNS, splitColumns } from '../input/result-columns.ts';
export type { ResultValues, ResultRow, ResultsList, ResultsTable, ResultsSource } from './types.ts';
export { resultsPathFor } from './paths.ts';
export { writeResults } from './write.ts';
export { readResults, spillResults, streamResults, withResults } from './read.ts';
export { neutralise, unneutralise } from '../input/neutralise.ts';
export { ResultsError } from './results-errors.ts';
export { SWAP_COLUMNS, type SwapLine } from './swap-summary.ts';

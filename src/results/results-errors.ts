// The one error type of the results boundary. Its message is one line for the user (file and
// what is wrong); the CLI prints it without a stack trace.
import type { Refuse } from '../input/input-errors.ts';

/** The refusals the results reader shares with the batch reader, and its own. */
export type ResultsErrorCode =
  | Parameters<Refuse>[0]
  | 'MISSING_COLUMNS'
  | 'DUPLICATE_COLUMNS'
  | 'NOT_A_RESULTS_FILE'
  | 'MALFORMED_CSV'
  | 'WRITE_FAILED'
  | 'BAD_RESULTS_PATH';

export class ResultsError extends Error {
  constructor(
    readonly code: ResultsErrorCode,
    readonly file: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ResultsError';
  }
}

// The one error type of the results boundary. Its message is one line for the user (file and
// what is wrong); the CLI prints it without a stack trace.
export const RESULTS_ERROR_CODES = [
  'NOT_A_RESULTS_FILE',
  'FILE_NOT_FOUND',
  'UNREADABLE',
  'UNSUPPORTED_FORMAT',
  'EMPTY_FILE',
  'ENCODING',
  'MALFORMED_CSV',
  'SHEET_NOT_FOUND',
  'WRITE_FAILED',
  'BAD_RESULTS_PATH',
] as const;
export type ResultsErrorCode = (typeof RESULTS_ERROR_CODES)[number];

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

// The one error type of the results boundary. Its message is one line for the user (file and
// what is wrong); the CLI prints it without a stack trace.
import type { Refuse } from '../input/input-errors.ts';

/** The refusals the results reader shares with the batch reader, and its own. */
type ResultsErrorCode =
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

/** A catch handler: undefined when `path` does not exist; any other error refuses, naming it, its code and `then` (what to do). */
export const missingOnly =
  (path: string, what: string, then: string) =>
  (e: unknown): undefined => {
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    if (code === 'ENOENT') return undefined;
    throw new ResultsError('UNREADABLE', path, `cannot ${what} ${path} (${code}): ${then}`, { cause: e });
  };

// A file that cannot be used as a batch at all: the CLI shows one line and exits 2; nothing is sent.

export type InputErrorCode =
  | 'FILE_NOT_FOUND'
  | 'UNREADABLE'
  | 'UNSUPPORTED_FORMAT'
  | 'EMPTY_FILE'
  | 'NO_HEADER'
  | 'MISSING_COLUMNS'
  | 'DUPLICATE_COLUMNS'
  /** A header no cell can be named by (`__proto__`). */
  | 'UNUSABLE_HEADER'
  | 'ENCODING'
  | 'MALFORMED_CSV'
  | 'SHEET_NOT_FOUND'
  | 'TOO_LARGE'
  | 'MALFORMED_XML'
  | 'XML_DTD'
  | 'CONTROL_TOTALS'
  /** Excel cells merged over rows below the header: the rows under the first hold no value. */
  | 'MERGED_CELLS'
  /** Ctrl-C or SIGTERM while the file was read: the rest was not read, and nothing was sent. */
  | 'STOPPED';

export class InputError extends Error {
  constructor(
    readonly code: InputErrorCode,
    readonly file: string,
    message: string,
    readonly row?: number,
  ) {
    super(message);
    this.name = 'InputError';
  }
}

/** Makes a reader's error from a code and a message: an InputError here, a ResultsError for a results file. */
export type Refuse = (
  code: Extract<InputErrorCode, 'FILE_NOT_FOUND' | 'UNREADABLE' | 'UNSUPPORTED_FORMAT' | 'EMPTY_FILE' | 'ENCODING' | 'SHEET_NOT_FOUND'>,
  message: string,
) => Error;

// The types of screening and its error, apart so that the readers and the matcher import no cycle.
export interface Payee {
  reference: string;
  row: number;
  name: string;
  country?: string;
  bic?: string;
  iban?: string;
  accountNumber?: string;
}
export type ListFormat = 'ofac-sdn' | 'un-xml' | 'opensanctions' | 'plain';
export interface ListInfo {
  path: string;
  format: ListFormat;
  /** sha256 hex of the file's bytes (an OFAC list: of sdn.csv, alt.csv and add.csv in that order). */
  digest: string;
  entries: number;
  /** ISO date: the list's own publish date where it has one, else the file's modification time. */
  date: string;
  dateFrom: 'file' | 'mtime';
}
export interface Hit {
  list: ListFormat;
  listPath: string;
  entryId: string;
  entryName: string;
  matched: string;
  on: 'name' | 'alias' | 'bic' | 'iban' | 'account';
  programme?: string;
  score: string;
  band: 'hit' | 'review';
  why: string;
}
/** A name scoring at least `hit` is a hit; at least `review` (and below `hit`) holds the row for review. */
export interface Thresholds {
  hit: number;
  review: number;
}
export type ScreeningErrorCode = 'LIST_UNREADABLE' | 'LIST_FORMAT' | 'LIST_EMPTY' | 'THRESHOLDS';
export class ScreeningError extends Error {
  constructor(
    readonly code: ScreeningErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ScreeningError';
  }
}

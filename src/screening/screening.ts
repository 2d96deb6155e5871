// Screening payees against sanctions lists, offline (issue 42): the lists are read as published
// (lists.ts), indexed once, and every payee is compared by name, aliases and identifiers (match.ts).
import { readList } from './lists.ts';
import { buildIndex, screenPayee } from './match.ts';

export interface Payee {
  reference: string;
  /** The row as the spreadsheet shows it. */
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
  /** The name, alias or identifier of the entry that matched. */
  matched: string;
  on: 'name' | 'alias' | 'bic' | 'iban' | 'account';
  programme?: string;
  /** '0.00'..'1.00' */
  score: string;
  band: 'hit' | 'review';
  why: string;
}
/** A name scoring at least `hit` is a hit; at least `review` (and below `hit`) holds the row for review. */
export interface Thresholds {
  hit: number;
  review: number;
}
export const DEFAULT_THRESHOLDS: Thresholds = { hit: 0.92, review: 0.85 };

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

export interface Screener {
  lists: ListInfo[];
  screen(payee: Payee): Hit[];
}

/** Reads every list (an unreadable or unknown one throws, never counts as empty) and indexes their entries once. */
export async function loadScreener(paths: string[], thresholds: Thresholds = DEFAULT_THRESHOLDS): Promise<Screener> {
  if (!(thresholds.review > 0 && thresholds.review <= thresholds.hit && thresholds.hit <= 1))
    throw new ScreeningError(
      'THRESHOLDS',
      `thresholds must satisfy 0 < review <= hit <= 1 (got hit ${thresholds.hit}, review ${thresholds.review})`,
    );
  const read = [];
  for (const path of paths) read.push(await readList(path));
  const index = buildIndex(read);
  return { lists: read.map((r) => r.info), screen: (payee) => screenPayee(index, payee, thresholds) };
}

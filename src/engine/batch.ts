// Loading a batch for the engine: its identity (content hash or --batch-id), and every row
// validated offline, held in file order. Invalid rows stay in the list: they go to the results
// file with their problems and are never sent.
import type { ApiAmount } from '../money.ts';
import { resolve } from 'node:path';
import { InputError } from '../input/errors.ts';
import type { RowState } from '../journal/rows.ts';
import { validateBatch, type Problem, type SettledRow, type ValidatedRow } from '../validation/index.ts';
import { fingerprintingChecker, type DocumentFingerprint } from '../validation/documents.ts';
import type { PayoutRow } from '../validation/schemas.ts';
import { batchIdentity, fileSha256, type BatchIdentity } from './identity.ts';

export interface LoadOptions {
  encoding?: string;
  sheet?: string;
  allowDuplicateRows?: boolean;
  batchId?: string;
  /** Ctrl-C or SIGTERM: reading stops at the next row (the reader lets the event loop turn). */
  stop?: AbortSignal;
}

/** A batch's journal states by reference, once its identity is known (run: the rows created before). */
export type JournalLookup = (identity: BatchIdentity) => ((reference: string) => RowState | undefined) | undefined;

/** What the engine needs of a row created by an earlier run, which is not validated again. */
export interface CreatedRow {
  reference: string;
  /** As the service answered at creation (journal), for the totals of what the batch pays. */
  sourceCurrency: string;
  sourceAmount: ApiAmount;
}

export interface EngineRow {
  rowNumber: number;
  cells: Record<string, string>;
  /** Present when the row passed offline validation. */
  payout?: PayoutRow;
  /** Present instead when an earlier run created the row (loadBatch's `journal`): never sent again. */
  created?: CreatedRow;
  problems: Problem[];
}

export interface LoadedBatch {
  /** Absolute path. */
  file: string;
  format: 'csv' | 'xlsx' | 'xls';
  delimiter?: string;
  inputColumns: string[];
  rows: EngineRow[];
  fileProblems: Problem[];
  identity: BatchIdentity;
  /** What validation saw of each valid document (absolute path): the upload checks it is the same file. */
  documents?: Map<string, DocumentFingerprint>;
}

export async function loadBatch(path: string, options: LoadOptions = {}, journal?: JournalLookup): Promise<LoadedBatch> {
  const file = resolve(path);
  // Known once the identity is (after the reader opened the file, before the first row is read).
  let stateOf: ((reference: string) => RowState | undefined) | undefined;
  // A resumed batch of 100,000 created rows spends most of its time validating them again, for
  // nothing: a created row is never sent again. The journal's probable-duplicate key keeps the
  // rule that spans rows whole (a row created before still makes a later duplicate invalid).
  const settled = (reference: string, rowNumber: number): SettledRow | undefined => {
    const s = stateOf?.(reference);
    return s && s.phase === 'created' && s.payout && s.row === rowNumber && s.dup !== undefined ? { dup: s.dup } : undefined;
  };
  const docs = fingerprintingChecker();
  // Opened by the reader first: a missing or unusable file is its InputError (exit 2).
  const v = await validateBatch(file, {
    checkDocument: docs.check,
    encoding: options.encoding,
    sheet: options.sheet,
    allowDuplicateRows: options.allowDuplicateRows,
    settled: journal ? settled : undefined,
  });
  let identity: BatchIdentity;
  try {
    identity = batchIdentity(await fileSha256(file), options.batchId);
    stateOf = journal?.(identity);
  } catch (e) {
    await v.close();
    throw e;
  }
  const rows: EngineRow[] = [];
  try {
    for await (const r of v.rows) {
      if (options.stop?.aborted)
        throw new InputError(
          'STOPPED',
          file,
          `${file}: stopped (Ctrl-C or SIGTERM) at row ${r.rowNumber}, before anything was sent.`,
          r.rowNumber,
        );
      rows.push(toEngineRow(r, stateOf));
    }
  } finally {
    await v.close();
  }
  return {
    file,
    format: v.source.format,
    delimiter: v.source.delimiter,
    inputColumns: v.source.columns,
    rows,
    fileProblems: v.fileProblems,
    identity,
    documents: docs.fingerprints,
  };
}

export function toEngineRow(r: ValidatedRow, stateOf?: (reference: string) => RowState | undefined): EngineRow {
  const p = r.settled && stateOf?.(r.settled.reference)?.payout;
  if (r.settled && p) {
    return {
      rowNumber: r.rowNumber,
      cells: r.cells,
      created: { reference: r.settled.reference, sourceCurrency: p.sourceCurrency, sourceAmount: p.sourceAmount },
      problems: r.problems,
    };
  }
  return { rowNumber: r.rowNumber, cells: r.cells, payout: r.valid ? r.payout : undefined, problems: r.problems };
}

/** The reference of a row that is or was a payout (validated, or created before): its journal name. */
export function referenceOf(r: EngineRow): string | undefined {
  return r.payout?.reference ?? r.created?.reference;
}

/** The first error of a row, for the results file's errorCode and errorMessage. */
export function firstError(problems: Problem[]): { code: string; message: string } | undefined {
  const errors = problems.filter((p) => p.severity === 'error');
  if (!errors.length) return undefined;
  const e = errors[0]!;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more problem${errors.length > 2 ? 's' : ''})` : '';
  return { code: e.code, message: `${e.column ? `${e.column}: ` : ''}${e.message}${more}` };
}

// Loading a batch for the engine: its identity (content hash or --batch-id), and every row
// validated offline, held in file order. Invalid rows stay in the list: they go to the results
// file with their problems and are never sent.
import { resolve } from 'node:path';
import { validateBatch, type Problem, type ValidatedRow } from '../validation/index.ts';
import type { PayoutRow } from '../validation/schemas.ts';
import { batchIdentity, fileSha256, type BatchIdentity } from './identity.ts';

export interface LoadOptions {
  encoding?: string;
  sheet?: string;
  allowDuplicateRows?: boolean;
  batchId?: string;
}

export interface EngineRow {
  rowNumber: number;
  cells: Record<string, string>;
  /** Present when the row passed offline validation. */
  payout?: PayoutRow;
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
}

export async function loadBatch(path: string, options: LoadOptions = {}): Promise<LoadedBatch> {
  const file = resolve(path);
  // Opened by the reader first: a missing or unusable file is its InputError (exit 2).
  const v = await validateBatch(file, { encoding: options.encoding, sheet: options.sheet, allowDuplicateRows: options.allowDuplicateRows });
  let identity: BatchIdentity;
  try {
    identity = batchIdentity(await fileSha256(file), options.batchId);
  } catch (e) {
    await v.close();
    throw e;
  }
  const rows: EngineRow[] = [];
  try {
    for await (const r of v.rows) rows.push(toEngineRow(r));
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
  };
}

export function toEngineRow(r: ValidatedRow): EngineRow {
  return { rowNumber: r.rowNumber, cells: r.cells, payout: r.valid ? r.payout : undefined, problems: r.problems };
}

/** The first error of a row, for the results file's errorCode and errorMessage. */
export function firstError(problems: Problem[]): { code: string; message: string } | undefined {
  const errors = problems.filter((p) => p.severity === 'error');
  if (!errors.length) return undefined;
  const e = errors[0]!;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more problem${errors.length > 2 ? 's' : ''})` : '';
  return { code: e.code, message: `${e.column ? `${e.column}: ` : ''}${e.message}${more}` };
}

// Prepare, the first stage of `run` and `retry` (pipeline.ts, retry.ts): the batch loaded (its
// identity, content hash or --batch-id, and every row validated offline, held in file order), then
// its references reserved in the account's ledger and its journal opened under that reservation.
// Invalid rows stay in the list: they go to the results file with their problems and are never
// sent.
import { resolve } from 'node:path';
import { InputError } from '../input/input-errors.ts';
import type { BatchFormat } from '../input/reader.ts';
import type { RowState } from '../journal/lines.ts';
import { validateBatch, type Problem, type ValidatedRow } from '../validation/validation.ts';
import { fingerprintingChecker, type DocumentFingerprint } from '../validation/document-files.ts';
import { batchIdentity, fileSha256, type BatchIdentity } from './identity.ts';
import type { Ledger, Reservation } from '../ledger/account-ledger.ts';
import type { BatchSession, JournalLookup } from './session.ts';

export interface LoadOptions {
  encoding?: string;
  sheet?: string;
  /** pain.001: the folder of supporting documents (ReadOptions.documents). */
  documents?: string;
  allowDuplicateRows?: boolean;
  batchId?: string;
  /** Ctrl-C or SIGTERM: reading stops at the next row (the reader lets the event loop turn). */
  stop?: AbortSignal;
}

/**
 * A row as validation gave it (its payout present when valid), and `reference`: its name in the
 * journal when it has no payout but an earlier run created it (loadBatch's `journal`): its payout
 * exists, so it is reported from the journal and never sent again, even when the file now fails
 * validation (a document moved away, a rule of a newer version).
 */
export type EngineRow = Omit<ValidatedRow, 'valid'> & { reference?: string };

export interface LoadedBatch {
  /** Absolute path. */
  file: string;
  format: BatchFormat;
  /** Excel: the sheet read. */
  sheet?: string;
  delimiter?: string;
  /** pain.001: the message's GrpHdr/MsgId and version (shown in the plan and what approvers sign). */
  message?: { id: string; version: string };
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
  const createdBefore = (reference: string) => stateOf?.(reference)?.phase === 'created';
  const docs = fingerprintingChecker();
  // Opened by the reader first: a missing or unusable file is its InputError (exit 2).
  const v = await validateBatch(file, {
    checkDocument: docs.check,
    encoding: options.encoding,
    sheet: options.sheet,
    documents: options.documents,
    allowDuplicateRows: options.allowDuplicateRows,
    createdBefore: journal ? createdBefore : undefined,
  });
  let identity: BatchIdentity;
  try {
    identity = batchIdentity(await fileSha256(file), options.batchId);
    stateOf = await journal?.(identity);
  } catch (e) {
    await v.close();
    throw e;
  }
  const refHeader = v.source.fields.reference;
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
      // An invalid row keeps its reference cell as its journal name only when an earlier run created
      // it, and only on the first row with that reference (a later one repeats it: DUPLICATE_REFERENCE).
      const ref = refHeader ? r.cells[refHeader] : undefined;
      const named = !r.payout && ref && createdBefore(ref) && !r.problems.some((p) => p.code === 'DUPLICATE_REFERENCE');
      const row = { ...r, cells: compactCells(r.cells) };
      rows.push(named ? { ...row, reference: ref } : row);
    }
  } finally {
    await v.close();
  }
  return {
    file,
    format: v.source.format,
    ...(v.source.sheet !== undefined ? { sheet: v.source.sheet } : {}),
    delimiter: v.source.delimiter,
    ...(v.source.message ? { message: v.source.message } : {}),
    inputColumns: v.source.columns,
    rows,
    fileProblems: v.fileProblems,
    identity,
    documents: docs.fingerprints,
  };
}

/**
 * The same cells, without prototype, as one fast object (issue 44): a dictionary of every header,
 * as the reader builds it key by key, takes about 1.2 KB more a row for as long as the run holds it.
 */
const compactCells = (cells: Record<string, string>): Record<string, string> =>
  Object.setPrototypeOf(JSON.parse(JSON.stringify(cells)), null) as Record<string, string>;

/** The reference of a row that is or was a payout (validated, or created before): its journal name. */
export function referenceOf(r: EngineRow): string | undefined {
  return r.payout?.reference ?? r.reference;
}

/** The references of a batch's valid rows. */
export function validReferences(rows: EngineRow[]): Set<string> {
  return new Set(rows.flatMap((r) => (r.payout ? [r.payout.reference] : [])));
}

/** The first error of a row, for the results file's errorCode and errorMessage. */
export function firstError(problems: Problem[]): { code: string; message: string } | undefined {
  const errors = problems.filter((p) => p.severity === 'error');
  if (!errors.length) return undefined;
  const e = errors[0]!;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more problem${errors.length > 2 ? 's' : ''})` : '';
  return { code: e.code, message: `${e.column ? `${e.column}: ` : ''}${e.message}${more}` };
}

/**
 * The shared part of prepare (`run`, `retry`): reserves the rows (reserveRows), then opens the
 * session; the reservation is released if it cannot open.
 */
export async function reservedSession(
  ledger: Ledger,
  batch: Pick<LoadedBatch, 'rows' | 'identity' | 'file'>,
  states: Map<string, RowState> | undefined,
  reserve: Parameters<typeof reserveRows>[3],
  open: () => Promise<BatchSession>,
): Promise<{ reservation: Reservation; session: BatchSession }> {
  const reservation = await reserveRows(ledger, batch, states, reserve);
  try {
    // The session's `initiating` lines are written under this reservation (session.ts recordInitiating).
    const session = await open();
    session.reservation = reservation;
    return { reservation, session };
  } catch (e) {
    await reservation.release().catch(() => undefined);
    throw e;
  }
}

/**
 * Reserves in the account's ledger the references a run or retry may send: fresh ones (never
 * initiated, or refused before when retrying) are checked against every other batch; rows whose
 * outcome is to be settled go with their journalled keys and are only reserved.
 */
export function reserveRows(
  ledger: Ledger,
  batch: Pick<LoadedBatch, 'rows' | 'identity' | 'file'>,
  states: Map<string, RowState> | undefined,
  o: { command: 'run' | 'retry'; results?: string; only?: Set<number>; resend?: Set<string> },
): Promise<Reservation> {
  const fresh: string[] = [];
  const settling: string[] = [];
  for (const r of batch.rows) {
    if (!r.payout || (o.only && !o.only.has(r.rowNumber))) continue;
    const ref = r.payout.reference;
    const s = states?.get(ref);
    const phase = s?.phase ?? 'none';
    if (phase === 'initiating' || phase === 'unknown') settling.push(ref);
    else if (phase === 'none' || (phase === 'rejected' && o.command === 'retry')) fresh.push(ref);
    // a payout failed after creation and refunded, sent again on purpose (retry --resend-failed)
    else if (phase === 'created' && o.command === 'retry' && o.resend?.has(ref)) fresh.push(ref);
  }
  return ledger.reserve({
    batchId: batch.identity.batchId,
    file: batch.file,
    results: o.results,
    command: o.command,
    fresh,
    settling,
  });
}

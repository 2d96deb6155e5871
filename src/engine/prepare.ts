// Prepare, the first stage of `run` and `retry`: the batch loaded (its identity and every row
// validated, in file order; invalid rows stay, for the results file), then its references reserved
// in the account's ledger and its journal opened under that reservation.
import { resolve } from 'node:path';
import { InputError } from '../input/input-errors.ts';
import type { BatchFormat } from '../input/reader.ts';
import type { RowState } from '../journal/lines.ts';
import { validateBatch, type Problem, type ValidatedRow, type ValidateOptions } from '../validation/validation.ts';
import { fingerprintingChecker, type DocumentFingerprint } from '../validation/document-files.ts';
import { batchIdentity, fileSha256, type BatchIdentity } from './identity.ts';
import { SpillList, type RowList } from '../files/spill.ts';
import { Dec } from '../money.ts';
import { foldBatch, payeeHold } from '../ledger/account-ledger.ts';
import { probableDuplicateKey } from '../validation/row.ts';
import { openSession, type BatchSession, type JournalLookup, type OpenSessionOptions } from './session.ts';

export interface LoadOptions extends Omit<ValidateOptions, 'checkDocument' | 'createdBefore'> {
  batchId?: string;
  /** Ctrl-C or SIGTERM: reading stops at the next row (the reader lets the event loop turn). */
  stop?: AbortSignal;
}

/** `--allow-duplicate REF` and `--duplicate-window` (duplicates.ts: plan, run, retry; a watch's `allowDuplicates`, `duplicateWindow`). */
export interface DuplicateOptions {
  /** References sent though they repeat a recent payout (or the earlier references). */
  allowDuplicates?: string[];
  duplicateWindowMs?: number;
}

/**
 * A row as validated, and `reference`: its journal name when it has no payout now but an earlier
 * run created it: reported from the journal, never sent again.
 */
export type EngineRow = Omit<ValidatedRow, 'valid'> & { reference?: string };

export interface LoadedBatch {
  /** Absolute path. */
  file: string;
  format: BatchFormat;
  sheet?: string;
  delimiter?: string;
  /** pain.001: GrpHdr/MsgId and version. */
  message?: { id: string; version: string };
  inputColumns: string[];
  /** In file order; `run` keeps them in a file, not in memory. */
  rows: SpillList<EngineRow>;
  fileProblems: Problem[];
  identity: BatchIdentity;
  /** What validation saw of each valid document: the upload checks it is the same file. */
  documents?: Map<string, DocumentFingerprint>;
}

export async function loadBatch(path: string, options: LoadOptions = {}, journal?: JournalLookup): Promise<LoadedBatch> {
  const file = resolve(path);
  let stateOf: ((reference: string) => RowState | undefined) | undefined;
  // (a reference an earlier run created, or sent with its outcome unknown: it is, or may be, a payout)
  const sentBefore = (reference: string) => ['created', 'initiating', 'unknown'].includes(stateOf?.(reference)?.phase ?? 'none');
  const docs = fingerprintingChecker();
  const v = await validateBatch(file, { ...options, checkDocument: docs.check, createdBefore: journal ? sentBefore : undefined });
  const refHeader = v.source.fields.reference;
  const rows = spillRows([]);
  let identity: BatchIdentity;
  try {
    identity = batchIdentity(await fileSha256(file), options.batchId, v.source.ownSheet);
    stateOf = await journal?.(identity);
    for await (const r of v.rows) {
      if (options.stop?.aborted)
        throw new InputError(
          'STOPPED',
          file,
          `${file}: stopped (Ctrl-C or SIGTERM) at row ${r.rowNumber}, before anything was sent.`,
          r.rowNumber,
        );
      // (an invalid row an earlier run sent keeps its journal name, on the first row with that reference; one the service
      // refused too: its results keep the refused key)
      const ref = refHeader ? r.cells[refHeader] : undefined;
      const sent = ref && (sentBefore(ref) || stateOf?.(ref)?.phase === 'rejected');
      const named = !r.payout && sent && !r.problems.some((p) => p.code === 'DUPLICATE_REFERENCE');
      rows.push(named ? { ...r, reference: ref } : r);
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

/** Rows kept in a file, read back one at a time. */
export function spillRows(rows: Iterable<EngineRow>): SpillList<EngineRow> {
  const list = new SpillList(reviveRow);
  for (const r of rows) list.push(r);
  return list;
}

/** A batch's first row of each key, read from the batch when asked: the rows are not held. */
export function rowLookup<K>(rows: RowList<EngineRow>, keyOf: (r: EngineRow) => K | undefined): (key: K) => EngineRow | undefined {
  const places = new Map<K, number>();
  rows.forEach((r, i) => {
    const k = keyOf(r);
    if (k !== undefined && !places.has(k)) places.set(k, i);
  });
  return (k) => {
    const i = places.get(k);
    return i === undefined ? undefined : rows.at(i);
  };
}

/** rowLookup by row number, made at the first look-up (a row's number stays when it is `set`): no pass when none is looked up. */
export function rowByNumber(rows: RowList<EngineRow>): (n: number) => EngineRow | undefined {
  let lookup: ((n: number) => EngineRow | undefined) | undefined;
  return (n) => (lookup ??= rowLookup(rows, (r) => r.rowNumber))(n);
}

/** A row as its JSON reads back: cells without a prototype (a header may be named `toString`), the amount a decimal again. */
function reviveRow(json: unknown): EngineRow {
  const r = json as EngineRow;
  Object.setPrototypeOf(r.cells, null);
  if (r.payout) r.payout.sourceAmount = new Dec(r.payout.sourceAmount);
  return r;
}

/** The reference of a row that is or was a payout (validated, or created before): its journal name. */
export function referenceOf(r: EngineRow): string | undefined {
  return r.payout?.reference ?? r.reference;
}

export function validReferences(rows: RowList<EngineRow>): Set<string> {
  return new Set(rows.flatMap((r) => (r.payout ? [r.payout.reference] : [])));
}

/** The first error of a row, for the results file's errorCode and errorMessage. */
export function firstError(problems: Problem[]): { code: string; message: string } | undefined {
  const [e, ...rest] = problems.filter((p) => p.severity === 'error');
  if (!e) return undefined;
  const more = rest.length ? ` (and ${rest.length} more problem${rest.length > 1 ? 's' : ''})` : '';
  return { code: e.code, message: `${e.column ? `${e.column}: ` : ''}${e.message}${more}` };
}

/**
 * Reserves the references a run or retry may send, then opens the session under that reservation
 * (released if it cannot open): fresh ones are checked against every other batch; rows whose outcome is to be
 * settled go with their journalled keys and are only reserved.
 */
export async function reservedSession(
  batch: Pick<LoadedBatch, 'rows' | 'identity' | 'file' | 'sheet'>,
  states: Map<string, RowState> | undefined,
  o: Omit<OpenSessionOptions, 'identity' | 'file' | 'resultsPath'> &
    DuplicateOptions & {
      results?: string;
      only?: Set<number>;
      resend?: Set<string>;
      // (screen-batch.ts's options, as far as read here: that file imports this one)
      screening?: { lists: string[] };
    },
): Promise<BatchSession> {
  const fresh: string[] = [];
  const settling: string[] = [];
  // (and its fresh rows' payees: two batches paying one payee the same amount at once, under two references, are refused)
  const allowed = new Set(o.allowDuplicates);
  const payees: string[] = [];
  for (const r of batch.rows) {
    if (!r.payout || (o.only && !o.only.has(r.rowNumber))) continue;
    const ref = r.payout.reference;
    const phase = states?.get(ref)?.phase ?? 'none';
    if (phase === 'initiating' || phase === 'unknown') settling.push(ref);
    else if (phase === 'none' || (o.command === 'retry' && (phase === 'rejected' || (phase === 'created' && o.resend?.has(ref))))) {
      fresh.push(ref);
      if (o.duplicateWindowMs !== 0 && !allowed.has(ref)) payees.push(payeeHold(probableDuplicateKey(r.payout)));
    }
  }
  const { command, results, ledger } = o;
  const reservation = await ledger.reserve({
    ...{ batchId: batch.identity.batchId, file: batch.file, results, command, settling, screens: !!o.screening?.lists.length },
    fresh: fresh.concat(payees),
  });
  try {
    // (read again if another run of this batch appended since: its rows must not be sent again)
    const appended = o.read && (await o.read.ledger.read(o.read.batchId, () => undefined, o.read.next));
    const read = appended?.events || appended?.skipped ? await foldBatch(o.read!.ledger, o.read!.batchId) : o.read;
    const session = await openSession({ ...o, identity: batch.identity, file: batch.file, sheet: batch.sheet, resultsPath: results, read });
    session.reservation = reservation;
    return session;
  } catch (e) {
    await reservation.release().catch(() => undefined);
    throw e;
  }
}

// `retry RESULTS`: a results file, perhaps edited, back through the pipeline. Created rows are never
// sent again; unknown outcomes go first with their journalled key and body (I2), refused rows under
// attempt + 1 (I3), a conflict stays one (I5). The journal decides, never the line number.
import { existsSync, statSync } from 'node:fs';
import { copyFile, readFile, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import iconv from 'iconv-lite';
import type { Connection } from '../client/connect.ts';
import { mapColumns, type ColumnMapping } from '../input/batch-columns.ts';
import { maskAccount } from '../mask.ts';
import type { Problem } from '../validation/problems.ts';
import type { PayoutRow } from '../validation/row-schemas.ts';
import {
  applyEvent,
  isFailedAfterCreation,
  resendBegun,
  type BatchHeader,
  type FoldedJournal,
  type PayoutSnapshot,
  type RowEvent,
  type RowState,
} from '../journal/lines.ts';
import { PayoutApiError } from '../client/errors.ts';
import { formatApiAmount } from '../money.ts';
import { snapshotOfError } from './send.ts';
import { findRefund } from './refund.ts';
import { spillResults } from '../results/read.ts';
import { newestResults, partialResultsPath, resultsPathFor } from '../results/paths.ts';
import { publishResults, writeResults } from '../results/write.ts';
import type { ResultRow, ResultValues, ResultsList, ResultsTable } from '../results/types.ts';
import { fingerprintingChecker } from '../validation/document-files.ts';
import { parseRow, probableDuplicateKey, type RowContext } from '../validation/row.ts';
import { firstError, loadBatch, referenceOf, reservedSession, rowLookup, spillRows, type EngineRow, type LoadedBatch } from './prepare.ts';
import { listView, type SpillList } from '../files/spill.ts';
import { unlessMissing } from '../files/attempt.ts';
import { fileSha256, idempotencyKey } from './identity.ts';
import { appendToBatch, batchNamed, foldAll, type Ledger } from '../ledger/account-ledger.ts';
import { ledgerOf } from '../ledger/open.ts';
import { ENGINE_STATUSES, isCreatedStatus, outcomeFromState, resultValues } from './outcome.ts';
import { preparePipeline, refuseAnotherRunsResults, type PipelineResult, type Prepared, type SendOptions } from './pipeline.ts';
import { BatchRefused } from './engine-errors.ts';
import { ResultsError } from '../results/results-errors.ts';
import type { KeyProof } from './spent.ts';
import { unsettled } from './session.ts';

export interface RetryOptions extends SendOptions {
  resultsFile: string;
  /** Default <results>.retry-N beside it. */
  resultsPath?: string;
  /** `--resend-failed`: rows FAILED or REJECTED after creation go again under attempt + 1 once refunded. */
  resendFailed?: boolean;
  /** The caller's folder: a batch named by its id is retried from a copy there (resultsHere). */
  here: string;
}

export interface NotResent {
  rowNumber: number;
  reference: string;
  payoutId: string;
  status: string;
  reason: string;
}

export interface RetryResult extends PipelineResult {
  resent: number;
  /** Failed rows left as they were under --resend-failed (refund not seen yet, row invalid...). */
  notResent: NotResent[];
  /** Refused rows sent again: what their refused key showed before any new key (spent.ts). */
  keyProofs: KeyProof[];
}

export async function prepareRetry(given: RetryOptions): Promise<Prepared<RetryResult>> {
  const ledger = ledgerOf(given.conn, { root: given.stateDir });
  const { here } = given;
  const o = { ...given, resultsFile: (await resultsHere([ledger], given.resultsFile, here, { sending: true }))?.path ?? given.resultsFile };
  const resultsFile = resolve(here, o.resultsFile);
  const table = await spillResults(resultsFile);
  const { fields } = mapColumns(table.inputColumns, resultsFile);
  const found = await findJournalOfResults(ledger, table, fields.reference, resultsFile, o.resultsFile);
  const notResent: NotResent[] = [];
  const folded = o.resendFailed ? await confirmFailedRows(o.conn, ledger, found, table.rows, notResent) : found.folded;
  const header = folded.header;
  if (!header) throw new BatchRefused(`the journal ${found.path} has no header line`, 'bad-journal');
  // (as `run --results` refuses: the results written over the file the rows were approved from)
  const out = o.resultsPath && resolve(o.resultsPath);
  const bad =
    out === batchFileNow(header.file, resultsFile)
      ? 'the batch file; name another results file'
      : out === resultsFile && 'the results file this retry reads; name another file';
  if (bad) throw new ResultsError('BAD_RESULTS_PATH', o.resultsPath!, `--out ${o.resultsPath}: that is ${bad}`);
  const { batch, only, keep, resend, failedPayout, asFirstSent } = await retryBatch(table, fields, resultsFile, o, folded, header);
  if (o.resultsPath) await refuseAnotherRunsResults(o.resultsPath, folded, ledger, batch, '--out');
  const session = await reservedSession(batch, folded.rows, {
    ...o,
    ledger,
    env: o.conn.environment.name,
    command: 'retry',
    results: resultsPathFor(resultsFile, o.resultsPath).path,
    only,
    resend,
  });
  // (named under the reservation: a retry of this file that ended meanwhile has its retry-N in place)
  const results = resultsPathFor(resultsFile, o.resultsPath);
  // (a retry killed midway leaves no output that looks finished)
  const partial = partialResultsPath(results.path);
  const complete = async (result: PipelineResult): Promise<RetryResult> => {
    // (a failed row paid again is a new payment: one invalid as it stands, or refused as a probable duplicate, says so)
    for (const row of batch.rows) {
      const p =
        row.reference && !row.payout && failedPayout.has(row.reference) ? session.folded.rows.get(row.reference)?.payout : undefined;
      const e = firstError(row.problems);
      const reason = `the row is not valid as it stands: ${e?.message}`;
      if (p && e) notResent.push({ rowNumber: row.rowNumber, reference: row.reference!, payoutId: p.id, status: p.status, reason });
      // (and one the plan left out, its failed payout still the row's: the plan's reason)
      const ref = row.payout && resend.has(row.payout.reference) ? row.payout.reference : undefined;
      const left = ref && result.plan?.notSent.get(row.rowNumber);
      const failed = ref && session.folded.rows.get(ref)?.payout;
      if (left && failed && failed.id === failedPayout.get(ref))
        notResent.push({ rowNumber: row.rowNumber, reference: ref, payoutId: failed.id, status: failed.status, reason: left.message });
    }
    // nothing new to say: no retry-N file
    const written = result.resultsWritten && !(await sameBytes(partial, resultsFile));
    if (written) await publishResults(partial, results.path);
    else await rm(partial, { force: true });
    return {
      ...result,
      resultsWritten: written,
      resultsPath: written ? results.path : resultsFile,
      // (reopened this run and its new attempt sent, nothing failing before its request; or reopened by an earlier retry
      // stopped before its new payout: this run created it)
      resent: [...failedPayout].filter(([ref, id]) => {
        const s = session.folded.rows.get(ref);
        return s?.earlier?.some((p) => p.id === id) && (resend.has(ref) ? !resendBegun(s) : s.phase === 'created');
      }).length,
      notResent,
      keyProofs: (result.keyProofs ?? []).sort((a, b) => a.rowNumber - b.rowNumber),
    };
  };
  return preparePipeline(
    batch,
    session,
    { ...o, results: { ...results, path: partial, delimiter: table.delimiter }, only, keep, mode: 'retry', resend, asFirstSent },
    complete,
  );
}

/**
 * The results file of a batch named by its id, for a command run in `here`: the run's own as last
 * written (its latest retry-N: the rows as last edited and sent) when `here` is its folder; else
 * `<batch16>.results.csv` in `here` (nothing written into another host's folder): kept (its latest retry-N), else copied
 * from the run's, else rebuilt from the ledger's lines (no beneficiary cells) as `<batch16>.ledger.results.csv`.
 */
export async function resultsHere(
  ledgers: Iterable<Ledger>,
  arg: string,
  here: string,
  o: { sending?: boolean } = {},
): Promise<{ path: string; made?: 'copy' | 'ledger' } | undefined> {
  const batch = await batchNamed(ledgers, arg, here);
  if (!batch) return undefined;
  const run = batch.folded.header?.results;
  const recorded = run && newestResults(run, batch.folded.header?.createdAt);
  if (recorded && dirname(recorded) === resolve(here) && present(recorded)) return { path: recorded };
  const ext = recorded?.toLowerCase().endsWith('.xlsx') ? '.xlsx' : '.csv';
  const path = join(resolve(here), `${batch.batchId.slice(0, 16)}.results${ext}`);
  if (present(path)) return { path: newestResults(path) };
  if (recorded && existsSync(recorded)) {
    await copyFile(recorded, path);
    return { path, made: 'copy' };
  }
  // (rebuilt, a row has no beneficiary cells to send again: under a name of its own, never taken for the run's; a run
  // killed before its end wrote no results)
  if (o.sending) throw new BatchRefused(notHereToSend(arg, batch.folded), 'results-not-here');
  const rebuilt = join(resolve(here), `${batch.batchId.slice(0, 16)}.ledger.results.csv`);
  await writeResults(rebuilt, resultsFromLedger(batch.folded));
  return { path: rebuilt, made: 'ledger' };
}

/** Only ENOENT is none: a copy that cannot be read otherwise is refused, never taken as none and copied over. */
function present(path: string): boolean {
  const refused = (code: string) =>
    new BatchRefused(`cannot read ${path} (${code}). Nothing was sent: make it readable, then run again`, 'results-unreadable');
  return !!unlessMissing(() => statSync(path), refused);
}

function notHereToSend(arg: string, { header, interrupted }: FoldedJournal): string {
  const fix =
    interrupted && header
      ? `its run did not end (stopped or killed before it wrote its results): run its file again to resume it, each row once: payout-batch run ${header.file}`
      : `its results file${header?.results ? ` ${header.results}` : ''} is not on this host: retry that file (copy it here) or retry on the host that ran it`;
  return `batch ${arg}: ${fix}, with the same service and state folder or ledger. Nothing was sent`;
}

function resultsFromLedger(folded: FoldedJournal): ResultsTable {
  const notSent = { status: ENGINE_STATUSES.NOT_SENT, documents: [] };
  const rows = [...folded.rows.values()].map((s, i): ResultRow => {
    const sent = s.payout ?? (s.body ? (JSON.parse(s.body) as Partial<PayoutSnapshot>) : {});
    const amount = sent.sourceAmount === undefined || !sent.sourceCurrency ? '' : formatApiAmount(sent.sourceAmount, sent.sourceCurrency);
    const cells = {
      reference: s.ref,
      sourceAmount: amount,
      sourceCurrency: sent.sourceCurrency ?? '',
      destinationCurrency: sent.destinationCurrency ?? '',
    };
    return { rowNumber: s.row ?? i + 2, cells, result: resultValues(outcomeFromState(s, notSent)) };
  });
  return { format: 'csv', inputColumns: ['reference', 'sourceAmount', 'sourceCurrency', 'destinationCurrency'], rows };
}

const sameBytes = (a: string, b: string): Promise<boolean> =>
  Promise.all([readFile(a), readFile(b)])
    .then(([x, y]) => x.equals(y))
    .catch(() => false);

/** The account's journal holding most of the file's rows (payout id, key or reference); on a tie, the one that wrote it. */
async function findJournalOfResults(
  ledger: Ledger,
  table: ResultsList,
  refHeader: string | undefined,
  resultsFile: string,
  shownAs: string,
): Promise<{ path: string; batchId: string; folded: FoldedJournal }> {
  const ids = new Set(table.rows.flatMap((r) => (r.result.payoutId ? [r.result.payoutId] : [])));
  const keys = new Set(table.rows.flatMap((r) => (r.result.idempotencyKey ? [r.result.idempotencyKey.trim()] : [])));
  const refs = new Set(table.rows.flatMap((r) => (refHeader && r.cells[refHeader]?.trim() ? [r.cells[refHeader].trim()] : [])));
  if (!keys.size && !ids.size)
    throw new BatchRefused(
      `${shownAs} holds no idempotency key of this tool: no row was ever sent, so run the batch itself instead`,
      'no-keys',
    );
  const matches = (s: RowState) =>
    (s.payout && ids.has(s.payout.id)) || (s.key && keys.has(s.key)) || (s.phase !== 'none' && refs.has(s.ref));
  const scored = (await foldAll([ledger])).map((b) => ({ ...b, n: [...b.folded.rows.values()].filter(matches).length }));
  const most = Math.max(1, ...scored.map((b) => b.n));
  const best = scored.filter((b) => b.n === most);
  const ours = (b: (typeof best)[number]) =>
    !!b.folded.header?.results && resultsFamily(b.folded.header.results) === resultsFamily(resultsFile);
  const found = best.length > 1 ? best.filter(ours) : best;
  if (found.length === 1) return found[0]!;
  if (best.length > 1)
    throw new BatchRefused(
      `${shownAs} matches the journals of ${best.length} batches equally (${best.map((b) => b.path).join(', ')}): retry the results file that run wrote`,
      'mixed-batches',
    );
  throw new BatchRefused(
    `no journal for the rows of ${shownAs} for ${ledger.account} in ${ledger.where}: ` +
      'use the same --base-url (or --env) as the run, and its --state-dir if it was given one',
    'journal-not-found',
  );
}

/** A results file and its retries as one name: `x.results.retry-2.csv` → `x.results`. */
const resultsFamily = (path: string): string => resolve(path).replace(/(\.retry-\d+)?\.(csv|xlsx)$/i, '');

/**
 * For --resend-failed: rows failed after creation confirmed with the service (GET) and their refund
 * looked up, both journalled so the journal decides; rows not refunded yet, or not checkable, go to `notResent`.
 */
async function confirmFailedRows(
  conn: Connection,
  ledger: Ledger,
  { batchId, folded }: { batchId: string; folded: FoldedJournal },
  rows: Iterable<ResultRow>,
  notResent: NotResent[],
): Promise<FoldedJournal> {
  const byPayout = new Map<string, RowState>();
  for (const s of folded.rows.values()) if (s.phase === 'created' && s.payout) byPayout.set(s.payout.id, s);
  const lines: RowEvent[] = [];
  const at = () => new Date().toISOString();
  for (const r of rows) {
    const s = r.result.payoutId ? byPayout.get(r.result.payoutId) : undefined;
    if (!s?.payout || (!isFailedAfterCreation(s.payout.status) && !isFailedAfterCreation(r.result.status))) continue;
    const { ref } = s;
    let p = s.payout;
    const not = (reason: string) => notResent.push({ rowNumber: r.rowNumber, reference: ref, payoutId: p.id, status: p.status, reason });
    try {
      if (!isFailedAfterCreation(p.status)) {
        const now = await conn.client.getPayout(p.id);
        if (!isFailedAfterCreation(now.status)) continue; // the results file says so, the service does not
        const changedAt = now.updatedAt ? { changedAt: now.updatedAt } : {};
        lines.push({ t: 'status', ref, payoutId: p.id, status: now.status, source: 'get', at: at(), ...changedAt });
        p = { ...p, status: now.status };
      }
      if (p.refunded !== undefined) continue;
      const refund = await findRefund(conn.client, { id: p.id, payoutRef: p.payoutRef, currency: p.sourceCurrency });
      const transactionId = refund?.transactionId ? { transactionId: refund.transactionId } : {};
      if (refund) lines.push({ t: 'refund', ref, payoutId: p.id, amount: refund.amount, ...transactionId, at: at() });
      else
        not(
          `payout ${p.payoutRef ?? p.id} ${p.status}, but its refund is not in the wallet's transactions yet: not sent again; run retry --resend-failed again once it shows`,
        );
    } catch (e) {
      if (!(e instanceof PayoutApiError) || e.serviceTrouble) throw e;
      not(`could not be checked: ${snapshotOfError(e).message}`);
    }
  }
  appendToBatch(ledger, batchId, lines, { sync: true });
  for (const e of lines) applyEvent(folded, e);
  return folded;
}

/**
 * Rows to send again (`only`), to keep (`keep`), to resend after a refunded failure (`resend`); the failure each replaces
 * (`failedPayout`); unsettled rows edited into invalid ones, settled with their first body (`asFirstSent`).
 */
async function retryBatch(
  table: ResultsList,
  fields: ColumnMapping['fields'],
  resultsFile: string,
  o: RetryOptions,
  folded: FoldedJournal,
  header: BatchHeader,
) {
  const refHeader = fields.reference;
  const docs = fingerprintingChecker();
  const batchFile = batchFileNow(header.file, resultsFile);
  const journalled = ledgerStates([folded], table.rows, (r) => (refHeader ? r.cells[refHeader]?.trim() : undefined));
  const named = namedReferences(table.rows, refHeader);
  const original = await originalRows({ ...header, file: batchFile }, refHeader);
  const { encodingGuessed } = table;
  const parse: RowContext = { file: o.resultsFile, fields, baseDir: dirname(batchFile), checkDocument: docs.check, encodingGuessed };
  const out = {
    only: new Set<number>(),
    keep: new Map<number, ResultValues>(),
    resend: new Set<string>(),
    failedPayout: new Map<string, string>(),
    asFirstSent: new Set<number>(),
  };
  const settling = new Set<number>();
  // (a row holding a payout the journal gives another row is a copy of it: a row of its own, never kept as paid)
  const journalledIds = new Set(
    [...folded.rows.values()].flatMap((s) => [s.payout, ...(s.earlier ?? [])].flatMap((p) => (p ? [p.id] : []))),
  );
  refuseUnnamedUnsettled(folded, journalled, o.resultsFile);

  /** A row as its cells say now; one not edited since the batch judged it invalid keeps that verdict. */
  const rowOfCells = (r: ResultRow, s: RowState | undefined): EngineRow => {
    const cells = Object.fromEntries(Object.entries(r.cells).map(([k, v]) => [k, v.trim()]));
    const orig = refHeader ? original(cells[refHeader] ?? '') : undefined;
    if (orig && !orig.payout && table.inputColumns.every((h) => (orig.cells[h] ?? '').trim() === (cells[h] ?? '').trim()))
      return { rowNumber: r.rowNumber, cells: r.cells, payout: undefined, problems: orig.problems };
    const parsed = parseRow({ rowNumber: r.rowNumber, cells, numbers: r.numbers, dates: r.dates }, parse);
    // (the digits of the batch file as it ran: its row, else the body the journal sent when the file changed since, else the
    // cells of its row the batch judged invalid)
    const was =
      (orig?.payout ?? (s?.body ? (JSON.parse(s.body) as PayoutRow) : undefined))?.beneficiary ??
      (orig && Object.fromEntries(Object.entries(fields).map(([f, h]) => [f, orig.cells[h]?.trim()])));
    if (was && parsed.payout) parsed.problems.push(...spreadsheetLost(was, parsed.payout, parse));
    if (parsed.payout && r.result.errorCode === 'EXCEL_DIGITS_LOST') parsed.problems.push(...digitsStillLost(parsed.payout, parse));
    const invalid = parsed.problems.some((p) => p.severity === 'error');
    return { rowNumber: r.rowNumber, cells: r.cells, payout: invalid ? undefined : parsed.payout, problems: parsed.problems };
  };

  /** One results row: created ones reported from the journal; the others parsed again, tied to their journalled reference, key and body. */
  const retryRow = (r: ResultRow, i: number): EngineRow => {
    const s = journalled.get(i);
    let row = rowOfCells(r, s);
    refuseRowApart(o.resultsFile, r, refHeader, s, [folded], named, (ref) => !!original(ref));
    if (o.resendFailed && s && resendable(s)) {
      out.failedPayout.set(s.ref, s.payout!.id);
      if (row.payout) {
        out.resend.add(s.ref);
        out.only.add(r.rowNumber);
      } else out.keep.set(r.rowNumber, r.result);
    } else if (!s && isCreatedStatus(r.result.status) && r.result.payoutId && !journalledIds.has(r.result.payoutId))
      out.keep.set(r.rowNumber, r.result);
    // a row screening held stays held unless this retry screens it again (its clearance, approved, lets it go), or was sent since
    else if (r.result.status === ENGINE_STATUSES.HELD_SCREENING && !o.screening && (!s || s.phase === 'rejected'))
      out.keep.set(r.rowNumber, r.result);
    else out.only.add(r.rowNumber); // (a row the journal knows as created is reported from its latest state, never sent)
    if (!s) return row;
    if (s.earlier?.length && s.phase !== 'created') out.failedPayout.set(s.ref, s.earlier.at(-1)!.id);
    // (a refused row edited into an invalid one too: its results keep its key, which ties the row to its payment)
    if (s.phase === 'created' || (s.phase === 'rejected' && !row.payout)) row.reference = s.ref;
    if (['initiating', 'unknown', 'created'].includes(s.phase) && !out.resend.has(s.ref)) settling.add(r.rowNumber);
    // an edited reference cannot turn an unknown outcome, nor a refused key not proven spent (I3), into a second payout
    if (row.payout && s.ref !== row.payout.reference) row.payout = { ...row.payout, reference: s.ref };
    // an unsettled row edited into an invalid one is still settled with its journalled body
    if (!row.payout && unsettled(s)) {
      const first = original(s.ref)?.payout;
      if (!first)
        throw new BatchRefused(
          `${o.resultsFile} row ${r.rowNumber}: ${firstError(row.problems)?.message ?? 'not valid'}; but ${s.ref} was sent ` +
            `(key ${s.key}) and its outcome is unknown: it may be paid. Nothing was sent. Fix the row so that it is settled with its journalled key first.`,
          'unsettled-row-invalid',
        );
      row = { ...row, payout: { ...first, rowNumber: row.rowNumber }, problems: [] };
      out.asFirstSent.add(r.rowNumber);
    }
    return row;
  };

  // (spilled as made, not held: a retry holds neither its results table nor a second copy of the batch)
  const rows = spillRows(listView(table.rows.length, (i) => retryRow(table.rows.at(i)!, i)));
  checkAcrossRows(rows, out.only, settling, o.resultsFile);
  const batch: LoadedBatch = {
    file: header.file,
    format: table.format,
    delimiter: table.delimiter,
    inputColumns: table.inputColumns,
    rows,
    fileProblems: [],
    identity: { batchId: header.batchId, source: header.batchIdSource, label: header.batchLabel, fileSha256: header.fileSha256 },
    documents: docs.fingerprints,
  };
  return { ...out, batch };
}

/**
 * Each results row's latest state, by the row's place in `rows` (read twice, a row at a time): by its
 * key cell (spec §4.2), else its payoutId cell (now or replaced), else its reference; never its line
 * number. A state goes to one row at most, so a repeated reference never takes another's payout;
 * one that several journals name matches only by key or id.
 */
export function ledgerStates(
  folds: Iterable<FoldedJournal>,
  rows: Iterable<ResultRow>,
  referenceOf: (r: ResultRow) => string | undefined,
): Map<number, RowState> {
  const byKey = new Map<string, RowState>();
  const byPayout = new Map<string, RowState>();
  const byRef = new Map<string, RowState | null>();
  for (const folded of folds)
    for (const s of folded.rows.values()) {
      if (s.phase === 'none') continue;
      if (s.key) byKey.set(s.key, s);
      // (an older copy of the results names an earlier attempt's key: the same payment, whatever its reference says now)
      for (let a = 1; a < s.attempt; a++) byKey.set(idempotencyKey(s.ref, a), s);
      for (const p of [s.payout, ...(s.earlier ?? [])]) if (p) byPayout.set(p.id, s);
      byRef.set(s.ref, byRef.has(s.ref) ? null : s);
    }
  const out = new Map<number, RowState>();
  const claimed = new Set<RowState>();
  const claim = (i: number, s: RowState | null | undefined) => {
    if (!s || claimed.has(s)) return;
    claimed.add(s);
    out.set(i, s);
  };
  const strong = (r: ResultRow) =>
    (r.result.idempotencyKey ? byKey.get(r.result.idempotencyKey) : undefined) ??
    (r.result.payoutId ? byPayout.get(r.result.payoutId) : undefined);
  // (a copied row keeps its original's key and payout id: the row naming the journal's reference has them first; last, by reference)
  for (const pass of ['own', 'strong', 'reference'] as const) {
    let i = 0;
    for (const r of rows) {
      const ref = referenceOf(r);
      const s = pass !== 'reference' ? strong(r) : !out.has(i) && ref ? byRef.get(ref) : undefined;
      if (pass !== 'own' || s?.ref === ref) claim(i, s);
      i++;
    }
  }
  return out;
}

/** The references the rows name (read a row at a time), for refuseRowApart. */
export function namedReferences(rows: Iterable<ResultRow>, refHeader: string | undefined): Set<string> {
  const out = new Set<string>();
  for (const r of rows) {
    const ref = refHeader && r.cells[refHeader]?.trim();
    if (ref) out.add(ref);
  }
  return out;
}

/**
 * A row whose reference names a payment of its batch other than the one its key or payout id name (`s`): refused. Told by
 * the journal and the results file, batch file or not: a reference the journal sent, or `s`'s own reference on another
 * row (`named`: every row's; a row the run found invalid was never sent). `inBatch`: a reference of the batch file as it ran.
 */
export function refuseRowApart(
  file: string,
  r: ResultRow,
  refHeader: string | undefined,
  s: RowState | undefined,
  folds: FoldedJournal[],
  named: ReadonlySet<string>,
  inBatch?: (ref: string) => boolean,
): void {
  const ref = refHeader ? r.cells[refHeader]?.trim() : undefined;
  const batch = s && folds.find((f) => f.rows.get(s.ref) === s);
  if (s && ref && ref !== s.ref && (named.has(s.ref) || (batch?.rows.get(ref)?.phase ?? 'none') !== 'none' || inBatch?.(ref)))
    throw new BatchRefused(
      `${file} row ${r.rowNumber}: its reference ${ref} and its key or payout id (those of ${s.ref}) name two payments ` +
        'of this batch: its result columns were moved apart from its cells (some columns sorted alone?). Nothing was sent ' +
        'nor written. Put each row back together.',
      'row-names-two-payments',
    );
}

/** An unsettled row no results row names cannot be told from a new payment: refused, nothing sent. */
function refuseUnnamedUnsettled(folded: FoldedJournal, matched: Map<number, RowState>, file: string): void {
  const named = new Set([...matched.values()].map((s) => s.ref));
  const lost = [...folded.rows.values()].filter((s) => unsettled(s) && !named.has(s.ref));
  if (!lost.length) return;
  throw new BatchRefused(
    `${file}: no row names ${lost.map((s) => `${s.ref} (key ${s.key})`).join(', ')}, whose outcome is unknown: ` +
      'its reference and key were edited, cleared or deleted. Nothing was sent. Put the reference or the key back ' +
      'so that it is settled with its journalled key first.',
    'unsettled-row-not-named',
  );
}

/** The batch file (its documents' folder): where it ran, else beside the results file (a watch moves the claim folder). */
function batchFileNow(file: string, resultsFile: string): string {
  if (existsSync(file)) return file;
  const beside = join(dirname(resultsFile), basename(file));
  return existsSync(beside) ? beside : file;
}

/**
 * A batch file's text as a spreadsheet saves it: a number's digits (no leading zeros, 15 significant, cut or rounded), else
 * in Windows-1252 or Mac Roman ("?" for the characters it lacks), read back as the reader does such a file (Windows-1252).
 */
const asSpreadsheetSaved = (v: string): string[] => {
  const n = v.replace(/^0+/, '');
  if (/^[1-9]\d*$/.test(n)) return [n.slice(0, 15).padEnd(n.length, '0'), String(Number(Number(n).toPrecision(15)))];
  return ['windows-1252', 'macintosh'].map((e) => iconv.decode(iconv.encode(v, e), 'windows-1252'));
};

/** A beneficiary field of the batch file, in the results file as a spreadsheet saved it (leading zeros, digits past the 15th or characters lost). */
function spreadsheetLost(before: object, now: PayoutRow, ctx: Pick<RowContext, 'file' | 'fields'>): Problem[] {
  const after = now.beneficiary as Record<string, unknown>;
  const fields: Partial<Record<string, string>> = ctx.fields;
  return Object.entries(before).flatMap(([f, v]) => {
    const a = after[f];
    if (typeof v !== 'string' || a === v || typeof a !== 'string' || !asSpreadsheetSaved(v).includes(a)) return [];
    const zeros = v.length - v.replace(/^0+/, '').length;
    const long = v.length - zeros > 15;
    const digits = /^\d+$/.test(v);
    const code = !digits ? 'ENCODING' : long ? 'EXCEL_DIGITS_LOST' : 'EXCEL_LEADING_ZEROS_LOST';
    const lost = !digits ? 'characters' : long ? 'the digits after the 15th' : `the ${zeros} leading zeros`;
    const how = digits ? 'read it as a number' : 'saved it in another encoding than UTF-8 (Windows-1252 or Mac Roman)';
    const expected = `the ${digits ? 'digits' : 'text'} as in the batch file (${digits ? 'keep the column as text when saving' : 'saved as CSV UTF-8'})`;
    const value = digits ? maskAccount(a) : a;
    const message = `${f} lost ${lost} the batch file gives it: the file was saved by a spreadsheet that ${how}`;
    return [{ severity: 'error' as const, code, file: ctx.file, row: now.rowNumber, column: fields[f] ?? f, value, message, expected }];
  });
}

/** A row the run refused for a workbook number of more than 15 digits, still showing the 15 Excel kept (then zeros): never sent so. */
function digitsStillLost(now: PayoutRow, ctx: Pick<RowContext, 'file' | 'fields'>): Problem[] {
  const fields: Partial<Record<string, string>> = ctx.fields;
  return Object.entries(now.beneficiary as Record<string, unknown>).flatMap(([f, v]) => {
    if (typeof v !== 'string' || !/^[1-9]\d{14}0+$/.test(v)) return [];
    const message = `${f} still holds the 15 digits Excel kept of a longer number, which the run refused: the digits after them were lost`;
    const expected = 'the digits typed again as text (if these are its true digits, clear the errorCode cell)';
    const code = 'EXCEL_DIGITS_LOST';
    const value = maskAccount(v);
    return [{ severity: 'error' as const, code, file: ctx.file, row: now.rowNumber, column: fields[f] ?? f, value, message, expected }];
  });
}

/** The original file's rows by reference (read back from its spill), when unchanged: an unedited row keeps its verdict. */
async function originalRows(header: BatchHeader, refHeader: string | undefined): Promise<(ref: string) => EngineRow | undefined> {
  try {
    if ((await fileSha256(header.file)) === header.fileSha256)
      return rowLookup(
        (await loadBatch(header.file, { sheet: header.sheet, encoding: header.encoding })).rows,
        (r) => (r.payout?.reference ?? (refHeader ? r.cells[refHeader] : undefined)) || undefined,
      );
  } catch {
    // moved, changed or unreadable: every row is validated again from its cells
  }
  return () => undefined;
}

/**
 * A row to send repeats no reference nor another row's probable-duplicate key; a settling row goes regardless, and holds
 * its reference even when its cells are no longer valid (another row of that reference, its copy, is the same payment).
 */
function checkAcrossRows(rows: SpillList<EngineRow>, only: Set<number>, settling: Set<number>, file: string): void {
  const refs = new Map<string, number>();
  const dupKeys = new Map<string, number>();
  const take = (row: EngineRow) => {
    refs.set(referenceOf(row)!, row.rowNumber);
    if (row.payout) dupKeys.set(probableDuplicateKey(row.payout), row.rowNumber);
  };
  for (const row of rows) if (settling.has(row.rowNumber) ? referenceOf(row) : row.payout && !only.has(row.rowNumber)) take(row);
  rows.forEach((row, i) => {
    if (!row.payout || !only.has(row.rowNumber) || settling.has(row.rowNumber)) return;
    const sameRef = refs.get(row.payout.reference);
    const sameRow = dupKeys.get(probableDuplicateKey(row.payout));
    const refuse = (code: 'DUPLICATE_REFERENCE' | 'PROBABLE_DUPLICATE', message: string) => {
      row.problems = [...row.problems, { severity: 'error', code, file, row: row.rowNumber, message }];
      row.payout = undefined;
      rows.set(i, row);
    };
    if (sameRef !== undefined) refuse('DUPLICATE_REFERENCE', `the reference is already used on row ${sameRef}`);
    else if (sameRow !== undefined)
      refuse('PROBABLE_DUPLICATE', `same beneficiary account, amount and currency as row ${sameRow}: a probable duplicate`);
    else take(row);
  });
}

/** Failed after creation and its refund journalled: `--resend-failed` may send it again. */
const resendable = (s: RowState): boolean =>
  s.phase === 'created' && !!s.payout && isFailedAfterCreation(s.payout.status) && s.payout.refunded !== undefined;

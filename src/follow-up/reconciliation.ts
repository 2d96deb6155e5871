// `reconcile RESULTS` (spec §2 Wallet transaction, §4.3, §4.15): the results and the ledger read,
// then fetch (reconcile-fetch.ts), tie out (tie-out.ts) and write the files beside the results:
// `<results name>.reconciliation.csv` (.xlsx beside an .xlsx) and `.reconciliation.json`, read back by the results report.
import { stringify } from 'csv-stringify/sync';
import type * as XLSX from 'xlsx';
import type { RunKind } from '../engine/pipeline.ts';
import { SENT_ELSEWHERE } from '../engine/batch-plan.ts';
import type { UsageReport } from '../client/quota.ts';
import { foldAll, type Ledger } from '../ledger/account-ledger.ts';
import { parseEarlierPayouts, reconciliationPathFor, type TieOutSummary } from '../engine/money-totals.ts';
import { writeFileAtomic } from '../files/atomic.ts';
import { ENGINE_STATUSES, outcomeFromState, resultValues } from '../engine/outcome.ts';
import { ledgerStates, namedReferences, refuseRowApart } from '../engine/retry-batch.ts';
import type { FoldedJournal } from '../journal/lines.ts';
import { ResultsError } from '../results/results-errors.ts';
import { newestResults } from '../results/paths.ts';
import { neutralise } from '../input/neutralise.ts';
import { numberCell } from '../results/numbers.ts';
import { textCell } from '../results/xlsx-writer.ts';
import { batchColumns, readResults } from '../results/read.ts';
import type { ResultRow, ResultValues, ResultsFormat, ResultsTable } from '../results/types.ts';
import { fetchPayoutStates, fetchTransactions, Halted, requestsTotal } from './reconcile-fetch.ts';
import type { FetchOptions, Listing, RequestCounts } from './reconcile-fetch.ts';
import { batchSwapsOf, refreshSwaps } from './swap-views.ts';
import { swapReferences } from '../engine/swap.ts';
import { PROBLEM_CODES } from '../validation/problems.ts';
import { writeStatement } from './statement.ts';
import { utcTime, zonedTime } from '../text.ts';
import { periodEnd, tieOut, type LedgerBatch, type ReconRow, type ReconSwap, type TieOutReport } from './tie-out.ts';
import type { ForeignTransaction, PayoutReconciliation, RowReconciliation } from './tie-out.ts';

interface ReconcileOptions extends FetchOptions {
  resultsFile: string;
  since?: string;
  until?: string;
  /** Each row's latest state, and the batches that explain other debits. */
  ledgers?: Ledger[];
  /** `--statement FILE`: the camt.053 statement of the batch's wallets for the period. */
  statement?: string;
  /** Called once before the first request. */
  onPlan?: (p: { payouts: number; usage?: UsageReport }) => void;
}

export interface ReconcileResult {
  kind: Extract<RunKind, 'ok' | 'rows-failed' | 'halted'>;
  report?: TieOutReport;
  reconciliationPath?: string;
  requests: RequestCounts;
  listing: Listing;
  usage?: UsageReport;
  halted?: string;
  statement?: { path: string; statements: number; entries: number };
  /** Rows sent again since this file was written (reconciled as now), and the latest `retry` output. */
  superseded?: { rows: number[]; latest?: string };
}

function reconRowsOf(table: ResultsTable, latest: ReadonlyMap<ResultRow, ResultValues>): ReconRow[] {
  const { reference = 'reference', sourceCurrency = 'sourceCurrency', sourceAmount = 'sourceAmount' } = batchColumns(table);
  return table.rows.map((r) => {
    const v = latest.get(r) ?? r.result;
    const earlier = parseEarlierPayouts(v.earlierPayouts);
    return {
      rowNumber: r.rowNumber,
      reference: r.cells[reference]?.trim() || undefined,
      status: v.status,
      // (a row already paid by another batch: that batch's payout and money, never this one's)
      payoutId: (v.status !== ENGINE_STATUSES.ALREADY_PAID && v.payoutId) || undefined,
      payoutRef: v.payoutRef || undefined,
      currency: r.cells[sourceCurrency]?.trim().toUpperCase() || undefined,
      totalDeductible: v.totalDeductible,
      amount: r.cells[sourceAmount],
      ...(earlier.payouts.length ? { earlier: earlier.payouts } : {}),
      ...(earlier.problem ? { problems: [earlier.problem] } : {}),
    };
  });
}

/** The rows sent again since this file was written, as now; every batch's payouts (they explain debits). */
async function readLedgers(ledgers: readonly Ledger[], table: ResultsTable, file: string) {
  const folds = (await foldAll(ledgers)).map((b) => b.folded);
  const reference = batchColumns(table, file).reference;
  const states = ledgerStates(folds, table.rows, (r) => (reference ? r.cells[reference]?.trim() : undefined));
  const latest = new Map<ResultRow, ResultValues>();
  const named = namedReferences(table.rows, reference);
  for (const [i, s] of states) {
    const row = table.rows[i]!;
    refuseRowApart(file, row, reference, s, folds, named);
    const elsewhere = SENT_ELSEWHERE.has(row.result.errorCode ?? ''); // (another batch's payout of its reference)
    if (s.phase === 'created' && s.payout && s.payout.id !== row.result.payoutId && !elsewhere)
      latest.set(row, resultValues(outcomeFromState(s, { status: row.result.status ?? '', documents: [] })));
  }
  return { latest, ledgerBatches: folds.flatMap(ledgerBatchOf) };
}

function ledgerBatchOf(f: FoldedJournal): LedgerBatch[] {
  const payouts = [...f.rows.values()].flatMap((s) => [...(s.payout ? [s.payout] : []), ...(s.earlier ?? [])]);
  if (!f.header || !payouts.length) return [];
  return [
    {
      name: `batch ${f.header.batchId.slice(0, 16)} (${f.header.file})`,
      payoutRefs: payouts.flatMap((p) => (p.payoutRef ? [p.payoutRef] : [])),
      payoutIds: payouts.map((p) => p.id),
    },
  ];
}

/** The newest `x.results.retry-N` beside this results file (CSV or workbook), when later than it. */
function laterResults(resultsFile: string): string | undefined {
  const newest = newestResults(resultsFile);
  return newest === resultsFile ? undefined : newest;
}

function checkPeriod(o: ReconcileOptions): void {
  const refuse = (why: string) => new ResultsError('UNREADABLE', o.resultsFile, why);
  for (const [flag, v] of Object.entries({ '--since': o.since, '--until': o.until }))
    if (v !== undefined && zonedTime(v) === undefined)
      throw refuse(
        `${flag} ${v}: not a date (ISO 8601 with its zone, e.g. 2025-01-31 or 2025-01-31T23:59:59Z: without one, each host would read its own).`,
      );
  const [from, to] = [zonedTime(o.since), periodEnd(o.until)];
  if (from !== undefined && to !== undefined && from > to)
    throw refuse(`--since ${o.since} is after --until ${o.until}: the period holds nothing; give a --since before the --until.`);
}

/** Spec §4.7: per currency of the rows, and those the journal holds, as the service has them now; none without the batch's journal. */
async function batchSwaps(o: ReconcileOptions, table: ResultsTable, rows: readonly ReconRow[], requests: RequestCounts) {
  const batch = await batchSwapsOf(table.rows, o.resultsFile, o.ledgers ?? []);
  if (!batch) return [];
  const { halted } = await refreshSwaps(o, batch, requests);
  if (halted) throw new Halted(halted);
  const swaps = new Map<string, ReconSwap>();
  // (as the plan names it: not by the rows offline validation found invalid, which are no payment of the batch)
  const offline = ({ status, errorCode = '' }: ResultValues) =>
    status === ENGINE_STATUSES.INVALID && Object.hasOwn(PROBLEM_CODES, errorCode);
  const paid = rows.flatMap((r, i) =>
    r.currency && r.reference && !offline(table.rows[i]!.result) ? [{ currency: r.currency, reference: r.reference }] : [],
  );
  const referenceOf = swapReferences(paid);
  for (const c of new Set(paid.map((r) => r.currency))) swaps.set(c, { currency: c, reference: referenceOf(c) });
  for (const s of batch.swaps.values()) swaps.set(s.currency, s);
  return [...swaps.values()];
}

export async function reconcile(o: ReconcileOptions): Promise<ReconcileResult> {
  const table = await readResults(o.resultsFile);
  checkPeriod(o);
  const { latest, ledgerBatches } = await readLedgers(o.ledgers ?? [], table, o.resultsFile);
  const rows = reconRowsOf(table, latest);
  const superseded = latest.size ? { rows: [...latest.keys()].map((r) => r.rowNumber), latest: laterResults(o.resultsFile) } : undefined;
  // those rows replaced too: their creation dates the oldest debit the transactions are read down to
  const ids = [...new Set(rows.flatMap((r) => [r.payoutId, ...(r.earlier ?? []).map((e) => e.payoutId)].flatMap((id) => id ?? [])))];
  const usage = () => o.client.quotaUsage().catch(() => undefined);
  o.onPlan?.({ payouts: ids.length, usage: await usage() });

  const requests: RequestCounts = { payoutPages: 0, getPayout: 0, transactionPages: 0, total: 0 };
  const listing: Listing = { pages: 0, transactions: 0, ended: 'end' };
  try {
    const swaps = await batchSwaps(o, table, rows, requests);
    const payouts = await fetchPayoutStates(ids, o, requests);
    // down to the oldest of the period's start, the batch's first payout and its swaps: --since never hides the batch's own
    const created = [...payouts.values(), ...swaps.flatMap((w) => w.swap ?? []), { createdAt: o.since }].flatMap(
      (p) => utcTime(p.createdAt) ?? [],
    );
    const stopBelow = created.length ? created.reduce((x, y) => Math.min(x, y)) : undefined;
    const transactions = await fetchTransactions({ ...o, stopBelow }, requests, listing);
    requests.total = requestsTotal(requests);
    const report = tieOut({ rows, transactions, payouts, since: o.since, until: o.until, ledgerBatches, swaps });
    // a listing cut short (the spec promises no paging) proves neither a statement of the period nor a tie-out
    const cut = listing.ended === 'repeated page';
    if (cut) {
      report.problems.push(
        'the transactions route gave the same page twice (it may ignore page): the listing is incomplete, so no statement was written',
      );
      report.ok = false;
    }
    const reconciliationPath = await writeReconciliation(o.resultsFile, table.format, report);
    const tied = table.rows.map((r) => ({ ...r, result: latest.get(r) ?? r.result })); // (a later payout the ledger knows)
    const statement = o.statement &&
      !cut && {
        path: o.statement,
        ...(await writeStatement(o.statement, { table: { ...table, rows: tied }, transactions, swaps, period: report.period })),
      };
    return {
      kind: report.ok ? 'ok' : 'rows-failed',
      report,
      reconciliationPath,
      requests,
      listing,
      usage: await usage(),
      superseded,
      ...(statement ? { statement } : {}),
    };
  } catch (e) {
    if (!(e instanceof Halted)) throw e;
    requests.total = requestsTotal(requests);
    return { kind: 'halted', requests, listing, halted: e.message, usage: await usage(), superseded };
  }
}

const RECONCILIATION_COLUMNS = [
  'kind',
  'row',
  'reference',
  'payoutId',
  'payoutRef',
  'status',
  'currency',
  'walletId',
  'totalDeductible',
  'debit',
  'refund',
  'net',
  'transactionIds',
  'createdAt',
  'tiesOut',
  'problem',
  'explainedBy',
] as const;
type ReconColumn = (typeof RECONCILIATION_COLUMNS)[number];
const MONEY_COLUMNS = new Set<ReconColumn>(['totalDeductible', 'debit', 'refund', 'net']);

/**
 * Each row followed by the payouts it replaced (so the money columns add up to the totals), a line
 * per swap leg, the unexplained debits, those explained elsewhere, then the other credits.
 */
export function reconciliationLines(report: TieOutReport): Partial<Record<ReconColumn, string>>[] {
  const line = (kind: string, r: RowReconciliation, p: RowReconciliation | PayoutReconciliation, walletId?: string) => ({
    kind,
    row: String(r.rowNumber),
    reference: r.reference,
    payoutId: p.payoutId,
    payoutRef: p.payoutRef,
    status: p.status,
    currency: r.currency,
    walletId,
    totalDeductible: p.expected,
    debit: p.debit,
    refund: p.refund,
    net: p.net,
    transactionIds: p.transactionIds.join('; '),
    tiesOut: p.ok ? 'yes' : 'NO',
    problem: p.problems.join('; '),
  });
  const lines: Partial<Record<ReconColumn, string>>[] = report.rows.flatMap((r) => [
    line(r.created ? 'row' : 'row (not created)', r, r, r.walletId),
    ...r.earlier.map((e) => line('earlier payout (sent again)', r, e)),
  ]);
  const tx = (kind: string, problem?: string) => (f: ForeignTransaction) => ({
    kind,
    reference: f.reference,
    currency: f.currency,
    walletId: f.walletId,
    debit: f.type === 'DEBIT' ? f.amount : undefined,
    refund: f.type === 'CREDIT' ? f.amount : undefined,
    net: f.amount,
    transactionIds: f.id,
    createdAt: f.createdAt,
    tiesOut: problem ? 'NO' : '',
    problem,
    explainedBy: f.explainedBy,
  });
  // spec §6: a swap emits a debit and a credit
  for (const w of report.swaps) {
    const swap = {
      reference: w.reference,
      payoutId: w.id,
      payoutRef: w.reference,
      status: w.status,
      transactionIds: w.transactionIds.join('; '),
      tiesOut: w.ok ? 'yes' : 'NO',
      problem: w.problems.join('; '),
    };
    lines.push(
      { kind: 'swap debit', ...swap, currency: w.sourceCurrency, debit: w.debit, net: w.debit },
      { kind: 'swap credit', ...swap, currency: w.destinationCurrency, net: w.credit },
    );
  }
  // (concat, not a spread: an account's transactions may pass what a call takes as arguments)
  return lines.concat(
    report.unexplained.map(tx('unexplained debit', 'no row, batch of this account or swap explains it')),
    report.explained.map(tx('debit explained elsewhere')),
    report.otherCredits.map(tx('other credit')),
  );
}

/** Amounts are numbers in a money format, text as the results workbook writes it (textCell). */
export function reconciliationCell(column: ReconColumn, value: string | undefined): XLSX.CellObject | undefined {
  return (MONEY_COLUMNS.has(column) && numberCell(value ?? '', true)) || textCell(value ?? '');
}

/** Amounts never quoted (no comma in them); a space at either end quoted. */
function csvBytes(lines: ReturnType<typeof reconciliationLines>): string {
  const records = lines.map((l) => RECONCILIATION_COLUMNS.map((c) => (MONEY_COLUMNS.has(c) ? (l[c] ?? '') : neutralise(l[c] ?? ''))));
  return stringify([[...RECONCILIATION_COLUMNS], ...records], { bom: true, record_delimiter: 'windows', quoted_match: /^ | $|[\r\n]/ });
}

export async function reconciliationWorkbook(lines: ReturnType<typeof reconciliationLines>): Promise<Uint8Array> {
  const { utils, write } = await import('xlsx');
  const data: (XLSX.CellObject | undefined)[][] = [RECONCILIATION_COLUMNS.map((h) => ({ t: 's', v: h }))];
  for (const l of lines) data.push(RECONCILIATION_COLUMNS.map((c) => reconciliationCell(c, l[c])));
  const ws = {
    '!data': data as XLSX.CellObject[][],
    '!ref': utils.encode_range({ s: { r: 0, c: 0 }, e: { r: lines.length, c: RECONCILIATION_COLUMNS.length - 1 } }),
  } as XLSX.WorkSheet;
  const wb = utils.book_new();
  utils.book_append_sheet(wb, ws, 'Reconciliation');
  return write(wb, { type: 'buffer', bookType: 'xlsx', bookSST: true, compression: true }) as Uint8Array;
}

async function writeOne(path: string, bytes: string | Uint8Array): Promise<void> {
  try {
    await writeFileAtomic(path, [bytes]);
  } catch (e) {
    throw new ResultsError('WRITE_FAILED', path, `${path}: cannot write the reconciliation file (${(e as Error).message}).`, { cause: e });
  }
}

/** Returns the CSV or XLSX file's path. */
async function writeReconciliation(resultsFile: string, format: ResultsFormat, report: TieOutReport): Promise<string> {
  const path = reconciliationPathFor(resultsFile, format);
  const lines = reconciliationLines(report);
  await writeOne(path, format === 'csv' ? csvBytes(lines) : await reconciliationWorkbook(lines));
  const summary: TieOutSummary & TieOutReport = { ...report, file: path };
  await writeOne(reconciliationPathFor(resultsFile, 'json'), JSON.stringify(summary, null, 2) + '\n');
  return path;
}

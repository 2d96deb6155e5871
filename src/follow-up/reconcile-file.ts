// The files of `reconcile`, beside the results: `<results name>.reconciliation.csv` (.xlsx beside
// an .xlsx) and `<results name>.reconciliation.json`, the tie-out the results report reads back.
import { stringify } from 'csv-stringify/sync';
import * as XLSX from 'xlsx';
import { reconciliationPathFor, type TieOutSummary } from '../engine/money-totals.ts';
import { writeFileAtomic } from '../files/atomic.ts';
import { ResultsError } from '../results/results-errors.ts';
import { neutralise } from '../results/neutralise.ts';
import { numberCell } from '../results/numbers.ts';
import type { ResultsFormat } from '../results/paths.ts';
import type { ForeignTransaction, PayoutReconciliation, RowReconciliation, TieOutReport } from './tie-out.ts';

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
  const line = (kind: string, r: RowReconciliation, p: PayoutReconciliation, walletId?: string) => ({
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
  lines.push(...report.unexplained.map(tx('unexplained debit', 'no row, batch of this account or swap explains it')));
  lines.push(...report.explained.map(tx('debit explained elsewhere')));
  lines.push(...report.otherCredits.map(tx('other credit')));
  return lines;
}

/** Amounts are numbers in a money format, as in the results workbook; text is neutralised. */
export function reconciliationCell(column: ReconColumn, value: string | undefined): XLSX.CellObject | undefined {
  if (value === undefined || value === '') return undefined;
  return (MONEY_COLUMNS.has(column) && numberCell(value, true)) || { t: 's', v: neutralise(value) };
}

/** Amounts never quoted (no comma in them); a space at either end quoted. */
function csvBytes(lines: ReturnType<typeof reconciliationLines>): string {
  const records = lines.map((l) => RECONCILIATION_COLUMNS.map((c) => (MONEY_COLUMNS.has(c) ? (l[c] ?? '') : neutralise(l[c] ?? ''))));
  return stringify([[...RECONCILIATION_COLUMNS], ...records], { bom: true, record_delimiter: 'windows', quoted_match: /^ | $|[\r\n]/ });
}

function xlsxBytes(lines: ReturnType<typeof reconciliationLines>): Uint8Array {
  const data: (XLSX.CellObject | undefined)[][] = [RECONCILIATION_COLUMNS.map((h) => ({ t: 's', v: h }))];
  for (const l of lines) data.push(RECONCILIATION_COLUMNS.map((c) => reconciliationCell(c, l[c])));
  const ws = {
    '!data': data as XLSX.CellObject[][],
    '!ref': XLSX.utils.encode_range({ s: { r: 0, c: 0 }, e: { r: lines.length, c: RECONCILIATION_COLUMNS.length - 1 } }),
  } as XLSX.WorkSheet;
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, ws, 'Reconciliation');
  return XLSX.write(wb, { type: 'buffer', bookType: 'xlsx', compression: true }) as Uint8Array;
}

async function writeOne(path: string, bytes: string | Uint8Array): Promise<void> {
  try {
    await writeFileAtomic(path, [bytes]);
  } catch (e) {
    throw new ResultsError('WRITE_FAILED', path, `${path}: cannot write the reconciliation file (${(e as Error).message}).`, { cause: e });
  }
}

/** Returns the CSV or XLSX file's path. */
export async function writeReconciliation(resultsFile: string, format: ResultsFormat, report: TieOutReport): Promise<string> {
  const path = reconciliationPathFor(resultsFile, format);
  const lines = reconciliationLines(report);
  await writeOne(path, format === 'csv' ? csvBytes(lines) : xlsxBytes(lines));
  const summary: TieOutSummary & TieOutReport = { ...report, file: path };
  await writeOne(reconciliationPathFor(resultsFile, 'json'), JSON.stringify(summary, null, 2) + '\n');
  return path;
}

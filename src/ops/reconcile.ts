// `reconcile RESULTS`: ties a results file to the service's wallet transactions (spec §2 Wallet
// transaction, §4.15) and its payouts' current status (§4.3). Three parts, one file each:
//
// - tie-out.ts: pure. Rows + transactions (in listing order) + payout states -> a report.
// - reconcile-fetch.ts: the requests. Each created payout's status, the transaction listing.
// - reconcile-file.ts: `<results name>.reconciliation.csv` (or .xlsx) and `.json` beside the results.
//
// This step reads the results, fetches, ties out and writes. It returns values; never prints.
import type { Logger } from 'pino';
import type { PayoutClient } from '../client/client.ts';
import type { UsageReport } from '../client/quota.ts';
import { parseEarlierPayouts } from '../engine/money-totals.ts';
import { ResultsError } from '../results/errors.ts';
import { readResults } from '../results/read.ts';
import type { ResultsTable } from '../results/types.ts';
import { fetchPayoutStates, fetchTransactions, Halted, type Listing, type RequestCounts } from './reconcile-fetch.ts';
import { writeReconciliation } from './reconcile-file.ts';
import { tieOut, timeOf, type ReconRow, type TieOutReport } from './tie-out.ts';

export interface ReconcileOptions {
  client: PayoutClient;
  resultsFile: string;
  since?: string;
  until?: string;
  logger?: Logger;
  stop?: AbortSignal;
  /** Called once before the first request: payouts to ask about and the key's usage as counted here. */
  onPlan?: (p: { payouts: number; usage?: UsageReport }) => void;
}

export interface ReconcileResult {
  /** 0 ties out, 1 does not, 4 the service could not be used (what was read is not a reconciliation). */
  exitCode: 0 | 1 | 4;
  report?: TieOutReport;
  reconciliationPath?: string;
  requests: RequestCounts;
  listing: Listing;
  usage?: UsageReport;
  halted?: string;
}

/** A results file's rows, as far as money goes; a cell that cannot be read is a problem of its row. */
function reconRowsOf(table: ResultsTable): ReconRow[] {
  return table.rows.map((r) => {
    const earlier = parseEarlierPayouts(r.result.earlierPayouts);
    return {
      rowNumber: r.rowNumber,
      reference: r.cells.reference || undefined,
      status: r.result.status,
      payoutId: r.result.payoutId || undefined,
      payoutRef: r.result.payoutRef || undefined,
      currency: r.cells.sourceCurrency?.toUpperCase() || undefined,
      totalDeductible: r.result.totalDeductible,
      ...(earlier.payouts.length ? { earlier: earlier.payouts } : {}),
      ...(earlier.problem ? { problems: [earlier.problem] } : {}),
    };
  });
}

function checkPeriod(o: ReconcileOptions): void {
  for (const [flag, v] of Object.entries({ '--since': o.since, '--until': o.until }))
    if (v !== undefined && timeOf(v) === undefined)
      throw new ResultsError(
        'UNREADABLE',
        o.resultsFile,
        `${flag} ${v}: not a date (use ISO 8601, e.g. 2025-01-31 or 2025-01-31T23:59:59Z).`,
      );
}

export async function reconcile(o: ReconcileOptions): Promise<ReconcileResult> {
  const table = await readResults(o.resultsFile);
  checkPeriod(o);
  const rows = reconRowsOf(table);
  const ids = [...new Set(rows.flatMap((r) => (r.payoutId ? [r.payoutId] : [])))];
  const usage = () => o.client.quotaUsage().catch(() => undefined);
  o.onPlan?.({ payouts: ids.length, usage: await usage() });

  const requests: RequestCounts = { payoutPages: 0, getPayout: 0, transactionPages: 0, total: 0 };
  const listing: Listing = { pages: 0, transactions: 0, ended: 'end' };
  try {
    const payouts = await fetchPayoutStates(ids, o, requests);
    const created = [...payouts.values()].flatMap((p) => timeOf(p.createdAt) ?? []);
    const stopBelow = timeOf(o.since) ?? (created.length ? Math.min(...created) : undefined);
    const transactions = await fetchTransactions({ ...o, stopBelow }, requests, listing);
    requests.total = requests.payoutPages + requests.getPayout + requests.transactionPages;
    const report = tieOut({ rows, transactions, payouts, since: o.since, until: o.until });
    const reconciliationPath = await writeReconciliation(o.resultsFile, table.format, report);
    return { exitCode: report.ok ? 0 : 1, report, reconciliationPath, requests, listing, usage: await usage() };
  } catch (e) {
    if (!(e instanceof Halted)) throw e;
    requests.total = requests.payoutPages + requests.getPayout + requests.transactionPages;
    return { exitCode: 4, requests, listing, halted: e.message, usage: await usage() };
  }
}

// `reconcile RESULTS`: ties a results file to the service's wallet transactions (spec §2 Wallet
// transaction, §4.15) and its payouts' current status (§4.3). Two parts:
//
// - tieOut: pure. Rows + transactions (in listing order) + payout states -> a report. Every
//   created row has one debit of its totalDeductible; every FAILED or REJECTED row a refund (a
//   CREDIT referencing it) of that debit; a row sent again (`retry --resend-failed`) also has,
//   for each payout it replaced (the `earlierPayouts` cell), that payout's debit and its refund;
//   every debit of the period that no row explains is listed "not from this batch"; per currency
//   the net movement equals what the results say.
// - reconcile: the I/O step. Reads the results, asks each created payout's status, pages the
//   unfiltered transaction listing (100 a page, newest first, stopping below the period), ties out
//   and writes `<results name>.reconciliation.csv` (or .xlsx) beside the results.
//
// Money is exact (decimal.js, fromApi); amounts leave as decimal strings.
import { basename, dirname, extname, join } from 'node:path';
import type { Logger } from 'pino';
import * as XLSX from 'xlsx';
import type { PayoutClient } from '../client/client.ts';
import type { WalletTransactionAnswer } from '../client/answers.ts';
import { PayoutApiError } from '../client/errors.ts';
import type { UsageReport } from '../client/quota.ts';
import { isServiceTrouble } from '../engine/execute.ts';
import { Dec, fromApi, minorUnits } from '../money.ts';
import { LIST_MAX_LIMIT } from '../spec/codes.ts';
import { writeFileAtomic } from '../files/atomic.ts';
import { ResultsError } from '../results/errors.ts';
import { neutralise } from '../results/neutralise.ts';
import { moneyCell } from '../results/numbers.ts';
import { readResults } from '../results/read.ts';
import type { ResultsFormat } from '../results/paths.ts';

// ---------------------------------------------------------------- the pure tie-out

/** One row of a results file, as far as money goes. */
export interface ReconRow {
  rowNumber: number;
  reference?: string;
  /** The status the results file holds. */
  status?: string;
  payoutId?: string;
  payoutRef?: string;
  /** The row's source currency (the wallet debited). */
  currency?: string;
  /** Amount plus fee, as the results file holds it (exact decimal text). */
  totalDeductible?: string;
  /** Payouts this row replaced: FAILED or REJECTED, refunded, sent again (the `earlierPayouts` cell). */
  earlier?: EarlierPayout[];
}

/** A payout a row replaced, as its `earlierPayouts` cell gives it. */
export interface EarlierPayout {
  payoutId?: string;
  payoutRef?: string;
  status?: string;
  currency?: string;
  /** sourceAmount + fee (exact decimal text); undefined when the cell gave no fee. */
  total?: string;
  /** The refund the run saw (exact decimal text). */
  refunded?: string;
}

/** How one earlier payout of a row ties out: its debit and its refund, net 0. */
export interface EarlierReconciliation {
  payoutId?: string;
  payoutRef?: string;
  status?: string;
  /** Amount plus fee of that payout, when the cell gave both. */
  expected?: string;
  debit: string;
  refund: string;
  net: string;
  transactionIds: string[];
  ok: boolean;
  problems: string[];
}

/** One wallet transaction, normalised: `amount` signed (negative for a debit, spec §2). */
export interface ReconTx {
  id?: string;
  amount: Dec;
  currency?: string;
  walletId?: string;
  reference?: string;
  /** From metadata, when the service puts it there (a second way to tie a movement to a payout). */
  payoutId?: string;
  createdAt?: string;
}

/** A created payout as the service describes it now (get-payout), or why it could not be read. */
export interface PayoutState {
  status?: string;
  sourceCurrency?: string;
  /** sourceAmount + transactionFees, when both were given. */
  total?: Dec;
  createdAt?: string;
  /** The service answered with an error for this payout (404 PAYOUT_NOT_FOUND...). */
  error?: string;
}

export interface RowReconciliation {
  rowNumber: number;
  reference?: string;
  payoutId?: string;
  payoutRef?: string;
  /** The payout's status now (the service's when it was read, else the results file's). */
  status?: string;
  currency?: string;
  /** The wallet the row's movements were in (the first one seen). */
  walletId?: string;
  created: boolean;
  /** What the results say was debited (totalDeductible), as a positive decimal string. */
  expected?: string;
  /** Sum of the debits referencing the row (negative), "0" when none. */
  debit: string;
  /** Sum of the credits referencing the row (positive), "0" when none. */
  refund: string;
  /** debit + refund. */
  net: string;
  transactionIds: string[];
  /** The payouts this row replaced (sent again after a refund), each with its debit and refund. */
  earlier: EarlierReconciliation[];
  /** True when the row and every payout it replaced tie out. */
  ok: boolean;
  problems: string[];
}

export interface ForeignTransaction {
  id?: string;
  type: 'DEBIT' | 'CREDIT';
  amount: string;
  currency?: string;
  walletId?: string;
  reference?: string;
  createdAt?: string;
}

export interface CurrencyTotals {
  currency: string;
  walletIds: string[];
  /** Sum of the batch's debits (negative). */
  debited: string;
  /** Sum of the batch's refunds (positive). */
  refunded: string;
  net: string;
  /** What the results and the statuses say the net should be: -(totalDeductible of the rows not failed). */
  expectedNet: string;
  ok: boolean;
}

export interface TieOutReport {
  ok: boolean;
  rows: RowReconciliation[];
  /** Debits of the period that no row explains: "not from this batch". Any of them fails the tie-out. */
  notFromBatch: ForeignTransaction[];
  /** Credits of the period that no row explains (top-ups...): listed, not a failure. */
  otherCredits: ForeignTransaction[];
  totals: CurrencyTotals[];
  /** The period judged for unexplained debits; `by` says how a transaction was placed in it. */
  period: { from?: string; to?: string; by: 'dates' | 'listing order' | 'none' };
  /** One line per thing that does not tie out. */
  problems: string[];
  counts: { rows: number; created: number; tiedOut: number; failedRefunded: number; earlierRefunded: number; transactions: number };
}

export interface TieOutInput {
  rows: ReconRow[];
  /** In the order the listing gave them (newest first at the sandbox). */
  transactions: ReconTx[];
  payouts: ReadonlyMap<string, PayoutState>;
  /** The period for unexplained debits (ISO 8601); default: from the batch's first movement to its last. */
  since?: string;
  until?: string;
}

const REFUNDED_STATUSES = new Set(['FAILED', 'REJECTED']);
const ZERO = new Dec(0);
const time = (iso: string | undefined): number | undefined => {
  if (iso === undefined) return undefined;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : t;
};
/** Decimal text with the currency's minor units ("-102.10"), never rounded: more decimals than that are kept. */
const money = (d: Dec, currency?: string): string => {
  const v = d.isZero() ? d.abs() : d;
  const units = currency ? minorUnits(currency) : undefined;
  return units !== undefined && v.decimalPlaces() <= units ? v.toFixed(units) : v.toFixed();
};
const decimalOrUndefined = (s: string | undefined): Dec | undefined => {
  if (s === undefined || s.trim() === '') return undefined;
  try {
    return new Dec(s.trim());
  } catch {
    return undefined;
  }
};

/** Which payout of which row a transaction belongs to: slot -1 is the row's current payout, k its k-th earlier one. */
interface Owner {
  row: number;
  slot: number;
}
type Hit = { tx: ReconTx; index: number };

export function tieOut(input: TieOutInput): TieOutReport {
  const byRef = new Map<string, Owner>();
  const byId = new Map<string, Owner>();
  const own = (payoutId: string | undefined, payoutRef: string | undefined, o: Owner) => {
    if (payoutRef && !byRef.has(payoutRef)) byRef.set(payoutRef, o);
    if (payoutId && !byId.has(payoutId)) byId.set(payoutId, o);
  };
  input.rows.forEach((r, i) => {
    if (r.payoutId) own(r.payoutId, r.payoutRef, { row: i, slot: -1 });
    r.earlier?.forEach((e, k) => own(e.payoutId, e.payoutRef, { row: i, slot: k }));
  });
  const matched = new Map<number, Map<number, Hit[]>>();
  const unmatched: Hit[] = [];
  input.transactions.forEach((tx, index) => {
    const o = (tx.reference !== undefined ? byRef.get(tx.reference) : undefined) ?? (tx.payoutId ? byId.get(tx.payoutId) : undefined);
    if (o === undefined) {
      unmatched.push({ tx, index });
      return;
    }
    let slots = matched.get(o.row);
    if (!slots) matched.set(o.row, (slots = new Map<number, Hit[]>()));
    slots.set(o.slot, [...(slots.get(o.slot) ?? []), { tx, index }]);
  });

  const problems: string[] = [];
  const totals = new Map<string, { walletIds: Set<string>; debited: Dec; refunded: Dec; expectedNet: Dec }>();
  const totalsOf = (c: string) => {
    let t = totals.get(c);
    if (!t) totals.set(c, (t = { walletIds: new Set(), debited: ZERO, refunded: ZERO, expectedNet: ZERO }));
    return t;
  };

  const rows = input.rows.map((r, i): RowReconciliation => {
    const mine = matched.get(i)?.get(-1) ?? [];
    const state = r.payoutId ? input.payouts.get(r.payoutId) : undefined;
    const status = state?.status ?? r.status;
    const created = !!r.payoutId;
    const currency = r.currency ?? state?.sourceCurrency ?? mine[0]?.tx.currency;
    const debits = mine.filter((m) => m.tx.amount.isNegative());
    const credits = mine.filter((m) => !m.tx.amount.isNegative());
    const debit = debits.reduce((a, m) => a.plus(m.tx.amount), ZERO);
    const refund = credits.reduce((a, m) => a.plus(m.tx.amount), ZERO);
    const expected = decimalOrUndefined(r.totalDeductible) ?? state?.total;
    const rowProblems: string[] = [];
    if (created) {
      if (state?.error) rowProblems.push(`the service could not give payout ${r.payoutId}: ${state.error}`);
      if (expected === undefined) rowProblems.push('no totalDeductible in the results to check the debit against');
      if (debits.length === 0) rowProblems.push('no debit for this payout in the wallet transactions');
      else if (expected !== undefined && !debit.negated().equals(expected))
        rowProblems.push(`debited ${money(debit.negated(), currency)}, the results say ${money(expected, currency)} (totalDeductible)`);
      if (debits.length > 1) rowProblems.push(`${debits.length} debits reference this payout`);
      for (const m of mine)
        if (currency && m.tx.currency && m.tx.currency !== currency)
          rowProblems.push(`transaction ${m.tx.id ?? '(no id)'} is in ${m.tx.currency}, the row in ${currency}`);
      const refundDue = status !== undefined && REFUNDED_STATUSES.has(status);
      if (refundDue) {
        if (credits.length === 0) rowProblems.push(`${status} but no refund in the wallet transactions yet`);
        else if (!refund.equals(debit.negated()))
          rowProblems.push(`${status}: refunded ${money(refund, currency)} of ${money(debit.negated(), currency)} debited`);
      } else if (credits.length > 0) {
        rowProblems.push(`a credit of ${money(refund, currency)} references this payout, which is ${status ?? 'of unknown status'}`);
      }
      if (currency) {
        const t = totalsOf(currency);
        t.debited = t.debited.plus(debit);
        t.refunded = t.refunded.plus(refund);
        if (!refundDue && expected !== undefined) t.expectedNet = t.expectedNet.minus(expected);
        for (const m of mine) if (m.tx.walletId) t.walletIds.add(m.tx.walletId);
      }
    }
    const earlier = (r.earlier ?? []).map((e, k): EarlierReconciliation => {
      const hits = matched.get(i)?.get(k) ?? [];
      const cur = e.currency ?? currency ?? hits[0]?.tx.currency;
      const eDebits = hits.filter((m) => m.tx.amount.isNegative());
      const eCredits = hits.filter((m) => !m.tx.amount.isNegative());
      const eDebit = eDebits.reduce((a, m) => a.plus(m.tx.amount), ZERO);
      const eRefund = eCredits.reduce((a, m) => a.plus(m.tx.amount), ZERO);
      const eExpected = decimalOrUndefined(e.total);
      const name = `earlier payout ${e.payoutRef ?? e.payoutId ?? `#${k + 1}`} (${e.status ?? 'status unknown'}, sent again)`;
      const ep: string[] = [];
      if (eDebits.length === 0) ep.push(`${name}: no debit in the wallet transactions`);
      else if (eExpected !== undefined && !eDebit.negated().equals(eExpected))
        ep.push(`${name}: debited ${money(eDebit.negated(), cur)}, the results say ${money(eExpected, cur)}`);
      if (eDebits.length > 1) ep.push(`${name}: ${eDebits.length} debits reference it`);
      if (eCredits.length === 0) ep.push(`${name}: no refund in the wallet transactions`);
      else if (!eRefund.equals(eDebit.negated()))
        ep.push(`${name}: refunded ${money(eRefund, cur)} of ${money(eDebit.negated(), cur)} debited`);
      for (const m of hits)
        if (cur && m.tx.currency && m.tx.currency !== cur)
          ep.push(`${name}: transaction ${m.tx.id ?? '(no id)'} is in ${m.tx.currency}, the payout in ${cur}`);
      if (cur) {
        // debited and refunded: nothing of it in the expected net
        const t = totalsOf(cur);
        t.debited = t.debited.plus(eDebit);
        t.refunded = t.refunded.plus(eRefund);
        for (const m of hits) if (m.tx.walletId) t.walletIds.add(m.tx.walletId);
      }
      rowProblems.push(...ep);
      return {
        payoutId: e.payoutId,
        payoutRef: e.payoutRef,
        status: e.status,
        expected: eExpected === undefined ? undefined : money(eExpected, cur),
        debit: money(eDebit, cur),
        refund: money(eRefund, cur),
        net: money(eDebit.plus(eRefund), cur),
        transactionIds: hits.flatMap((m) => (m.tx.id ? [m.tx.id] : [])),
        ok: ep.length === 0,
        problems: ep,
      };
    });
    for (const p of rowProblems) problems.push(`row ${r.rowNumber}${r.reference ? ` ${r.reference}` : ''}: ${p}`);
    return {
      rowNumber: r.rowNumber,
      reference: r.reference,
      payoutId: r.payoutId,
      payoutRef: r.payoutRef,
      status,
      currency,
      walletId: mine.find((m) => m.tx.walletId)?.tx.walletId,
      created,
      expected: expected === undefined ? undefined : money(expected, currency),
      debit: money(debit, currency),
      refund: money(refund, currency),
      net: money(debit.plus(refund), currency),
      transactionIds: mine.flatMap((m) => (m.tx.id ? [m.tx.id] : [])),
      earlier,
      ok: rowProblems.length === 0,
      problems: rowProblems,
    };
  });

  // The period: as asked, else the batch's own movements from first to last. A movement without a
  // date is placed by its position in the listing between the batch's first and last movement.
  const mineAll = [...matched.values()].flatMap((slots) => [...slots.values()].flat());
  const dates = [...mineAll.map((m) => time(m.tx.createdAt)), ...[...input.payouts.values()].map((p) => time(p.createdAt))].filter(
    (t): t is number => t !== undefined,
  );
  const from = time(input.since) ?? (dates.length ? Math.min(...dates) : undefined);
  const to = time(input.until) ?? (dates.length ? Math.max(...dates) : undefined);
  const positions = mineAll.map((m) => m.index);
  const lo = positions.length ? Math.min(...positions) : undefined;
  const hi = positions.length ? Math.max(...positions) : undefined;
  let byDates = false;
  let byOrder = false;
  const inPeriod = (tx: ReconTx, index: number): boolean => {
    const t = time(tx.createdAt);
    if (t !== undefined && (from !== undefined || to !== undefined)) {
      byDates = true;
      return (from === undefined || t >= from) && (to === undefined || t <= to);
    }
    if (input.since === undefined && input.until === undefined && lo !== undefined && hi !== undefined) {
      byOrder = true;
      return index >= lo && index <= hi;
    }
    // no date and nothing to place it by: counted in, so nothing unexplained is hidden
    return true;
  };
  const foreign = (tx: ReconTx): ForeignTransaction => ({
    id: tx.id,
    type: tx.amount.isNegative() ? 'DEBIT' : 'CREDIT',
    amount: money(tx.amount, tx.currency),
    currency: tx.currency,
    walletId: tx.walletId,
    reference: tx.reference,
    createdAt: tx.createdAt,
  });
  const notFromBatch: ForeignTransaction[] = [];
  const otherCredits: ForeignTransaction[] = [];
  for (const { tx, index } of unmatched) {
    if (!inPeriod(tx, index)) continue;
    (tx.amount.isNegative() ? notFromBatch : otherCredits).push(foreign(tx));
  }
  for (const f of notFromBatch)
    problems.push(
      `debit ${f.amount} ${f.currency ?? ''} (reference ${f.reference || '(none)'}${f.id ? `, transaction ${f.id}` : ''}) is not from this batch`.replace(
        /  +/g,
        ' ',
      ),
    );

  const totalsOut = [...totals.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, t]): CurrencyTotals => {
      const net = t.debited.plus(t.refunded);
      const ok = net.equals(t.expectedNet);
      if (!ok) problems.push(`${currency}: net movement ${money(net, currency)}, the results say ${money(t.expectedNet, currency)}`);
      return {
        currency,
        walletIds: [...t.walletIds].sort(),
        debited: money(t.debited, currency),
        refunded: money(t.refunded, currency),
        net: money(net, currency),
        expectedNet: money(t.expectedNet, currency),
        ok,
      };
    });

  const createdRows = rows.filter((r) => r.created);
  return {
    ok: problems.length === 0,
    rows,
    notFromBatch,
    otherCredits,
    totals: totalsOut,
    period: {
      from: from === undefined ? undefined : new Date(from).toISOString(),
      to: to === undefined ? undefined : new Date(to).toISOString(),
      by: byDates ? 'dates' : byOrder ? 'listing order' : 'none',
    },
    problems,
    counts: {
      rows: rows.length,
      created: createdRows.length,
      tiedOut: createdRows.filter((r) => r.ok).length,
      failedRefunded: createdRows.filter((r) => r.ok && r.status !== undefined && REFUNDED_STATUSES.has(r.status)).length,
      earlierRefunded: rows.reduce((n, r) => n + r.earlier.filter((e) => e.ok).length, 0),
      transactions: input.transactions.length,
    },
  };
}

/** A transaction as the client read it, normalised: the sign from `type` when given (debits negative). */
export function normaliseTransaction(t: WalletTransactionAnswer): ReconTx {
  const raw = fromApi(t.amount);
  const amount = t.type === 'DEBIT' ? raw.abs().negated() : t.type === 'CREDIT' ? raw.abs() : raw;
  const meta = t.metadata ?? {};
  const payoutId = typeof meta.payoutId === 'string' ? meta.payoutId : undefined;
  const wallet = t.wallet as { walletId?: string; currency?: string } | undefined;
  // (the wallet's id also at the top level, as some readings give it)
  const topWalletId = (t as Record<string, unknown>).walletId;
  return {
    id: t.id,
    amount,
    currency: t.currency ?? wallet?.currency,
    walletId: wallet?.walletId ?? (typeof topWalletId === 'string' ? topWalletId : undefined),
    reference: t.reference,
    payoutId,
    createdAt: t.createdAt,
  };
}

// ---------------------------------------------------------------- the I/O step

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
  requests: { getPayout: number; transactionPages: number; total: number };
  /** How the listing ended: 'end' (short or last page), 'period' (below the period), 'repeated page' (page ignored). */
  listing: { pages: number; transactions: number; ended: 'end' | 'period' | 'repeated page' };
  usage?: UsageReport;
  halted?: string;
}

/** The reconciliation file beside the results: payroll.results.csv -> payroll.results.reconciliation.csv. */
export function reconciliationPathFor(resultsFile: string, format: ResultsFormat): string {
  const stem = basename(resultsFile, extname(resultsFile));
  return join(dirname(resultsFile), `${stem}.reconciliation.${format}`);
}

/** Stop paging this long below the period's start (clocks of payout and transaction may differ a little). */
const PERIOD_MARGIN_MS = 5 * 60_000;

class Halted extends Error {}

export async function reconcile(o: ReconcileOptions): Promise<ReconcileResult> {
  const table = await readResults(o.resultsFile);
  for (const [flag, v] of [
    ['--since', o.since],
    ['--until', o.until],
  ] as const)
    if (v !== undefined && time(v) === undefined)
      throw new ResultsError(
        'UNREADABLE',
        o.resultsFile,
        `${flag} ${v}: not a date (use ISO 8601, e.g. 2025-01-31 or 2025-01-31T23:59:59Z).`,
      );
  const rows: ReconRow[] = table.rows.map((r) => ({
    rowNumber: r.rowNumber,
    reference: r.cells.reference || undefined,
    status: r.result.status,
    payoutId: r.result.payoutId || undefined,
    payoutRef: r.result.payoutRef || undefined,
    currency: r.cells.sourceCurrency?.toUpperCase() || undefined,
    totalDeductible: r.result.totalDeductible,
    earlier: earlierFromCell(r.result.earlierPayouts),
  }));
  const ids = [...new Set(rows.flatMap((r) => (r.payoutId ? [r.payoutId] : [])))];
  o.onPlan?.({ payouts: ids.length, usage: await o.client.quotaUsage().catch(() => undefined) });

  const requests = { getPayout: 0, transactionPages: 0, total: 0 };
  const listing: ReconcileResult['listing'] = { pages: 0, transactions: 0, ended: 'end' };
  let halted: string | undefined;
  const trouble = (e: unknown): never => {
    if (e instanceof PayoutApiError && isServiceTrouble(e)) {
      halted ??= e.message;
      throw new Halted(e.message);
    }
    throw e;
  };

  const payouts = new Map<string, PayoutState>();
  try {
    await Promise.all(
      ids.map(async (payoutId) => {
        if (halted || o.stop?.aborted) throw new Halted(halted ?? 'stopped');
        requests.getPayout++;
        try {
          const p = await o.client.getPayout(payoutId, { signal: o.stop });
          const total =
            p.sourceAmount !== undefined && p.transactionFees !== undefined
              ? fromApi(p.sourceAmount).plus(fromApi(p.transactionFees))
              : undefined;
          payouts.set(payoutId, { status: p.status, sourceCurrency: p.sourceCurrency, total, createdAt: p.createdAt });
        } catch (e) {
          if (e instanceof PayoutApiError && !isServiceTrouble(e)) {
            payouts.set(payoutId, { error: `${e.code ?? `HTTP ${e.status ?? '?'}`} (request id ${e.requestId})` });
            o.logger?.warn({ payoutId, requestId: e.requestId, errorCode: e.code }, 'payout could not be read');
            return;
          }
          trouble(e);
        }
      }),
    );

    // Pages of the unfiltered listing: one request per 100 movements, not one per payout; newest
    // first, so it stops once a whole page is older than the period (less a margin).
    const stopBelow = time(o.since) ?? minOf([...payouts.values()].map((p) => time(p.createdAt)));
    const transactions: ReconTx[] = [];
    let newestFirst = true;
    let previousFirst: string | undefined;
    const seen = new Set<string>();
    let lastTime: number | undefined;
    for (let page = 1; ; page++) {
      if (o.stop?.aborted) throw new Halted('stopped');
      requests.transactionPages++;
      const r = await o.client.listTransactions({ page, limit: LIST_MAX_LIMIT }, { signal: o.stop }).catch(trouble);
      const items = r.data;
      listing.pages = page;
      if (items.length === 0) break;
      const firstKey = JSON.stringify(items[0]);
      if (page > 1 && firstKey === previousFirst) {
        listing.ended = 'repeated page';
        o.logger?.warn({ page }, 'the transactions route gave the same page again (page ignored?): listing stopped');
        break;
      }
      previousFirst = firstKey;
      for (const t of items) {
        const tx = normaliseTransaction(t);
        // a movement made while paging pushes the older ones down a place: seen twice, kept once
        if (tx.id !== undefined && seen.has(tx.id)) continue;
        if (tx.id !== undefined) seen.add(tx.id);
        transactions.push(tx);
        const at = time(tx.createdAt);
        if (at === undefined || (lastTime !== undefined && at > lastTime)) newestFirst = false;
        if (at !== undefined) lastTime = at;
      }
      const total = r.meta?.total;
      if (total !== undefined ? page * LIST_MAX_LIMIT >= total : items.length < LIST_MAX_LIMIT) break;
      if (newestFirst && stopBelow !== undefined && lastTime !== undefined && lastTime < stopBelow - PERIOD_MARGIN_MS) {
        listing.ended = 'period';
        break;
      }
    }
    listing.transactions = transactions.length;
    requests.total = requests.getPayout + requests.transactionPages;

    const report = tieOut({ rows, transactions, payouts, since: o.since, until: o.until });
    const path = reconciliationPathFor(o.resultsFile, table.format);
    await writeReconciliation(path, table.format, report);
    return {
      exitCode: report.ok ? 0 : 1,
      report,
      reconciliationPath: path,
      requests,
      listing,
      usage: await o.client.quotaUsage().catch(() => undefined),
    };
  } catch (e) {
    if (!(e instanceof Halted)) throw e;
    requests.total = requests.getPayout + requests.transactionPages;
    return { exitCode: 4, requests, listing, halted: halted ?? e.message, usage: await o.client.quotaUsage().catch(() => undefined) };
  }
}

/** The `earlierPayouts` cell (src/engine/outcome.ts earlierPayoutsCell) read back; a cell that is not ours gives none. */
export function earlierFromCell(cell: string | undefined): EarlierPayout[] | undefined {
  if (!cell?.trim()) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(cell);
  } catch {
    return undefined;
  }
  if (!Array.isArray(v)) return undefined;
  const out: EarlierPayout[] = [];
  for (const x of v as unknown[]) {
    if (!x || typeof x !== 'object') continue;
    const e = x as Record<string, unknown>;
    const str = (k: string) => (typeof e[k] === 'string' && e[k] !== '' ? e[k] : undefined);
    const amount = decimalOrUndefined(str('amount'));
    const fee = decimalOrUndefined(str('fee'));
    if (!str('payoutId') && !str('payoutRef')) continue;
    out.push({
      payoutId: str('payoutId'),
      payoutRef: str('payoutRef'),
      status: str('status'),
      currency: str('currency')?.toUpperCase(),
      total: amount !== undefined && fee !== undefined ? amount.plus(fee).toFixed() : undefined,
      refunded: str('refunded'),
    });
  }
  return out.length ? out : undefined;
}

function minOf(values: (number | undefined)[]): number | undefined {
  const v = values.filter((x): x is number => x !== undefined);
  return v.length ? Math.min(...v) : undefined;
}

// ---------------------------------------------------------------- the reconciliation file

export const RECONCILIATION_COLUMNS = [
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
] as const;
type ReconColumn = (typeof RECONCILIATION_COLUMNS)[number];
const MONEY_COLUMNS = new Set<ReconColumn>(['totalDeductible', 'debit', 'refund', 'net']);

/**
 * Each row of the results, each followed by the payouts it replaced (their own debit and refund,
 * so the money columns add up to the totals), then the debits not from this batch, then the
 * other credits of the period.
 */
export function reconciliationLines(report: TieOutReport): Partial<Record<ReconColumn, string>>[] {
  const lines: Partial<Record<ReconColumn, string>>[] = report.rows.flatMap((r) => [
    {
      kind: r.created ? 'row' : 'row (not created)',
      row: String(r.rowNumber),
      reference: r.reference,
      payoutId: r.payoutId,
      payoutRef: r.payoutRef,
      status: r.status,
      currency: r.currency,
      walletId: r.walletId,
      totalDeductible: r.expected,
      debit: r.debit,
      refund: r.refund,
      net: r.net,
      transactionIds: r.transactionIds.join('; '),
      tiesOut: r.ok ? 'yes' : 'NO',
      problem: r.problems.join('; '),
    },
    ...r.earlier.map((e) => ({
      kind: 'earlier payout (sent again)',
      row: String(r.rowNumber),
      reference: r.reference,
      payoutId: e.payoutId,
      payoutRef: e.payoutRef,
      status: e.status,
      currency: r.currency,
      totalDeductible: e.expected,
      debit: e.debit,
      refund: e.refund,
      net: e.net,
      transactionIds: e.transactionIds.join('; '),
      tiesOut: e.ok ? 'yes' : 'NO',
      problem: e.problems.join('; '),
    })),
  ]);
  const tx = (kind: string, ok: boolean) => (f: ForeignTransaction) => ({
    kind,
    reference: f.reference,
    currency: f.currency,
    walletId: f.walletId,
    debit: f.type === 'DEBIT' ? f.amount : undefined,
    refund: f.type === 'CREDIT' ? f.amount : undefined,
    net: f.amount,
    transactionIds: f.id,
    createdAt: f.createdAt,
    tiesOut: ok ? '' : 'NO',
    problem: ok ? '' : 'debit not from this batch',
  });
  lines.push(...report.notFromBatch.map(tx('not from this batch', false)));
  lines.push(...report.otherCredits.map(tx('other credit', true)));
  return lines;
}

/** One XLSX cell: amounts are numbers in a money format, as in the results workbook; text is neutralised. */
export function reconciliationCell(column: ReconColumn, value: string | undefined): XLSX.CellObject | undefined {
  if (value === undefined || value === '') return undefined;
  const n = MONEY_COLUMNS.has(column) ? moneyCell(value) : undefined;
  return n ? { t: 'n', v: n.v, z: n.z } : { t: 's', v: neutralise(value) };
}

async function writeReconciliation(path: string, format: ResultsFormat, report: TieOutReport): Promise<void> {
  const lines = reconciliationLines(report);
  let bytes: string | Uint8Array;
  if (format === 'csv') {
    const quote = (s: string) => (/[",\r\n]|^ | $/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
    const text = [
      RECONCILIATION_COLUMNS.join(','),
      ...lines.map((l) =>
        RECONCILIATION_COLUMNS.map((c) => {
          const v = l[c] ?? '';
          return MONEY_COLUMNS.has(c) ? v : quote(neutralise(v));
        }).join(','),
      ),
    ];
    bytes = '\uFEFF' + text.join('\r\n') + '\r\n';
  } else {
    const data: (XLSX.CellObject | undefined)[][] = [RECONCILIATION_COLUMNS.map((h) => ({ t: 's', v: h }))];
    for (const l of lines) data.push(RECONCILIATION_COLUMNS.map((c) => reconciliationCell(c, l[c])));
    const ws = {
      '!data': data as XLSX.CellObject[][],
      '!ref': XLSX.utils.encode_range({ s: { r: 0, c: 0 }, e: { r: lines.length, c: RECONCILIATION_COLUMNS.length - 1 } }),
    } as XLSX.WorkSheet;
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, ws, 'Reconciliation');
    bytes = XLSX.write(wb, { type: 'buffer', bookType: 'xlsx', compression: true }) as Uint8Array;
  }
  try {
    await writeFileAtomic(path, [bytes]);
  } catch (e) {
    throw new ResultsError('WRITE_FAILED', path, `${path}: cannot write the reconciliation file (${(e as Error).message}).`, { cause: e });
  }
}

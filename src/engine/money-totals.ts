// What the payouts of a batch cost, per source currency: one model for the run summary, `status`,
// the report and `reconcile`. A payout debits its amount plus its fee (spec §2 Payout:
// sourceAmount, transactionFees); one that FAILED or was REJECTED after creation is refunded by a
// CREDIT in the wallet (spec §2 Wallet transaction); a row sent again by `retry --resend-failed`
// keeps the payouts it replaced in its `earlierPayouts` cell, encoded and read back only here.
// Amounts are exact (decimal.js through money.ts). An amount that cannot be read is a problem said
// to the user, never a 0 in a total.
import { basename, dirname, extname, join } from 'node:path';
import { z } from 'zod';
import { Dec, ExactSum, formatAmount, formatApiAmount, fromApi } from '../money.ts';
import { isFailedAfterCreation, type PayoutSnapshot } from '../journal/lines.ts';

const PLAIN_AMOUNT = /^-?\d+(\.\d+)?$/;

/**
 * An amount as a results or reconciliation file holds it: a plain decimal ("1234.50"), or with
 * the thousands separators a workbook shows ("1,234.50"). Undefined when the text is no amount:
 * the caller says so, it never counts as 0.
 */
export function readAmount(text: string | undefined): Dec | undefined {
  if (text === undefined) return undefined;
  const t = text.trim().replace(/[,\s]/g, '');
  return PLAIN_AMOUNT.test(t) ? new Dec(t) : undefined;
}

/** A decimal text field of a file we wrote (zod): refused, with the reason, when it is no amount. */
export const amountText = z.string().refine((t) => readAmount(t) !== undefined, { message: 'not an amount' });

/** One payout of a row, for the totals: what it debited (amount + fee) and what came back. */
export interface MoneyEntry {
  /** The payout's status: a FAILED or REJECTED one is refunded (spec §2). */
  status: string;
  currency: string;
  amount: Dec;
  /** Undefined while the service has not told the fee (the payout counts in feesNotKnown). */
  fee?: Dec;
  /** The CREDIT seen in the wallet's transactions; undefined while none is seen. */
  refunded?: Dec;
}

/** Per source currency, exact decimal strings with its minor units: what the payouts debited, what came back, the difference. */
export interface MoneyTotals {
  payouts: number;
  debited: string;
  refunded: string;
  net: string;
  /** Failed payouts whose refund is not in the wallet's transactions yet (not in `refunded`). */
  refundsNotSeen?: number;
  /** Payouts whose fee the service has not told yet (only the amount is in `debited`). */
  feesNotKnown?: number;
}

export function moneyTotals(entries: Iterable<MoneyEntry>): Record<string, MoneyTotals> {
  const sums = new Map<string, { n: number; debited: ExactSum; refunded: ExactSum; notSeen: number; feesNotKnown: number }>();
  for (const e of entries) {
    let s = sums.get(e.currency);
    if (!s) sums.set(e.currency, (s = { n: 0, debited: new ExactSum(), refunded: new ExactSum(), notSeen: 0, feesNotKnown: 0 }));
    s.n++;
    s.debited.add(e.amount);
    if (e.fee === undefined) s.feesNotKnown++;
    else s.debited.add(e.fee);
    if (e.refunded !== undefined) s.refunded.add(e.refunded);
    else if (isFailedAfterCreation(e.status)) s.notSeen++;
  }
  return Object.fromEntries(
    [...sums]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([c, s]) => {
        const d = s.debited.value();
        const r = s.refunded.value();
        const t: MoneyTotals = {
          payouts: s.n,
          debited: formatAmount(d, c),
          refunded: formatAmount(r, c),
          net: formatAmount(d.minus(r), c),
        };
        if (s.notSeen) t.refundsNotSeen = s.notSeen;
        if (s.feesNotKnown) t.feesNotKnown = s.feesNotKnown;
        return [c, t];
      }),
  );
}

/** A payout as the journal holds it, for the totals. */
export function moneyEntryOfPayout(p: PayoutSnapshot, status = p.status): MoneyEntry {
  return {
    status,
    currency: p.sourceCurrency,
    amount: fromApi(p.sourceAmount),
    fee: p.transactionFees === undefined ? undefined : fromApi(p.transactionFees),
    refunded: p.refunded === undefined ? undefined : fromApi(p.refunded),
  };
}

// ---------------------------------------------------------------- the earlierPayouts cell

/** A payout a row replaced (failed, refunded, sent again), as its `earlierPayouts` cell holds it. */
const EarlierPayoutSchema = z
  .object({
    payoutId: z.string().optional(),
    payoutRef: z.string().optional(),
    status: z.string(),
    currency: z.string().transform((c) => c.toUpperCase()),
    /** sourceAmount, with the currency's minor units. */
    amount: amountText,
    /** transactionFees, when the service told it. */
    fee: amountText.optional(),
    /** The refund the run saw (exact decimal). */
    refunded: amountText.optional(),
  })
  .refine((e) => !!(e.payoutId || e.payoutRef), { message: 'no payoutId or payoutRef' });
export type EarlierPayout = z.infer<typeof EarlierPayoutSchema>;

/** The `earlierPayouts` cell: compact JSON of the payouts a row replaced, with what each debited and refunded. */
export function earlierPayoutsCell(earlier: readonly PayoutSnapshot[]): string {
  return JSON.stringify(
    earlier.map((p) => ({
      payoutId: p.id,
      payoutRef: p.payoutRef,
      status: p.status,
      currency: p.sourceCurrency,
      amount: formatApiAmount(p.sourceAmount, p.sourceCurrency),
      ...(p.transactionFees !== undefined ? { fee: formatApiAmount(p.transactionFees, p.sourceCurrency) } : {}),
      ...(p.refunded !== undefined ? { refunded: p.refunded } : {}),
    })),
  );
}

/**
 * An `earlierPayouts` cell read back. A cell that is not what earlierPayoutsCell wrote gives no
 * payouts and a problem saying why: the payouts it names are then missing from the totals, which
 * the user must know.
 */
export function parseEarlierPayouts(cell: string | undefined): { payouts: EarlierPayout[]; problem?: string } {
  if (!cell?.trim()) return { payouts: [] };
  let v: unknown;
  try {
    v = JSON.parse(cell);
  } catch {
    return { payouts: [], problem: 'the earlierPayouts cell is not JSON: the payouts it names are not counted' };
  }
  const r = z.array(EarlierPayoutSchema).safeParse(v);
  if (r.success) return { payouts: r.data };
  const i = r.error.issues[0];
  const where = i?.path.length ? `${i.path.join('.')}: ` : '';
  return { payouts: [], problem: `the earlierPayouts cell cannot be read (${where}${i?.message}): the payouts it names are not counted` };
}

/** An earlier payout, for the totals. */
export const moneyEntryOfEarlier = (e: EarlierPayout): MoneyEntry => ({
  status: e.status,
  currency: e.currency,
  amount: readAmount(e.amount)!,
  fee: readAmount(e.fee),
  refunded: readAmount(e.refunded),
});

// ---------------------------------------------------------------- the tie-out per currency

/** How one currency's wallet movements tie out with what the results say (`reconcile`; the report shows it). */
export const CurrencyTieOutSchema = z.object({
  currency: z.string(),
  walletIds: z.array(z.string()),
  /** Sum of the batch's debits (negative). */
  debited: amountText,
  /** Sum of the batch's refunds (positive). */
  refunded: amountText,
  net: amountText,
  /** What the results and the statuses say the net should be: -(totalDeductible of the rows not failed), plus the swap's. */
  expectedNet: amountText,
  /** The batch's swap in this wallet (spec §4.7), counted apart from payouts: its debit (negative) or credit (positive). */
  swapped: amountText.optional(),
  ok: z.boolean(),
});
export type CurrencyTieOut = z.infer<typeof CurrencyTieOutSchema>;

/** How one swap of the batch ties out: its debit in the source wallet and its credit in the destination wallet. */
export const SwapTieOutSchema = z.object({
  /** The short currency it funds. */
  currency: z.string(),
  reference: z.string(),
  id: z.string().optional(),
  status: z.string().optional(),
  sourceCurrency: z.string().optional(),
  /** Sum of its movements in the source wallet (negative), "0" when none. */
  debit: amountText,
  destinationCurrency: z.string().optional(),
  /** Sum of its movements in the destination wallet (positive), "0" when none. */
  credit: amountText,
  exchangeRate: z.string().optional(),
  transactionIds: z.array(z.string()),
  ok: z.boolean(),
  problems: z.array(z.string()),
});
export type SwapTieOut = z.infer<typeof SwapTieOutSchema>;

/**
 * What `reconcile` concluded, per currency, with one line per thing that does not tie out: what
 * it writes beside its reconciliation file as JSON, and what the results report shows.
 */
export const TieOutSummarySchema = z.object({
  ok: z.boolean(),
  totals: z.array(CurrencyTieOutSchema),
  /** The batch's swaps, each with both legs. */
  swaps: z.array(SwapTieOutSchema).optional(),
  problems: z.array(z.string()),
  /** The debits of the period nothing here explains (another state folder's, ledger's...): shown apart, never in `ok`. */
  others: z.array(z.string()).optional(),
  /** The reconciliation file (CSV or XLSX) it goes with. */
  file: z.string().optional(),
});
export type TieOutSummary = z.infer<typeof TieOutSummarySchema>;

/**
 * The files `reconcile` writes beside a results file: payroll.results.csv ->
 * payroll.results.reconciliation.csv (.xlsx beside an .xlsx), the tie-out as .json, and its
 * report as .html (never the run's payroll.results.html).
 */
export function reconciliationPathFor(resultsFile: string, format: 'csv' | 'xlsx' | 'json' | 'html'): string {
  return join(dirname(resultsFile), `${basename(resultsFile, extname(resultsFile))}.reconciliation.${format}`);
}

// What a batch's payouts cost per source currency, for the run summary, `status`, the report and
// `reconcile`: amount plus fee debited (spec §2 Payout), a refund CREDIT for one FAILED or REJECTED
// after creation (§2 Wallet transaction). An unreadable amount is a problem said, never a 0.
import { basename, dirname, extname, join } from 'node:path';
import * as z from 'zod';
import { Dec, formatAmount, formatApiAmount, fromApi } from '../money.ts';
import { attempt } from '../files/attempt.ts';
import { isFailedAfterCreation, type PayoutSnapshot } from '../journal/lines.ts';
import { byText } from '../text.ts';

const PLAIN_AMOUNT = /^-?\d+(\.\d+)?$/;
/** Thousands in groups of 3, a dot for decimals: a comma elsewhere ("12,00" re-saved by Excel) is no group. */
const GROUPED_AMOUNT = /^-?\d{1,3}([,\s]\d{3})+(\.\d+)?$/;

/** "1234.50" or "1,234.50" as a workbook shows it; undefined when the text is no amount. */
export function readAmount(text: string | undefined): Dec | undefined {
  if (text === undefined) return undefined;
  const t = GROUPED_AMOUNT.test(text.trim()) ? text.trim().replace(/[,\s]/g, '') : text.trim();
  return PLAIN_AMOUNT.test(t) ? new Dec(t) : undefined;
}

export const amountText = z.string().refine((t) => readAmount(t) !== undefined, { message: 'not an amount' });

export interface MoneyEntry {
  status: string;
  currency: string;
  amount: Dec;
  /** Undefined while the service has not told it (counted in feesNotKnown). */
  fee?: Dec;
  /** The CREDIT seen in the wallet's transactions. */
  refunded?: Dec;
}

export interface MoneyTotals {
  payouts: number;
  debited: string;
  refunded: string;
  net: string;
  /** Failed payouts whose refund is not seen yet (not in `refunded`). */
  refundsNotSeen?: number;
  /** Payouts whose fee is not told yet (only the amount is in `debited`). */
  feesNotKnown?: number;
}

export function moneyTotals(entries: Iterable<MoneyEntry>): Record<string, MoneyTotals> {
  const sums = new Map<string, { n: number; debited: Dec; refunded: Dec; notSeen: number; feesNotKnown: number }>();
  for (const e of entries) {
    const s = sums.get(e.currency) ?? { n: 0, debited: new Dec(0), refunded: new Dec(0), notSeen: 0, feesNotKnown: 0 };
    sums.set(e.currency, s);
    s.n++;
    s.debited = s.debited.plus(e.amount).plus(e.fee ?? 0);
    if (e.fee === undefined) s.feesNotKnown++;
    if (e.refunded !== undefined) s.refunded = s.refunded.plus(e.refunded);
    else if (isFailedAfterCreation(e.status)) s.notSeen++;
  }
  return Object.fromEntries(
    [...sums]
      .sort(([a], [b]) => byText(a, b))
      .map(([c, s]) => {
        const t: MoneyTotals = {
          payouts: s.n,
          debited: formatAmount(s.debited, c),
          refunded: formatAmount(s.refunded, c),
          net: formatAmount(s.debited.minus(s.refunded), c),
        };
        if (s.notSeen) t.refundsNotSeen = s.notSeen;
        if (s.feesNotKnown) t.feesNotKnown = s.feesNotKnown;
        return [c, t];
      }),
  );
}

export function moneyEntryOfPayout(p: PayoutSnapshot, status = p.status): MoneyEntry {
  return {
    status,
    currency: p.sourceCurrency,
    amount: fromApi(p.sourceAmount),
    fee: p.transactionFees === undefined ? undefined : fromApi(p.transactionFees),
    refunded: p.refunded === undefined ? undefined : fromApi(p.refunded),
  };
}

/** A payout a row replaced (failed, refunded, sent again by `retry --resend-failed`). */
const EarlierPayoutSchema = z
  .object({
    payoutId: z.string().optional(),
    payoutRef: z.string().optional(),
    status: z.string(),
    currency: z.string().transform((c) => c.toUpperCase()),
    amount: amountText,
    fee: amountText.optional(),
    refunded: amountText.optional(),
  })
  .refine((e) => !!(e.payoutId || e.payoutRef), { message: 'no payoutId or payoutRef' });
export type EarlierPayout = z.infer<typeof EarlierPayoutSchema>;

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

/** An `earlierPayouts` cell read back; one not as written gives a problem, since its payouts miss from the totals. */
export function parseEarlierPayouts(cell: string | undefined): { payouts: EarlierPayout[]; problem?: string } {
  if (!cell?.trim()) return { payouts: [] };
  const v = attempt((): unknown => JSON.parse(cell));
  if (v === undefined) return { payouts: [], problem: 'the earlierPayouts cell is not JSON: the payouts it names are not counted' };
  const r = z.array(EarlierPayoutSchema).safeParse(v);
  if (r.success) return { payouts: r.data };
  const i = r.error.issues[0];
  const where = i?.path.length ? `${i.path.join('.')}: ` : '';
  return { payouts: [], problem: `the earlierPayouts cell cannot be read (${where}${i?.message}): the payouts it names are not counted` };
}

export const moneyEntryOfEarlier = (e: EarlierPayout): MoneyEntry => ({
  status: e.status,
  currency: e.currency,
  amount: readAmount(e.amount)!,
  fee: readAmount(e.fee),
  refunded: readAmount(e.refunded),
});

/** How one currency's wallet movements tie out with the results (`reconcile`; the report shows it). */
const CurrencyTieOutSchema = z.object({
  currency: z.string(),
  walletIds: z.array(z.string()),
  /** Negative. */
  debited: amountText,
  refunded: amountText,
  net: amountText,
  /** -(totalDeductible of the rows not failed), plus the swap's. */
  expectedNet: amountText,
  /** The batch's swap in this wallet (spec §4.7), apart from payouts. */
  swapped: amountText.optional(),
  ok: z.boolean(),
});
export type CurrencyTieOut = z.infer<typeof CurrencyTieOutSchema>;

/** How one swap ties out: its debit in the source wallet (negative), its credit in the destination's ("0" when none). */
const SwapTieOutSchema = z.object({
  /** The short currency it funds. */
  currency: z.string(),
  reference: z.string(),
  id: z.string().optional(),
  status: z.string().optional(),
  sourceCurrency: z.string().optional(),
  debit: amountText,
  destinationCurrency: z.string().optional(),
  credit: amountText,
  exchangeRate: z.string().optional(),
  transactionIds: z.array(z.string()),
  ok: z.boolean(),
  problems: z.array(z.string()),
});
export type SwapTieOut = z.infer<typeof SwapTieOutSchema>;

/** What `reconcile` concluded, written beside its reconciliation file as JSON; the results report shows it. */
export const TieOutSummarySchema = z.object({
  ok: z.boolean(),
  totals: z.array(CurrencyTieOutSchema),
  swaps: z.array(SwapTieOutSchema).optional(),
  problems: z.array(z.string()),
  /** The debits of the period nothing here explains (another state folder's, ledger's...): shown apart, never in `ok`. */
  others: z.array(z.string()).optional(),
  file: z.string().optional(),
});
export type TieOutSummary = z.infer<typeof TieOutSummarySchema>;

/** payroll.results.csv -> payroll.results.reconciliation.{csv,xlsx,json,html} (never the run's payroll.results.html). */
export function reconciliationPathFor(resultsFile: string, format: 'csv' | 'xlsx' | 'json' | 'html'): string {
  return join(dirname(resultsFile), `${basename(resultsFile, extname(resultsFile))}.reconciliation.${format}`);
}

// The tie-out of `reconcile`, pure: results rows + wallet transactions (listing order) + payout
// states -> a report (spec §2 Wallet transaction, §4.3, §4.15; swaps §4.7, §6). Debits no row
// explains are listed apart (`others`), never this batch's failure. Amounts exact, never rounded.
import { amountText, Dec } from '../money.ts';
import { isFailedAfterCreation, type SwapState } from '../journal/lines.ts';
import { ENGINE_STATUSES } from '../engine/outcome.ts';
import { readAmount, type CurrencyTieOut, type EarlierPayout, type SwapTieOut } from '../engine/money-totals.ts';
import { byText, utcTime, zonedTime } from '../text.ts';
import { amountAsRead } from '../validation/amount.ts';
import { copiedPayouts } from '../results/read.ts';

/** One row of a results file, as far as money goes. */
export interface ReconRow {
  rowNumber: number;
  reference?: string;
  status?: string;
  payoutId?: string;
  payoutRef?: string;
  /** The source currency (the wallet debited). */
  currency?: string;
  totalDeductible?: string;
  /** The amount sent (the batch's amount cell). */
  amount?: string;
  /** Payouts this row replaced (the `earlierPayouts` cell). */
  earlier?: EarlierPayout[];
  /** What could not be read from the row's cells. */
  problems?: string[];
}

export type PayoutReconciliation = ReturnType<typeof tieOutEarlier>;
export type RowReconciliation = ReturnType<typeof tieOutRow>;
/** A movement of the period no row of the batch explains; `explainedBy`: another batch of the account, or a swap. */
export type ForeignTransaction = ReturnType<typeof foreign>;
export type TieOutReport = ReturnType<typeof tieOut>;
/** The period judged for unexplained debits (no `to`: up to the listing's reading). */
type Period = { from?: string; to?: string; by: 'dates' | 'listing order' | 'none' };

/** One wallet transaction: `amount` negative for a debit (spec §2). */
export interface ReconTx {
  id?: string;
  amount: Dec;
  currency?: string;
  walletId?: string;
  reference?: string;
  /** From metadata: a second way to tie a movement to a payout. */
  payoutId?: string;
  payoutRef?: string;
  createdAt?: string;
  /** The statement's balances (spec §2), when given. */
  balanceAfter?: Dec;
}

/** A created payout as get-payout describes it now, or why it could not be read. */
export interface PayoutState {
  status?: string;
  sourceCurrency?: string;
  /** sourceAmount + transactionFees, when both were given. */
  total?: Dec;
  /** transactionFees. */
  fee?: Dec;
  createdAt?: string;
  error?: string;
}

/** A batch of the account's ledger and the payouts it created. */
export interface LedgerBatch {
  /** "batch <16 hex of its id> (<its file>)". */
  name: string;
  payoutRefs: readonly string[];
  payoutIds: readonly string[];
}

export type ReconSwap = Pick<SwapState, 'currency' | 'reference' | 'swap'>;

interface TieOutInput {
  rows: ReconRow[];
  /** In listing order (newest first at the sandbox). */
  transactions: ReconTx[];
  payouts: ReadonlyMap<string, PayoutState>;
  /** The period for unexplained debits (ISO 8601); default: from the batch's first movement on. */
  since?: string;
  until?: string;
  ledgerBatches?: readonly LedgerBatch[];
  swaps?: readonly ReconSwap[];
}

const ZERO = new Dec(0);

/** With the currency's minor units, never rounded. */
const money = (d: Dec, currency?: string): string => amountText(d, currency, { exact: true });

/** The results' expected debit (amount + fee, positive); the debits (negative, "0" when none), refunds, net (0 when refunded in full). */
const shown = (m: Movements, currency: string | undefined, expected: Dec | undefined, problems: string[]) => ({
  expected: expected === undefined ? undefined : money(expected, currency),
  debit: money(m.debit, currency),
  refund: money(m.refund, currency),
  net: money(net(m), currency),
  transactionIds: m.ids,
  ok: problems.length === 0,
  problems,
});

type Hit = { tx: ReconTx; index: number };

/** Owners by payoutRef and by payout id (the first of each kept); a transaction's: by its reference (a payoutRef or id), else metadata.payoutId or payoutRef, as engine/refund.ts reads it. */
export function payoutIndex<T>() {
  const byRef = new Map<string, T>();
  const byId = new Map<string, T>();
  return {
    add(owner: T, payoutId: string | undefined, payoutRef?: string): void {
      if (payoutRef && !byRef.has(payoutRef)) byRef.set(payoutRef, owner);
      if (payoutId && !byId.has(payoutId)) byId.set(payoutId, owner);
    },
    of: (tx: Pick<ReconTx, 'reference' | 'payoutId' | 'payoutRef'>): T | undefined =>
      (tx.reference ? (byRef.get(tx.reference) ?? byId.get(tx.reference)) : undefined) ??
      (tx.payoutId ? byId.get(tx.payoutId) : undefined) ??
      (tx.payoutRef ? byRef.get(tx.payoutRef) : undefined),
  };
}

function matchTransactions(rows: readonly ReconRow[], transactions: readonly ReconTx[], swaps: readonly ReconSwap[] = []) {
  // by "row,slot": slot -1 holds a row's current payout's transactions, slot k those of its k-th earlier payout
  const owners = payoutIndex<string>();
  rows.forEach((r, i) => {
    if (r.payoutId) owners.add(`${i},-1`, r.payoutId, r.payoutRef);
    r.earlier?.forEach((e, k) => owners.add(`${i},${k}`, e.payoutId, e.payoutRef));
  });
  const matched = new Map<string, Hit[]>();
  const unmatched: Hit[] = [];
  const swapHits = new Map<string, Hit[]>(swaps.map((w) => [w.reference, []]));
  transactions.forEach((tx, index) => {
    const swap = tx.reference !== undefined ? swapHits.get(tx.reference) : undefined;
    if (swap) return void swap.push({ tx, index });
    const owner = owners.of(tx);
    if (owner === undefined) return void unmatched.push({ tx, index });
    matched.set(owner, [...(matched.get(owner) ?? []), { tx, index }]);
  });
  return { matched, unmatched, swapHits };
}

function movements(hits: readonly Hit[]) {
  const debits = hits.filter((m) => m.tx.amount.isNegative());
  const credits = hits.filter((m) => !m.tx.amount.isNegative());
  return {
    hits,
    debits,
    credits,
    debit: debits.reduce((a, m) => a.plus(m.tx.amount), ZERO),
    refund: credits.reduce((a, m) => a.plus(m.tx.amount), ZERO),
    ids: hits.flatMap((m) => (m.tx.id ? [m.tx.id] : [])),
  };
}
type Movements = ReturnType<typeof movements>;
/** The debits (negative) and refunds together. */
const net = (m: Movements): Dec => m.debit.plus(m.refund);

/** Per currency: the batch's movements and the net the results say. */
class CurrencySums {
  private readonly sums = new Map<string, { walletIds: Set<string>; debited: Dec; refunded: Dec; swapped?: Dec; expectedNet: Dec }>();

  /** A payout's movements, `expected` its debit; a swap's (`swap`), `expected` what its journal says they net to in this wallet. */
  add(currency: string | undefined, m: Movements, expected: Dec = ZERO, swap = false): void {
    if (!currency) return;
    let t = this.sums.get(currency);
    if (!t) this.sums.set(currency, (t = { walletIds: new Set(), debited: ZERO, refunded: ZERO, expectedNet: ZERO }));
    if (swap) t.swapped = (t.swapped ?? ZERO).plus(net(m));
    else [t.debited, t.refunded] = [t.debited.plus(m.debit), t.refunded.plus(m.refund)];
    t.expectedNet = swap ? t.expectedNet.plus(expected) : t.expectedNet.minus(expected);
    for (const h of m.hits) if (h.tx.walletId) t.walletIds.add(h.tx.walletId);
  }

  tieOuts(problems: string[]): CurrencyTieOut[] {
    return [...this.sums.entries()]
      .sort(([a], [b]) => byText(a, b))
      .map(([currency, t]) => {
        const net = t.debited.plus(t.refunded).plus(t.swapped ?? ZERO);
        const ok = net.equals(t.expectedNet);
        if (!ok) problems.push(`${currency}: net movement ${money(net, currency)}, the results say ${money(t.expectedNet, currency)}`);
        return {
          currency,
          walletIds: [...t.walletIds].sort(),
          debited: money(t.debited, currency),
          refunded: money(t.refunded, currency),
          net: money(net, currency),
          expectedNet: money(t.expectedNet, currency),
          ...(t.swapped ? { swapped: money(t.swapped, currency) } : {}),
          ok,
        };
      });
  }
}

/** One payout's checks (spec §2): a row's own, or one it replaced (`name` prefixes its problems). */
function payoutProblems(m: Movements, p: { name?: string; status?: string; currency?: string; expected?: Dec; refundDue: boolean }) {
  const own = p.name === undefined;
  const debited = money(m.debit.negated(), p.currency);
  const problems: string[] = [];
  if (m.debits.length === 0) problems.push(`no debit ${own ? 'for this payout ' : ''}in the wallet transactions`);
  else if (p.expected !== undefined && !m.debit.negated().equals(p.expected))
    problems.push(`debited ${debited}, the results say ${money(p.expected, p.currency)}${own ? ' (totalDeductible)' : ''}`);
  if (m.debits.length > 1) problems.push(`${m.debits.length} debits reference ${own ? 'this payout' : 'it'}`);
  const inOtherCurrency = m.hits
    .filter((h) => p.currency && h.tx.currency && h.tx.currency !== p.currency)
    .map((h) => `transaction ${h.tx.id ?? '(no id)'} is in ${h.tx.currency}, the ${own ? 'row' : 'payout'} in ${p.currency}`);
  if (own) problems.push(...inOtherCurrency);
  if (p.refundDue) {
    if (m.credits.length === 0)
      problems.push(own ? `${p.status} but no refund in the wallet transactions yet` : 'no refund in the wallet transactions');
    else if (!m.refund.equals(m.debit.negated()))
      problems.push(`${own ? `${p.status}: ` : ''}refunded ${money(m.refund, p.currency)} of ${debited} debited`);
  } else if (m.credits.length > 0) {
    problems.push(`a credit of ${money(m.refund, p.currency)} references this payout, which is ${p.status ?? 'of unknown status'}`);
  }
  if (!own) problems.push(...inOtherCurrency);
  return own ? problems : problems.map((x) => `${p.name}: ${x}`);
}

/** A replaced payout was debited and refunded: nothing of it in the expected net. */
function tieOutEarlier(sums: CurrencySums, e: EarlierPayout, k: number, hits: Hit[], rowCurrency?: string) {
  const currency = e.currency || rowCurrency || hits[0]?.tx.currency;
  const m = movements(hits);
  const fee = readAmount(e.fee);
  const expected = fee === undefined ? undefined : readAmount(e.amount)!.plus(fee);
  const name = `earlier payout ${e.payoutRef || e.payoutId || `#${k + 1}`} (${e.status || 'status unknown'}, sent again)`;
  const problems = payoutProblems(m, { name, currency, expected, refundDue: true });
  sums.add(currency, m);
  return {
    payoutId: e.payoutId,
    payoutRef: e.payoutRef,
    status: e.status,
    ...shown(m, currency, expected, problems),
  };
}

function tieOutRow(r: ReconRow, hits: (slot: number) => Hit[], payouts: TieOutInput['payouts'], sums: CurrencySums) {
  const state = r.payoutId ? payouts.get(r.payoutId) : undefined;
  const mine = hits(-1);
  const status = state?.status ?? r.status;
  const currency = r.currency ?? state?.sourceCurrency ?? mine[0]?.tx.currency;
  const m = movements(mine);
  const read = readAmount(r.totalDeductible);
  const { total, fee } = state ?? {};
  // (§2's "amount debited" may add the fee: a sourceAmount listed as the amount sent plus its fee counts it once)
  // (the amount cell as the run read it: "1'234.56")
  const listed = fee && total?.equals(amountAsRead(r.amount ?? '')?.plus(fee.times(2)) ?? NaN) ? total.minus(fee) : total;
  const expected = read ?? listed;
  const problems = [...(r.problems ?? [])];
  if (r.payoutId) {
    if (state?.error) problems.push(`the service could not give payout ${r.payoutId}: ${state.error}`);
    if (r.totalDeductible?.trim() && read === undefined)
      problems.push(`totalDeductible ${JSON.stringify(r.totalDeductible)} is not an amount`);
    if (expected === undefined) problems.push('no totalDeductible in the results to check the debit against');
    const refundDue = isFailedAfterCreation(status);
    problems.push(...payoutProblems(m, { status, currency, expected, refundDue }));
    sums.add(currency, m, refundDue ? ZERO : expected);
  } else if (status === ENGINE_STATUSES.UNKNOWN_OUTCOME)
    problems.push('sent, its outcome not known: its payout may be debited; run the same command again to settle it, then reconcile');
  const earlier = (r.earlier ?? []).map((e, k) => tieOutEarlier(sums, e, k, hits(k), currency));
  problems.push(...earlier.flatMap((e) => e.problems));
  return {
    rowNumber: r.rowNumber,
    reference: r.reference,
    payoutId: r.payoutId,
    payoutRef: r.payoutRef,
    status,
    currency,
    walletId: mine.find((h) => h.tx.walletId)?.tx.walletId,
    created: !!r.payoutId,
    earlier,
    ...shown(m, currency, expected, problems),
  };
}

/**
 * A swap emits a debit and a credit sharing its reference (spec §4.7, §6); a REJECTED one is put
 * back in both (spec §3). Undefined for a swap that does not exist (not known, no movement).
 */
function tieOutSwap(w: ReconSwap, hits: readonly Hit[], sums: CurrencySums): SwapTieOut | undefined {
  if (!w.swap && !hits.length) return undefined;
  const to = w.swap?.destinationCurrency ?? w.currency;
  const from = w.swap?.sourceCurrency ?? hits.find((h) => h.tx.currency && h.tx.currency !== to)?.tx.currency;
  const leg = (c: string | undefined) => movements(hits.filter((h) => h.tx.currency === c));
  const [debitLeg, creditLeg] = [leg(from), leg(to)];
  const rejected = w.swap?.status === 'REJECTED';
  const problems: string[] = [];
  if (!debitLeg.debits.length) problems.push(`no debit in the ${from ?? 'source'} wallet`);
  if (!creditLeg.credits.length) problems.push(`no credit in the ${to} wallet`);
  const others = hits.filter((h) => h.tx.currency !== from && h.tx.currency !== to);
  if (others.length) problems.push(`${others.length} movement(s) of its reference in another currency`);
  const expect = (m: Movements, currency: string | undefined, amount: string | undefined, sign: 1 | -1) => {
    const want = rejected ? ZERO : readAmount(amount)?.times(sign);
    if (want !== undefined && m.hits.length && !net(m).equals(want))
      problems.push(`${rejected ? 'REJECTED: ' : ''}${money(net(m), currency)} ${currency} moved, the swap says ${money(want, currency)}`);
    sums.add(currency, m, want ?? net(m), true);
  };
  expect(debitLeg, from, w.swap?.sourceAmount, -1);
  expect(creditLeg, to, w.swap?.destinationAmount, 1);
  return {
    currency: w.currency,
    reference: w.reference,
    ...(w.swap ? { id: w.swap.id, status: w.swap.status } : {}),
    sourceCurrency: from,
    debit: money(net(debitLeg), from),
    destinationCurrency: to,
    credit: money(net(creditLeg), to),
    ...(w.swap?.exchangeRate ? { exchangeRate: w.swap.exchangeRate } : {}),
    transactionIds: movements(hits).ids,
    ok: problems.length === 0,
    problems: problems.map((p) => `swap ${w.reference}${w.swap ? ` (${w.swap.id})` : ''}: ${p}`),
  };
}

/** `--until`'s last instant: a date alone ("2025-01-31") ends at the end of that day, UTC. */
export function periodEnd(until: string | undefined): number | undefined {
  const t = zonedTime(until);
  return t !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(until!) ? t + 86_399_999 : t;
}

/**
 * From `--since`, else the batch's first movement, to `--until`, else no end (a debit after the
 * batch's last movement is judged too). An undated movement is placed by listing order (newest
 * first); with nothing to place it by it is counted in, so nothing unexplained is hidden.
 */
function periodOf(input: TieOutInput, mine: readonly Hit[]) {
  const created = [...mine.map((m) => m.tx.createdAt), ...[...input.payouts.values()].map((p) => p.createdAt)];
  const dates = created.flatMap((d) => utcTime(d) ?? []);
  const from = zonedTime(input.since) ?? (dates.length ? dates.reduce((x, y) => Math.min(x, y)) : undefined);
  const to = periodEnd(input.until);
  const byOrder = input.since === undefined && input.until === undefined && mine.length > 0;
  const oldest = mine.reduce((x, m) => Math.max(x, m.index), -Infinity);
  const used = { dates: false, order: false };
  const contains = ({ tx, index }: Hit): boolean => {
    const t = utcTime(tx.createdAt);
    if (t !== undefined && (from !== undefined || to !== undefined)) {
      used.dates = true;
      return (from === undefined || t >= from) && (to === undefined || t <= to);
    }
    if (!byOrder) return true;
    used.order = true;
    return index <= oldest;
  };
  const described = (): Period => ({
    from: from === undefined ? undefined : new Date(from).toISOString(),
    to: to === undefined ? undefined : new Date(to).toISOString(),
    by: used.dates ? 'dates' : used.order ? 'listing order' : 'none',
  });
  return { contains, described };
}

const foreign = (tx: ReconTx, explainedBy?: string) => ({
  id: tx.id,
  type: tx.amount.isNegative() ? ('DEBIT' as const) : ('CREDIT' as const),
  amount: money(tx.amount, tx.currency),
  currency: tx.currency,
  walletId: tx.walletId,
  reference: tx.reference,
  createdAt: tx.createdAt,
  ...(explainedBy ? { explainedBy } : {}),
});

/**
 * A debit no row explains: another batch's payout (by payoutRef or metadata id), else a swap (spec
 * §4.7: debit and credit share the reference in two currencies; a refund is in the debit's own).
 */
function explainer(batches: readonly LedgerBatch[], transactions: readonly ReconTx[]) {
  const owners = payoutIndex<string>();
  for (const b of batches) {
    for (const r of b.payoutRefs) owners.add(b.name, undefined, r);
    for (const id of b.payoutIds) owners.add(b.name, id);
  }
  return (tx: ReconTx): string | undefined => {
    const batch = owners.of(tx);
    if (batch) return batch;
    const leg = transactions.find(
      (c) => tx.reference && c.reference === tx.reference && !c.amount.isNegative() && c.currency !== tx.currency,
    );
    return leg ? `swap to the ${leg.currency} wallet${leg.walletId ? ` ${leg.walletId}` : ''}` : undefined;
  };
}

const unexplainedProblem = (f: ForeignTransaction) =>
  `unexplained debit ${f.amount} ${f.currency ?? ''}${f.walletId ? ` in wallet ${f.walletId}` : ''}${f.createdAt ? ` at ${f.createdAt}` : ''} (reference ${f.reference || '(none)'}${f.id ? `, transaction ${f.id}` : ''})`.replace(
    / {2,}/g,
    ' ',
  );

/**
 * `unexplained`: debits no row, batch or swap explains (`others`, not a failure); `explained`: those another batch
 * or a swap explains; `otherCredits`: credits no row explains (top-ups...).
 */
export function tieOut(input: TieOutInput) {
  const { matched, unmatched, swapHits } = matchTransactions(input.rows, input.transactions, input.swaps);
  const sums = new CurrencySums();
  const copied = copiedPayouts();
  const rows = input.rows.map((r, i) => {
    const why = copied(r.payoutId, r.rowNumber);
    if (!why) return tieOutRow(r, (slot) => matched.get(`${i},${slot}`) ?? [], input.payouts, sums);
    // (the row naming the payout first ties it out; the copy adds nothing)
    const copy = { ...r, payoutId: undefined, earlier: undefined, problems: [...(r.problems ?? []), why] };
    return { ...tieOutRow(copy, () => [], input.payouts, sums), payoutId: r.payoutId };
  });
  const problems = rows.flatMap((r) => r.problems.map((p) => `row ${r.rowNumber}${r.reference ? ` ${r.reference}` : ''}: ${p}`));
  const swaps = (input.swaps ?? []).flatMap((w) => tieOutSwap(w, swapHits.get(w.reference) ?? [], sums) ?? []);
  problems.push(...swaps.flatMap((w) => w.problems));

  const period = periodOf(input, [...[...matched.values()].flat(), ...[...swapHits.values()].flat()]);
  const inPeriod = unmatched.filter(period.contains).map((h) => h.tx);
  const explain = explainer(input.ledgerBatches ?? [], input.transactions);
  const debits = inPeriod.filter((tx) => tx.amount.isNegative()).map((tx) => foreign(tx, explain(tx)));
  const unexplained = debits.filter((f) => !f.explainedBy);
  const totals = sums.tieOuts(problems);

  const created = rows.filter((r) => r.created);
  return {
    ok: problems.length === 0,
    rows,
    unexplained,
    explained: debits.filter((f) => f.explainedBy),
    otherCredits: inPeriod.filter((tx) => !tx.amount.isNegative()).map((tx) => foreign(tx)),
    totals,
    swaps,
    period: period.described(),
    problems,
    others: unexplained.map(unexplainedProblem),
    counts: {
      rows: rows.length,
      created: created.length,
      tiedOut: created.filter((r) => r.ok).length,
      failedRefunded: created.filter((r) => r.ok && isFailedAfterCreation(r.status)).length,
      earlierRefunded: rows.reduce((n, r) => n + r.earlier.filter((e) => e.ok).length, 0),
      transactions: input.transactions.length,
    },
  };
}

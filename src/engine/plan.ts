// The plan of a batch: which rows go, the totals per source currency with estimated fees, each
// wallet's balance after the batch, corridors not enabled, the requests the run will use against
// the monthly quota. Pure: computed from the loaded batch, the preflight and the journal.
import { Dec, ExactSum, formatAmount, fromApi, type ApiAmount, type Dec as DecT } from '../money.ts';
import type { UsageReport } from '../client/quota.ts';
import type { FoldedJournal } from '../journal/rows.ts';
import { rowState } from '../journal/rows.ts';
import type { EngineRow, LoadedBatch } from './batch.ts';
import type { PreflightResult, RowIssue } from './preflight.ts';

export interface CurrencyPlan {
  currency: string;
  rows: number;
  amount: string;
  /** Estimated fees of the rows whose fee is known before sending. */
  estimatedFees: string;
  /** Rows whose fee is not known before sending (the service's answer decides): not in estimatedFees. */
  feesNotKnown?: number;
  total: string;
  /** Absent when the service's wallet listing gives no balance we can read: no funds check here. */
  balance?: string;
  balanceAfter?: string;
  shortfall?: string;
}

export interface BatchPlan {
  batchId: string;
  env: string;
  file: string;
  rows: number;
  valid: number;
  invalid: number;
  /** Rows this run will send (new attempts or settling an unknown outcome). */
  toSend: number[];
  /** Rows whose payout already exists (a resumed batch). */
  created: number[];
  /** Valid rows left out: shortfall under --allow-partial, corridor not enabled. */
  notSent: Map<number, RowIssue>;
  /** Invalid rows, with the preflight's findings (prohibited country, method, required fields). */
  invalidRows: Map<number, { code: string; message: string }>;
  alreadyCreated: number;
  toSettle: number;
  currencies: CurrencyPlan[];
  corridorsNotEnabled: {
    sourceCurrency: string;
    destinationCurrency: string;
    destinationCountryCode: string;
    pairId?: string;
    rows: number;
  }[];
  warnings: string[];
  requests: { preflight: number; estimate: number; usedThisMonth?: number; quota?: number };
  /** Rows of toSend whose payout failed after creation and was refunded: sent again, by source currency (amounts, fees not included). */
  resend?: { rows: number; byCurrency: { currency: string; rows: number; amount: string }[] };
  /** Blocks the run unless --allow-partial. */
  shortfall: boolean;
  /** Valid rows held back only because of a corridor not enabled (blocks unless --allow-partial or --enable-pairs). */
  corridorBlocked: boolean;
}

export interface PlanOptions {
  allowPartial: boolean;
  quote: boolean;
  mergeDocuments: boolean;
  usage?: UsageReport;
  /** Row numbers to consider (retry: the rows not created yet). Default: every row. */
  only?: Set<number>;
  /** Quoted totals from a plan file (row number → fee), preferred to the estimates. */
  quotedFees?: Map<number, DecT>;
  /** References whose payout failed after creation and was refunded, to send again (retry --resend-failed). */
  resend?: Set<string>;
}

export function buildPlan(batch: LoadedBatch, pf: PreflightResult, folded: FoldedJournal, env: string, o: PlanOptions): BatchPlan {
  const invalidRows = new Map<number, { code: string; message: string }>();
  const notSent = new Map<number, RowIssue>();
  const candidates: { rowNumber: number; currency: string; amount: DecT; fee: DecT; feeNotKnown: boolean; settling: boolean }[] = [];
  let valid = 0;
  let alreadyCreated = 0;
  const created: number[] = [];
  let toSettle = 0;
  let estimate = 0;
  const blockedCorridors = new Map<string, BatchPlan['corridorsNotEnabled'][number]>();
  for (const r of batch.rows) {
    if (o.only && !o.only.has(r.rowNumber)) continue;
    // created by an earlier run and not validated again (loadBatch): its journal state says created
    if (r.created && rowState(folded, r.created.reference).phase === 'created') {
      valid++;
      alreadyCreated++;
      created.push(r.rowNumber);
      continue;
    }
    if (!r.payout) {
      const e = r.problems.find((p) => p.severity === 'error');
      invalidRows.set(r.rowNumber, { code: e?.code ?? 'INVALID', message: e?.message ?? 'invalid row' });
      continue;
    }
    const s = rowState(folded, r.payout.reference);
    const resending = s.phase === 'created' && !!o.resend?.has(r.payout.reference);
    if (s.phase === 'created' && !resending) {
      valid++;
      alreadyCreated++;
      created.push(r.rowNumber);
      continue;
    }
    const issue = pf.rowIssues.get(r.rowNumber);
    if (issue && s.phase !== 'initiating' && s.phase !== 'unknown') {
      if (issue.status === 'INVALID') {
        invalidRows.set(r.rowNumber, { code: issue.code, message: issue.message });
      } else {
        valid++;
        notSent.set(r.rowNumber, issue);
        const p = r.payout;
        const k = `${p.sourceCurrency}>${p.destinationCurrency}@${p.destinationCountryCode}`;
        const c = pf.corridors.find((x) => `${x.sourceCurrency}>${x.destinationCurrency}@${x.destinationCountryCode}` === k);
        const b = blockedCorridors.get(k) ?? {
          sourceCurrency: p.sourceCurrency,
          destinationCurrency: p.destinationCurrency,
          destinationCountryCode: p.destinationCountryCode,
          pairId: c?.pairId,
          rows: 0,
        };
        b.rows++;
        blockedCorridors.set(k, b);
      }
      continue;
    }
    valid++;
    if (s.phase === 'conflict') continue;
    const settling = s.phase === 'initiating' || s.phase === 'unknown';
    if (settling) toSettle++;
    const known = o.quotedFees?.get(r.rowNumber) ?? pf.estimatedFees.get(r.rowNumber);
    const fee = known ?? new Dec(0);
    const feeNotKnown = known === undefined && pf.feesUnknown.has(r.rowNumber);
    candidates.push({
      rowNumber: r.rowNumber,
      currency: r.payout.sourceCurrency,
      amount: r.payout.sourceAmount,
      fee,
      feeNotKnown,
      settling,
    });
    const docs = r.payout.documents.length;
    const uploads = docs === 0 ? 0 : o.mergeDocuments ? 1 : docs;
    estimate += settling ? 1 : (o.quote ? 1 : 0) + uploads * 2 + 1 + (!o.mergeDocuments && docs > 1 ? 1 : 0);
  }

  // Balances: rows in file order take from their wallet; under --allow-partial a row that no
  // longer fits is left out (NOT_SENT), otherwise the batch stops before the first payout.
  // A wallet without a readable balance ("other wallet fields: not shown", spec §2) is not checked
  // here: the service's INSUFFICIENT_FUNDS decides, and the plan says so.
  const balances = new Map<string, DecT>();
  const balanceNotKnown = new Set<string>();
  for (const w of pf.wallets) {
    if (w.balance === undefined) balanceNotKnown.add(w.currency);
    else balances.set(w.currency, fromApi(w.balance));
  }
  const used = new Map<string, { rows: number; amount: DecT; fees: DecT; feesNotKnown: number }>();
  const wanted = new Map<string, DecT>();
  const toSend: number[] = [];
  const resendRows = new Set(
    batch.rows
      .filter((r) => r.payout && o.resend?.has(r.payout.reference) && rowState(folded, r.payout.reference).phase === 'created')
      .map((r) => r.rowNumber),
  );
  const resendBy = new Map<string, { rows: number; amount: DecT }>();
  for (const c of candidates) {
    wanted.set(c.currency, (wanted.get(c.currency) ?? new Dec(0)).plus(c.amount).plus(c.fee));
    const u = used.get(c.currency) ?? { rows: 0, amount: new Dec(0), fees: new Dec(0), feesNotKnown: 0 };
    const balance = balances.get(c.currency) ?? new Dec(0);
    const after = u.amount.plus(u.fees).plus(c.amount).plus(c.fee);
    // A row being settled may already be debited: it always goes (it cannot pay twice).
    if (!c.settling && !balanceNotKnown.has(c.currency) && after.greaterThan(balance) && o.allowPartial) {
      notSent.set(c.rowNumber, {
        status: 'NOT_SENT',
        code: 'INSUFFICIENT_FUNDS',
        message: `left out by --allow-partial: the ${c.currency} wallet does not cover it after the rows before it`,
      });
      continue;
    }
    u.rows++;
    u.amount = u.amount.plus(c.amount);
    u.fees = u.fees.plus(c.fee);
    if (c.feeNotKnown) u.feesNotKnown++;
    used.set(c.currency, u);
    toSend.push(c.rowNumber);
    if (resendRows.has(c.rowNumber)) {
      const b = resendBy.get(c.currency) ?? { rows: 0, amount: new Dec(0) };
      b.rows++;
      b.amount = b.amount.plus(c.amount);
      resendBy.set(c.currency, b);
    }
  }
  let shortfall = false;
  const currencies: CurrencyPlan[] = [];
  for (const [ccy, u] of [...used].sort(([a], [b]) => a.localeCompare(b))) {
    const balance = balances.get(ccy) ?? new Dec(0);
    const total = u.amount.plus(u.fees);
    const after = balance.minus(total);
    const cp: CurrencyPlan = {
      currency: ccy,
      rows: u.rows,
      amount: formatAmount(u.amount, ccy),
      estimatedFees: formatAmount(u.fees, ccy),
      total: formatAmount(total, ccy),
    };
    if (u.feesNotKnown) cp.feesNotKnown = u.feesNotKnown;
    if (!balanceNotKnown.has(ccy)) {
      cp.balance = formatAmount(balance, ccy);
      cp.balanceAfter = formatAmount(after, ccy);
    }
    if (!balanceNotKnown.has(ccy) && after.isNegative()) {
      shortfall = true;
      cp.shortfall = formatAmount(after.negated(), ccy);
    }
    currencies.push(cp);
  }
  for (const [ccy, w] of wanted) {
    const u = used.get(ccy);
    if (!u && w.greaterThan(0)) {
      // Every row of this currency was left out by --allow-partial: still show the wallet.
      const balance = balances.get(ccy) ?? new Dec(0);
      currencies.push({
        currency: ccy,
        rows: 0,
        amount: formatAmount(new Dec(0), ccy),
        estimatedFees: formatAmount(new Dec(0), ccy),
        total: formatAmount(new Dec(0), ccy),
        ...(balanceNotKnown.has(ccy) ? {} : { balance: formatAmount(balance, ccy), balanceAfter: formatAmount(balance, ccy) }),
      });
    }
  }
  const warnings = [...pf.warnings];
  for (const ccy of [...balanceNotKnown].filter((c) => wanted.has(c)).sort()) {
    warnings.push(
      `the ${ccy} wallet's balance is not in the service's answer: funds are not checked before sending (the service's INSUFFICIENT_FUNDS decides)`,
    );
  }
  const usedThisMonth = o.usage?.used;
  const quota = o.usage?.quota;
  const totalEstimate = estimate + pf.requests;
  if (usedThisMonth !== undefined && quota !== undefined && usedThisMonth + totalEstimate > quota) {
    warnings.push(
      `this batch needs about ${totalEstimate} requests and this key has used ${usedThisMonth} of ${quota} this month (as counted here): the monthly quota may run out`,
    );
  }
  const corridorBlocked = [...notSent.values()].some((i) => i.code !== 'INSUFFICIENT_FUNDS');
  return {
    batchId: batch.identity.batchId,
    env,
    file: batch.file,
    rows: o.only ? o.only.size : batch.rows.length,
    valid,
    invalid: invalidRows.size,
    toSend,
    created,
    notSent,
    invalidRows,
    alreadyCreated,
    toSettle,
    currencies,
    corridorsNotEnabled: [...blockedCorridors.values()],
    warnings,
    requests: { preflight: pf.requests, estimate: totalEstimate, usedThisMonth, quota },
    shortfall,
    corridorBlocked,
    resend: {
      rows: [...resendBy.values()].reduce((n, b) => n + b.rows, 0),
      byCurrency: [...resendBy]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([currency, b]) => ({ currency, rows: b.rows, amount: formatAmount(b.amount, currency) })),
    },
  };
}

/**
 * The rows the batch pays (already created, and to send now) with their totals by currency:
 * amounts before fees, and amounts plus (estimated) fees. What the control totals compare with,
 * so the same command gives the same answer when it resumes.
 */
export function payableTotals(
  batch: LoadedBatch,
  plan: BatchPlan,
  feeOf: (r: EngineRow, index: number) => DecT | ApiAmount | undefined,
): { rows: number; amounts: Map<string, DecT>; withFees: Map<string, DecT> } {
  // the payable rows by row number: flags, not a Set of 100,000 numbers (a resumed batch)
  let last = 0;
  for (const n of plan.toSend) last = Math.max(last, n);
  for (const n of plan.created) last = Math.max(last, n);
  const pay = new Uint8Array(last + 1);
  let rows = 0;
  for (const list of [plan.toSend, plan.created]) {
    for (const n of list) {
      if (pay[n] === 0) rows++;
      pay[n] = 1;
    }
  }
  // exact sums (decimal.js)
  const amounts = new Map<string, ExactSum>();
  const withFees = new Map<string, ExactSum>();
  for (let i = 0; i < batch.rows.length; i++) {
    const r = batch.rows[i]!;
    if (pay[r.rowNumber] !== 1) continue;
    const p = r.payout ?? r.created;
    if (!p) continue;
    const c = p.sourceCurrency;
    let a = amounts.get(c);
    let w = withFees.get(c);
    if (!a || !w) {
      amounts.set(c, (a = new ExactSum()));
      withFees.set(c, (w = new ExactSum()));
    }
    // a row created before counts what the service debited, as the journal has it
    if (r.payout) {
      a.add(r.payout.sourceAmount);
      w.add(r.payout.sourceAmount);
    } else {
      a.addApi(r.created!.sourceAmount);
      w.addApi(r.created!.sourceAmount);
    }
    const fee = feeOf(r, i);
    if (typeof fee === 'number' || typeof fee === 'string') w.addApi(fee);
    else if (fee) w.add(fee);
  }
  const value = (m: Map<string, ExactSum>) => new Map([...m].map(([c, s]) => [c, s.value()]));
  return { rows, amounts: value(amounts), withFees: value(withFees) };
}

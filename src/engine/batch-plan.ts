// The plan of a batch: which rows go, totals per source currency with their fees (quoted: exact;
// the methods route's: estimated, with a margin), wallets after the batch, the swaps that would
// fund a short wallet, corridors not enabled, and the requests by kind. Pure.
import type { RowList } from '../files/spill.ts';
import * as z from 'zod';
import { Dec, formatAmount, fromApi, minorUnits, type ApiAmount, type Dec as DecT } from '../money.ts';
import { quotaSentence, type UsageReport } from '../client/quota.ts';
import { resendBegun, rowState, type FoldedJournal, type PayoutSnapshot } from '../journal/lines.ts';
import { referenceOf, type EngineRow, type LoadedBatch } from './prepare.ts';
import { sentElsewhereText, type SentElsewhere } from '../ledger/account-ledger.ts';
import { ENGINE_STATUSES } from './outcome.ts';
import { corridorKey, rowsText, type CorridorInfo, type PreflightResult, type RowIssue } from './preflight.ts';
import { PROBLEM_CODES, type Problem, type ProblemCode } from '../validation/problems.ts';
import type { PayoutRow } from '../validation/row-schemas.ts';
import { proposeSwaps, swapMadeText, swapReferences, type SwapNeed, type SwapProposal, type SwapRefusal } from './swap.ts';
import type { SwapRequest } from '../spec/schemas.ts';
import { hitText, type Screened } from './screen-batch.ts';
import { byText, plural } from '../text.ts';
import { unsettled, unsettledBody } from './session.ts';
import { LIST_MAX_LIMIT } from '../spec/codes.ts';

const HELD = ENGINE_STATUSES.HELD_SCREENING;

export type CurrencyPlan = {
  currency: string;
  rows: number;
  amount: string;
  /** The fees known before sending: quoted (exact) or the methods route's (estimated). */
  estimatedFees: string;
  /** Rows whose fee is estimated; absent: every known fee was quoted. */
  feesEstimated?: number;
  feeMargin?: string;
  /** Rows whose fee only the service's answer decides: not in estimatedFees. */
  feesNotKnown?: number;
  total: string;
  /** Absent when the wallet listing gives no readable balance: no funds check here. */
  balance?: string;
  /** What the swaps that fund the batch move in (+) or out (-) of this wallet. */
  swap?: string;
  balanceAfter?: string;
  shortfall?: string;
};

/** A valid row left out, and why; ALREADY_PAID: with the payout that paid its reference, when the ledger has it. */
export type LeftOut = RowIssue & { payout?: PayoutSnapshot };

const leftOut = (code: string, message: string, payout?: PayoutSnapshot): LeftOut => ({
  status: 'NOT_SENT',
  code,
  message,
  ...(payout ? { payout } : {}),
});

type BlockedCorridor = Pick<CorridorInfo, 'sourceCurrency' | 'destinationCurrency' | 'destinationCountryCode' | 'pairId'> & {
  rows: number;
};

/** A row created by an earlier run: never sent again. */
interface CreatedRow {
  rowNumber: number;
  /** As journalled at creation: what the totals count for it. */
  debit?: Pick<PayoutSnapshot, 'sourceCurrency' | 'sourceAmount'>;
}

export interface BatchPlan {
  batchId: string;
  /** The sha256 of the batch file as read (the batch id too, unless a --batch-id or a sheet of its own names the batch). */
  fileSha256: string;
  env: string;
  file: string;
  message?: { id: string; version: string };
  rows: number;
  valid: number;
  invalid: number;
  /** Rows this run will send (new attempts or settling an unknown outcome). */
  toSend: number[];
  created: CreatedRow[];
  /** Valid rows left out: shortfall under --allow-partial, corridor not enabled, a reference another batch sent. */
  notSent: Map<number, LeftOut>;
  /** Invalid rows, with the preflight's findings. */
  invalidRows: Map<number, InvalidRow>;
  alreadyCreated: number;
  toSettle: number;
  currencies: CurrencyPlan[];
  corridorsNotEnabled: BlockedCorridor[];
  warnings: string[];
  /** Rows to send with no supporting document (validate's NO_DOCUMENT). */
  withoutDocument?: number;
  requests: RequestCost;
  /** Rows sent again after a refunded failure, by source currency (fees not included). */
  resend?: { rows: number; byCurrency: { currency: string; rows: number; amount: string }[] };
  /** At most one swap per short currency (spec §4.7). */
  swaps: SwapProposal[];
  swapRefusals: SwapRefusal[];
  /** The swaps fund this batch: the balances after count them. */
  fundedBySwaps: boolean;
  /** --sanctions-list: the held rows are also in notSent (HELD_SCREENING). */
  screening?: Screened;
  /** Blocks the run unless --allow-partial. */
  shortfall: boolean;
  /** Rows held back by a corridor not enabled (blocks unless --allow-partial or --enable-pairs). */
  corridorBlocked: boolean;
}

const count = z.number().int().nonnegative();

/**
 * The requests a batch will spend, by kind: each counts against the key's month (spec §8) but the
 * PUTs to the document storage's presigned URL (spec §4.6), listed, not in the estimate.
 */
export const RequestCostSchema = z.object({
  /** Every kind below but storagePuts. */
  estimate: count,
  preflight: count,
  /** `plan --out`: one per corridor, method and fee band of the rows to send; `run` sends none. */
  quotes: count.default(0),
  /** One per distinct document content (sha256) among the rows to send. */
  uploadUrls: count.default(0),
  storagePuts: count.default(0),
  initiates: count.default(0),
  /** One per row naming more than one document (none under --merge-documents). */
  patches: count.default(0),
  /** Four per swap: the swaps list, the pairs, the swap, the wallets after it. */
  swapRequests: count.default(0),
  /** One payout list page (100 payouts) per 100 initiates: reads back what an answer lacked (spec §4.2, execute.ts completeCreated). */
  listPages: count.default(0),
  /** This key's month as counted here (client/quota.ts). */
  usedThisMonth: count.optional(),
  quota: count.optional(),
  remaining: count.optional(),
});
export type RequestCost = z.infer<typeof RequestCostSchema>;

export interface PlanOptions {
  allowPartial: boolean;
  /** `plan --out` without --no-quote: once per corridor, method and fee band. */
  quoteRows?: boolean;
  mergeDocuments: boolean;
  usage?: UsageReport;
  /** Row numbers to consider (default every row). */
  only?: Set<number>;
  /** A plan file's quoted fees by row number, preferred to the estimates. */
  quotedFees?: Map<number, DecT>;
  /** retry --resend-failed. */
  resend?: Set<string>;
  /** `retry` sends a refused row again; `run` and `plan` (its preview) never. */
  mode?: 'run' | 'retry';
  /** References other batches of the account sent: left out, whatever `only` says. */
  sentElsewhere?: Map<string, SentElsewhere>;
  fundBySwap?: boolean;
  /** --swap-from CUR. */
  swapFrom?: string;
  /** `run --plan`: approved, used as they are, never priced again. */
  approvedSwaps?: SwapProposal[];
  screened?: Screened;
}

/** An invalid row's first error; `problem`, validation's (its column and what would be valid), for the plan's text. */
export type InvalidRow = { code: string; message: string; problem?: Problem };

/** What the plan makes of one row before the wallets are looked at (a conflict, a refusal outside retry: not sent, not reported here). */
type RowVerdict =
  | { kind: 'created'; debit?: PayoutSnapshot }
  | ({ kind: 'invalid' } & InvalidRow)
  /** held: a corridor not enabled; elsewhere: sent by another batch of the account; notDue: dated later (ReqdExctnDt). */
  | { kind: 'held' | 'elsewhere' | 'screened' | 'notDue'; issue: LeftOut }
  | { kind: 'conflict' }
  | { kind: 'candidate'; candidate: Candidate };

/** A row that may go, before balances: what it takes from its wallet. */
interface Candidate {
  /** Its number and what the request count reads, no more: a whole row per candidate would hold the batch in memory. */
  payout: Pick<PayoutRow, 'rowNumber' | 'documents'>;
  currency: string;
  amount: DecT;
  fee: DecT;
  /** The methods route's fee: the balance check keeps a margin for it. */
  feeEstimated: boolean;
  feeNotKnown: boolean;
  /** Resent with its journalled key and body. */
  settling: boolean;
  resending: boolean;
}

function verdictOf(r: EngineRow, folded: FoldedJournal, pf: PreflightResult, o: PlanOptions): RowVerdict {
  const ref = referenceOf(r);
  const s = ref === undefined ? undefined : rowState(folded, ref);
  const resending = !!r.payout && !!s && ((s.phase === 'created' && !!o.resend?.has(r.payout.reference)) || resendBegun(s));
  // A payout that exists is never sent again, whatever the file says of the row now.
  if (s?.phase === 'created' && !resending)
    return s.payout?.existedBefore ? { kind: 'elsewhere', issue: alreadyPaidIssue(s.payout) } : { kind: 'created', debit: s.payout };
  if (!r.payout || !s) {
    const e = r.problems.find((p) => p.severity === 'error');
    return { kind: 'invalid', code: e?.code ?? 'INVALID', message: e?.message ?? 'invalid row', problem: e };
  }
  const elsewhere = (s.phase === 'none' || s.phase === 'rejected') && o.sentElsewhere?.get(r.payout.reference);
  if (elsewhere) return { kind: 'elsewhere', issue: sentElsewhereIssue(elsewhere) };
  // (a row the service refused: reported as it is, only `retry` sends it again)
  if (s.phase === 'rejected' && o.mode !== 'retry') return { kind: 'conflict' };
  // (a row being settled too: resent, a payout not created yet would be)
  const held = o.screened?.held.get(r.rowNumber);
  if (held) return { kind: 'screened', issue: leftOut(HELD, `held by sanctions screening: ${held.hits.map(hitText).join('; ')}`) };
  if (s.held && !o.screened?.lists.length) return { kind: 'screened', issue: leftOut(HELD, heldBefore(s.held.at)) };
  const settling = unsettled(s);
  const issue = pf.rowIssues.get(r.rowNumber);
  // (a row being settled goes whatever preflight says: its journalled body is what is resent)
  if (issue && !settling) {
    return issue.status === 'INVALID' ? { kind: 'invalid', code: issue.code, message: issue.message } : { kind: 'held', issue };
  }
  if (s.phase === 'conflict') return { kind: 'conflict' };
  const due = r.payout.notBefore;
  if (due && due > new Date().toISOString().slice(0, 10) && !settling)
    return { kind: 'notDue', issue: leftOut(NOT_DUE, `not due until ${due} (ReqdExctnDt, a UTC day): not sent before that day`) };
  const quoted = o.quotedFees?.get(r.rowNumber);
  const known = quoted ?? pf.estimatedFees.get(r.rowNumber);
  const candidate: Candidate = {
    payout: { rowNumber: r.payout.rowNumber, documents: r.payout.documents },
    currency: r.payout.sourceCurrency,
    amount: r.payout.sourceAmount,
    fee: known ?? new Dec(0),
    feeEstimated: quoted === undefined && known !== undefined,
    feeNotKnown: known === undefined && pf.feesUnknown.has(r.rowNumber),
    settling,
    resending,
  };
  return { kind: 'candidate', candidate };
}

const heldBefore = (at: string) =>
  `held by sanctions screening on ${at.slice(0, 10)} (UTC) and not screened since: run with --sanctions-list to screen it again (an approved clearance, screen --clear, lets a false positive go)`;

/** The code of a row dated later (ReqdExctnDt): a run or retry of the same file on or after its date sends it. */
export const NOT_DUE = 'NOT_DUE';

/** The codes of a row left out because another batch of the account sent its reference. */
export const SENT_ELSEWHERE: ReadonlySet<string> = new Set([ENGINE_STATUSES.ALREADY_PAID, 'SENT_BY_ANOTHER_BATCH']);

function sentElsewhereIssue(x: SentElsewhere): LeftOut {
  if (x.phase === 'held') return leftOut(HELD, sentElsewhereText(x));
  const code = x.phase === 'created' ? ENGINE_STATUSES.ALREADY_PAID : 'SENT_BY_ANOTHER_BATCH';
  const message = `${sentElsewhereText(x)}: left out, a reference is paid once per account`;
  return leftOut(code, message, x.payout);
}

/** A payout the service answered with that existed before this batch sent it. */
function alreadyPaidIssue(p: PayoutSnapshot): LeftOut {
  const message = `already paid at this account (payout ${p.payoutRef ?? p.id}, created ${p.existedBefore}, before this batch sent it)`;
  return leftOut(ENGINE_STATUSES.ALREADY_PAID, message, p);
}

/**
 * What the rows to send will cost: a row being settled resends its initiate alone; a new attempt
 * sends an initiate, an upload per document content not uploaded yet, and one PATCH for the rest.
 */
export function requestCost(
  rows: readonly { payout: Pick<PayoutRow, 'rowNumber' | 'documents'>; settling: boolean }[],
  sha256Of: (path: string) => string | undefined,
  o: Pick<PlanOptions, 'quoteRows' | 'mergeDocuments' | 'usage'> & {
    preflight: number;
    quoteGroups?: ReadonlyMap<number, string>;
    swaps?: number;
  },
): RequestCost {
  const contents = new Set<string>();
  let patches = 0;
  for (const { payout: p, settling } of rows) {
    if (settling || !p.documents.length) continue;
    const digests = [...new Set(p.documents.map((d) => sha256Of(d) ?? `path:${d}`))]; // (the same bytes twice: sent once)
    // --merge-documents: one PDF of the row's files, the same bytes for the same files (documents.ts)
    if (o.mergeDocuments && digests.length > 1) contents.add(`merged:${digests.join('|')}`);
    else {
      for (const d of digests) contents.add(d);
      if (digests.length > 1) patches++;
    }
  }
  // one quote per corridor, method and fee band (preflight's quoteGroups), never per row
  const quotes = o.quoteRows ? new Set(rows.map(({ payout: p }) => o.quoteGroups?.get(p.rowNumber) ?? `row ${p.rowNumber}`)).size : 0;
  const [uploads, u, swapRequests, listPages] = [contents.size, o.usage, 4 * (o.swaps ?? 0), Math.ceil(rows.length / LIST_MAX_LIMIT)];
  return {
    estimate: o.preflight + quotes + uploads + rows.length + patches + swapRequests + listPages,
    preflight: o.preflight,
    quotes,
    uploadUrls: uploads,
    storagePuts: uploads,
    initiates: rows.length,
    patches,
    swapRequests,
    listPages,
    ...(u ? { usedThisMonth: u.used, quota: u.quota, remaining: u.remaining } : {}),
  };
}

/** The kinds of a cost that are not zero, for a person. */
export function requestKindsText(r: RequestCost): string {
  const kinds: [number, string][] = [
    [r.preflight, 'preflight'],
    [r.quotes, 'quote (one per corridor, method and fee band: rates indicative, not locked)'],
    [r.uploadUrls, 'upload-url'],
    [r.initiates, 'initiate'],
    [r.patches, 'PATCH documents'],
    [r.swapRequests, 'for the swaps (list, pairs, swap, wallets)'],
    [r.listPages, 'payout list page (an answer lacking the fee read back)'],
  ];
  const text = kinds.filter(([n]) => n > 0).map(([n, k]) => `${n} ${k}`);
  return (text.join(', ') || 'none') + (r.storagePuts ? ` (+ ${r.storagePuts} storage PUTs, not counted)` : '');
}

/** The guard of --max-requests N (a watch's maxRequests): why the batch is refused, or undefined. */
export function requestLimitReason(r: RequestCost, max: number | undefined): string | undefined {
  if (max === undefined || r.estimate <= max) return undefined;
  return `--max-requests ${max}, but this batch needs about ${plural(r.estimate, 'request')} of the key's month (${requestKindsText(r)})`;
}

/** The rows by verdict in one pass: created, invalid, left out (with the corridors not enabled), and the candidates in file order. */
function sortRows(batch: LoadedBatch, pf: PreflightResult, folded: FoldedJournal, o: PlanOptions) {
  const invalidRows = new Map<number, InvalidRow>();
  const notSent = new Map<number, LeftOut>();
  const blockedCorridors = new Map<string, BlockedCorridor>();
  const candidates: Candidate[] = [];
  const created: CreatedRow[] = [];
  let valid = 0;
  // (every row of the batch, not --plan's or retry's alone: the plan, its run and reconcile name the same swap)
  const paying: { reference: string; currency: string }[] = [];
  for (const r of batch.rows) {
    if (r.payout) paying.push({ reference: r.payout.reference, currency: r.payout.sourceCurrency });
    const v = verdictOf(r, folded, pf, o);
    // (out of scope too: a row `run --plan` leaves out says why in the results)
    if (v.kind === 'elsewhere') notSent.set(r.rowNumber, v.issue);
    if (o.only && !o.only.has(r.rowNumber)) continue;
    if (v.kind === 'invalid') {
      invalidRows.set(r.rowNumber, { code: v.code, message: v.message, problem: v.problem });
      continue;
    }
    valid++;
    if (v.kind === 'created') created.push({ rowNumber: r.rowNumber, debit: v.debit });
    else if (v.kind === 'candidate') candidates.push(v.candidate);
    else if (v.kind !== 'conflict') notSent.set(r.rowNumber, v.issue);
    if (v.kind !== 'held') continue;
    const p = r.payout!;
    const k = corridorKey(p);
    const b = blockedCorridors.get(k) ?? {
      sourceCurrency: p.sourceCurrency,
      destinationCurrency: p.destinationCurrency,
      destinationCountryCode: p.destinationCountryCode,
      pairId: pf.corridors.find((c) => corridorKey(c) === k)?.pairId,
      rows: 0,
    };
    b.rows++;
    blockedCorridors.set(k, b);
  }
  return { invalidRows, notSent, blockedCorridors, candidates, created, valid, paying };
}

/** The wallets; one without a readable balance (spec §2) is left to the service's INSUFFICIENT_FUNDS. */
function walletsOf(pf: PreflightResult) {
  const wallets = pf.wallets.map((w) => ({ ...w, balance: w.balance === undefined ? undefined : fromApi(w.balance) }));
  const balances = new Map(wallets.flatMap((w) => (w.balance === undefined ? [] : [[w.currency, w.balance] as const])));
  const balanceNotKnown = new Set(wallets.filter((w) => w.balance === undefined).map((w) => w.currency));
  return { wallets, balances, balanceNotKnown };
}

const ZERO = new Dec(0);
/**
 * A currency's sums over no rows. `estimated`: the part of `fees` that is the methods route's, over `feesEstimated` rows;
 * `settling`: of `amount` and `fees`, the rows being settled: their debit may be in the balance already.
 */
const NO_TOTALS = { rows: 0, amount: ZERO, fees: ZERO, estimated: ZERO, feesEstimated: 0, feesNotKnown: 0, settling: ZERO };
type Totals = typeof NO_TOTALS;

/** Each currency's totals over the rows given, in the order its first row comes. */
function totalsOf(candidates: readonly Candidate[]): Map<string, Totals> {
  const by = new Map<string, Totals>();
  for (const c of candidates) {
    const t = by.get(c.currency) ?? NO_TOTALS;
    by.set(c.currency, {
      rows: t.rows + 1,
      amount: t.amount.plus(c.amount),
      fees: t.fees.plus(c.fee),
      estimated: c.feeEstimated ? t.estimated.plus(c.fee) : t.estimated,
      feesEstimated: t.feesEstimated + (c.feeEstimated ? 1 : 0),
      feesNotKnown: t.feesNotKnown + (c.feeNotKnown ? 1 : 0),
      settling: c.settling ? t.settling.plus(c.amount).plus(c.fee) : t.settling,
    });
  }
  return by;
}

/**
 * The margin above a currency's estimated fees: the larger of 2% of them and a minor unit per
 * estimated row. The methods route's fee is live (spec §4.11): it moves only with a rate (§1.11).
 */
export function feeMargin(estimated: DecT, rows: number, currency: string): DecT {
  const digits = minorUnits(currency) ?? 2;
  return Dec.max(estimated.times('0.02'), new Dec(rows).times(new Dec(10).pow(-digits))).toDecimalPlaces(digits, Dec.ROUND_UP);
}

/** The swaps: a plan file's for the currencies short now, else priced from the pairs route (spec §4.9), or why none can fund. */
function swapsOf(
  referenceOf: (currency: string) => string,
  needs: SwapNeed[],
  { wallets, balances }: ReturnType<typeof walletsOf>,
  pf: PreflightResult,
  o: PlanOptions,
  made: (currency: string) => string | undefined,
  sent: (currency: string) => SwapRequest | undefined,
): { swaps: SwapProposal[]; refusals: SwapRefusal[] } {
  if (!o.approvedSwaps) return proposeSwaps(referenceOf, needs, wallets, pf.pairs ?? [], { from: o.swapFrom, made, sent });
  const swaps: SwapProposal[] = [];
  const refusals: SwapRefusal[] = [];
  // (what a wallet's own rows, then the plan's swaps before this one, take from it)
  const taken = new Map(needs.map((n) => [n.currency, n.total.plus(n.feeMargin)]));
  for (const n of needs) {
    const b = balances.get(n.currency);
    if (b === undefined || !n.total.greaterThan(b)) continue;
    const shortfall = formatAmount(n.total.plus(n.feeMargin).minus(b), n.currency);
    const s = o.approvedSwaps.find((x) => x.currency === n.currency);
    const spare = s && balances.get(s.fromCurrency)?.minus(taken.get(s.fromCurrency) ?? 0);
    const why = !s
      ? `the plan holds no swap for ${n.currency}: make a new plan (it proposes one) and have it approved`
      : s.reference !== referenceOf(n.currency)
        ? `the plan's swap for ${n.currency} is not this batch's (reference ${s.reference})`
        : !spare?.greaterThanOrEqualTo(new Dec(s.swapAmount))
          ? `the ${s.fromCurrency} wallet no longer pays the plan's swap of ${s.swapAmount} ${s.fromCurrency} once its own rows are paid`
          : undefined;
    const reason = made(n.currency) ?? why;
    if (reason) refusals.push({ currency: n.currency, shortfall, reason });
    else {
      swaps.push(s!);
      addTo(taken, s!.fromCurrency, new Dec(s!.swapAmount));
    }
  }
  return { swaps, refusals };
}

/** The wallets' balances with the swaps that fund the batch counted, and what each swap moves per currency. */
function withSwaps(wallets: ReturnType<typeof walletsOf>, swaps: readonly SwapProposal[]) {
  const moved = new Map<string, DecT>();
  for (const s of swaps) {
    addTo(moved, s.currency, new Dec(s.amountToBeSent));
    addTo(moved, s.fromCurrency, new Dec(s.swapAmount).negated());
  }
  const balances = new Map(wallets.balances);
  for (const [c, d] of moved) addTo(balances, c, d);
  return { balances, balanceNotKnown: wallets.balanceNotKnown, moved };
}

/** Rows in file order take from their wallet; a row that no longer fits is NOT_SENT under --allow-partial, else a shortfall. */
function takeFromWallets(candidates: Candidate[], wallets: ReturnType<typeof withSwaps>, allowPartial: boolean) {
  const taken = new Map<string, DecT>();
  const left = new Map<number, LeftOut>();
  const toSend: Candidate[] = [];
  for (const c of candidates) {
    // A row being settled may already be debited (in the balance): it always goes, taking nothing (it cannot pay twice).
    const after = (taken.get(c.currency) ?? new Dec(0)).plus(c.settling ? 0 : c.amount.plus(c.fee));
    const short = !wallets.balanceNotKnown.has(c.currency) && after.greaterThan(wallets.balances.get(c.currency) ?? 0);
    if (allowPartial && short && !c.settling) {
      const why = `left out by --allow-partial: the ${c.currency} wallet does not cover it after the rows before it`;
      left.set(c.payout.rowNumber, leftOut('INSUFFICIENT_FUNDS', why));
      continue;
    }
    taken.set(c.currency, after);
    toSend.push(c);
  }
  return { leftOut: left, toSend };
}

/** Each currency's totals and wallet after the batch; a wallet every row of which was left out is still shown. */
function currencyPlans(
  used: Map<string, Totals>,
  needs: readonly SwapNeed[],
  { balances, balanceNotKnown, moved }: ReturnType<typeof withSwaps>,
): { currencies: CurrencyPlan[]; shortfall: boolean; marginShort: string[] } {
  let shortfall = false;
  const marginShort: string[] = [];
  const currencies: CurrencyPlan[] = [];
  for (const [ccy, u] of [...used].sort(([a], [b]) => byText(a, b))) {
    const balance = balances.get(ccy) ?? new Dec(0);
    const total = u.amount.plus(u.fees);
    const after = balance.minus(total).plus(u.settling);
    const cp: CurrencyPlan = {
      currency: ccy,
      rows: u.rows,
      amount: formatAmount(u.amount, ccy),
      estimatedFees: formatAmount(u.fees, ccy),
      total: formatAmount(total, ccy),
    };
    const margin = feeMargin(u.estimated, u.feesEstimated, ccy);
    if (u.feesEstimated) {
      cp.feesEstimated = u.feesEstimated;
      cp.feeMargin = formatAmount(margin, ccy);
    }
    if (u.feesNotKnown) cp.feesNotKnown = u.feesNotKnown;
    if (!balanceNotKnown.has(ccy)) {
      const swap = moved.get(ccy);
      cp.balance = formatAmount(swap ? balance.minus(swap) : balance, ccy);
      if (swap) cp.swap = `${swap.isNegative() ? '' : '+'}${formatAmount(swap, ccy)}`;
      cp.balanceAfter = formatAmount(after, ccy);
      // The estimate itself does not fit: refused. It fits but not its margin: a warning.
      if (after.isNegative()) {
        shortfall = true;
        cp.shortfall = formatAmount(after.negated(), ccy);
      } else if (after.lessThan(margin)) marginShort.push(marginWarning(cp, margin));
    }
    currencies.push(cp);
  }
  for (const { currency: ccy, total } of needs) {
    if (used.has(ccy) || !total.greaterThan(0)) continue;
    // Every row of this currency was left out by --allow-partial: still show the wallet.
    const balance = formatAmount(balances.get(ccy) ?? new Dec(0), ccy);
    const zero = formatAmount(new Dec(0), ccy);
    currencies.push({
      currency: ccy,
      rows: 0,
      amount: zero,
      estimatedFees: zero,
      total: zero,
      ...(balanceNotKnown.has(ccy) ? {} : { balance, balanceAfter: balance }),
    });
  }
  return { currencies, shortfall, marginShort };
}
const marginWarning = (c: CurrencyPlan, margin: DecT) =>
  `the ${c.currency} wallet covers the batch with its estimated fees (${c.total}, balance ${c.balance}) but not the margin of ` +
  `${formatAmount(margin, c.currency)} kept for fees that may be higher: a row the wallet no longer covers is refused by the service (INSUFFICIENT_FUNDS)`;

/** Preflight's warnings, wallets whose balance is not known, and a monthly quota this batch may exhaust. */
function planWarnings(
  pf: PreflightResult,
  balanceNotKnown: Set<string>,
  needs: readonly SwapNeed[],
  estimate: number,
  usage?: UsageReport,
): string[] {
  const warnings = [...pf.warnings];
  for (const ccy of needs.flatMap((n) => (balanceNotKnown.has(n.currency) ? [n.currency] : [])).sort()) {
    warnings.push(
      `the ${ccy} wallet's balance is not in the service's answer: funds are not checked before sending (the service's INSUFFICIENT_FUNDS decides)`,
    );
  }
  if (usage && estimate > usage.remaining) warnings.push(`${quotaSentence(estimate, usage)}: the monthly quota may run out`);
  return warnings;
}

/** One warning per later date (ReqdExctnDt) of the rows not sent before it. */
function notDueWarnings(all: RowList<EngineRow>, notSent: Map<number, LeftOut>): string[] {
  const byDate = new Map<string, number>();
  // (a pass over the rows only when some row is not due)
  if ([...notSent.values()].some((i) => i.code === NOT_DUE))
    for (const r of all)
      if (notSent.get(r.rowNumber)?.code === NOT_DUE) byDate.set(r.payout!.notBefore!, (byDate.get(r.payout!.notBefore!) ?? 0) + 1);
  return [...byDate]
    .sort()
    .map(
      ([date, n]) =>
        `${n === 1 ? '1 row is' : `${n} rows are`} not due until ${date} (ReqdExctnDt, a UTC day): not sent before; run the same file again on or after that day`,
    );
}

/** One warning for the references other batches sent: what approvers must see. */
function elsewhereWarnings(notSent: Map<number, LeftOut>): string[] {
  const rows = [...notSent].filter(([, i]) => SENT_ELSEWHERE.has(i.code)).sort(([a], [b]) => a - b);
  if (!rows.length) return [];
  const shown = rows.slice(0, 3).map(([n, i]) => `row ${n}: ${i.message}`);
  const more = rows.length > 3 ? `; and ${rows.length - 3} more` : '';
  return [
    `${rows.length === 1 ? '1 row' : `${rows.length} rows`} left out, the reference already sent at this account: ${shown.join('; ')}${more}`,
  ];
}

/** What `validate` warned of, where the plan is confirmed: the file's warnings, and each code's rows among those to send. */
function validationWarnings(batch: LoadedBatch, toSend: Set<number>): { warnings: string[]; withoutDocument?: number } {
  const byCode = new Map<ProblemCode, number[]>();
  for (const r of batch.rows)
    for (const p of toSend.has(r.rowNumber) ? r.problems : []) {
      // (added to in place: a copy a row made this quadratic in the rows that warn)
      if (p.severity === 'warning' && !byCode.get(p.code)?.push(r.rowNumber)) byCode.set(p.code, [r.rowNumber]);
    }
  const warnings = [
    ...batch.fileProblems.filter((p) => p.severity === 'warning').map((p) => p.message),
    ...[...byCode].map(([code, rows]) => `${rowsText(rows)} ${code}: ${PROBLEM_CODES[code]}`),
  ];
  return { warnings, withoutDocument: byCode.get('NO_DOCUMENT')?.length };
}

export function buildPlan(batch: LoadedBatch, pf: PreflightResult, folded: FoldedJournal, env: string, o: PlanOptions): BatchPlan {
  const rows = sortRows(batch, pf, folded, o);
  const referenceOf = swapReferences(rows.paying);
  // what each currency's rows that may go need (before --allow-partial leaves any out): their total and fee margin
  const needs = [...totalsOf(rows.candidates)].map(([currency, t]) => ({
    currency,
    total: t.amount.plus(t.fees).minus(t.settling),
    feeMargin: feeMargin(t.estimated, t.feesEstimated, currency),
  }));
  const before = walletsOf(pf);
  const funding = swapsOf(
    referenceOf,
    needs,
    before,
    pf,
    o,
    (c) => swapMadeText(folded.swaps.get(c)),
    (c) => unsettledBody<SwapRequest>(folded.swaps.get(c)),
  );
  const fundedBySwaps = !!o.fundBySwap || !!o.approvedSwaps;
  const wallets = withSwaps(before, fundedBySwaps ? funding.swaps : []);
  const taken = takeFromWallets(rows.candidates, wallets, o.allowPartial);
  const { currencies, shortfall, marginShort } = currencyPlans(totalsOf(taken.toSend), needs, wallets);
  const requests = requestCost(taken.toSend, (d) => batch.documents?.get(d)?.sha256, {
    ...o,
    preflight: pf.requests,
    quoteGroups: pf.quoteGroups,
    swaps: fundedBySwaps ? funding.swaps.length : 0,
  });
  const notSent = new Map([...rows.notSent, ...taken.leftOut]);
  const validation = validationWarnings(batch, new Set(taken.toSend.map((c) => c.payout.rowNumber)));
  const resent = [...totalsOf(taken.toSend.filter((c) => c.resending))].sort(([a], [b]) => byText(a, b));
  return {
    batchId: batch.identity.batchId,
    fileSha256: batch.identity.fileSha256,
    env,
    file: batch.file,
    ...(batch.message ? { message: batch.message } : {}),
    rows: o.only ? o.only.size : batch.rows.length,
    valid: rows.valid,
    invalid: rows.invalidRows.size,
    toSend: taken.toSend.map((c) => c.payout.rowNumber),
    created: rows.created,
    notSent,
    invalidRows: rows.invalidRows,
    alreadyCreated: rows.created.length,
    toSettle: rows.candidates.filter((c) => c.settling).length,
    currencies,
    corridorsNotEnabled: [...rows.blockedCorridors.values()],
    warnings: [
      ...planWarnings(pf, wallets.balanceNotKnown, needs, requests.estimate, o.usage),
      ...marginShort,
      ...elsewhereWarnings(notSent),
      ...notDueWarnings(batch.rows, notSent),
      ...validation.warnings,
    ],
    withoutDocument: validation.withoutDocument,
    requests,
    swaps: funding.swaps,
    swapRefusals: funding.refusals,
    fundedBySwaps,
    ...(o.screened ? { screening: o.screened } : {}),
    shortfall,
    corridorBlocked: rows.blockedCorridors.size > 0,
    resend: {
      rows: resent.reduce((n, [, t]) => n + t.rows, 0),
      byCurrency: resent.map(([currency, t]) => ({ currency, rows: t.rows, amount: formatAmount(t.amount, currency) })),
    },
  };
}

/** Adds to a currency's running total: every total by currency of a plan and its guards. */
export const addTo = (m: Map<string, DecT>, currency: string, d: DecT): Map<string, DecT> =>
  m.set(currency, (m.get(currency) ?? new Dec(0)).plus(d));

/** A row's fee in the control totals: a created row's journalled API number (summed exactly as fromApi reads it), else its estimate. */
export const feeForTotals =
  (folded: FoldedJournal, estimated: ReadonlyMap<number, DecT>) =>
  (r: EngineRow): DecT | ApiAmount | undefined => {
    const ref = referenceOf(r);
    const p = ref ? rowState(folded, ref).payout : undefined;
    return p ? p.transactionFees : estimated.get(r.rowNumber);
  };

/** The rows the batch pays (created, and to send) with their totals by currency, before and after fees: what the control totals compare. */
export function payableTotals(batch: LoadedBatch, plan: BatchPlan, feeOf: (r: EngineRow) => DecT | ApiAmount | undefined) {
  const toSend = new Set(plan.toSend);
  const created = new Map(plan.created.map((c) => [c.rowNumber, c]));
  const amounts = new Map<string, DecT>();
  const withFees = new Map<string, DecT>();
  for (const r of batch.rows) {
    // a row created before counts what the service debited, as the journal has it
    const debit = created.get(r.rowNumber)?.debit;
    const payout = toSend.has(r.rowNumber) ? r.payout : undefined;
    const currency = debit?.sourceCurrency ?? payout?.sourceCurrency;
    if (currency === undefined) continue;
    const amount = debit ? fromApi(debit.sourceAmount) : payout!.sourceAmount;
    const fee = feeOf(r);
    addTo(amounts, currency, amount);
    addTo(withFees, currency, fee === undefined ? amount : amount.plus(typeof fee === 'object' ? fee : fromApi(fee)));
  }
  return { rows: toSend.size + created.size, amounts, withFees };
}

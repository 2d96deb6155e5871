// The guards between a plan and the first payout, as pure functions: production named on the
// command line, a terminal to confirm on or --yes, control totals that must match, a shortfall
// or a disabled corridor that stops the batch unless --allow-partial.
import type { RowList } from '../files/spill.ts';
import { Dec, formatAmount, type Dec as DecT } from '../money.ts';
import { BatchUnusable } from './engine-errors.ts';
import { ENGINE_STATUSES } from './outcome.ts';
import { addTo, requestLimitReason, SENT_ELSEWHERE, type BatchPlan, type CurrencyPlan, type payableTotals } from './batch-plan.ts';
import type { EngineRow } from './prepare.ts';
import type { Ledger, UnapprovedPayout } from '../ledger/account-ledger.ts';
import { plural, unhomoglyph, zonedTime } from '../text.ts';

/** CUR:AMOUNT (e.g. USD:12500.00). */
export function parseMoneyFlag(text: string, flag: string) {
  const m = /^\s*([A-Za-z]{3})\s*[:=]\s*([0-9]+(?:\.[0-9]+)?)\s*$/.exec(text);
  if (!m) throw new BatchUnusable('MONEY_FLAG', `${flag} ${text}: write CUR:AMOUNT, e.g. USD:12500.00`);
  return { currency: m[1]!.toUpperCase(), amount: new Dec(m[2]!) };
}
export type MoneyFlag = ReturnType<typeof parseMoneyFlag>;

export interface GuardOptions {
  /** --env as given on the command line (not from $PAYOUT_ENV). */
  envFlag?: string;
  yes: boolean;
  /** stdin and stdout are terminals: a person can confirm. */
  interactive: boolean;
  allowPartial: boolean;
  enablePairs: boolean;
  expectRows?: number;
  expectTotals: MoneyFlag[];
  maxTotals: MoneyFlag[];
  strictTotals?: boolean;
  maxRequests?: number;
  fundBySwap?: boolean;
  swapFrom?: string;
  /** --max-swap: the most a swap may credit to the CUR wallet (its amountToBeSent). */
  maxSwaps?: MoneyFlag[];
  /** The command the refusal without --fund-by-swap names. */
  swapCommand?: string;
  /** The account's approval policy (src/approvals): why this batch, as a whole (wholeOf), may not be sent. */
  policy?: (
    plan: { currencies: readonly Pick<CurrencyPlan, 'currency' | 'rows' | 'amount'>[]; payouts?: UnapprovedPayout[] } & Partial<
      Pick<BatchPlan, 'swaps'>
    >,
  ) => string | undefined;
  /** Just before the first payout: adds this run's unapproved payouts to the day's, or says why they no longer fit. */
  spend?: (ledger: Ledger, payouts: UnapprovedPayout[]) => Promise<string | undefined>;
}

export interface ApprovalInput extends Omit<GuardOptions, 'enablePairs'> {
  plan: BatchPlan;
  rows?: RowList<EngineRow>;
  /** Created + to send (payableTotals). */
  payable: ReturnType<typeof payableTotals>;
  env: string;
}

export type ApprovalDecision = { ok: true; /** ask the person on the terminal */ confirm: boolean } | { ok: false; reasons: string[] };

export function decideApproval(a: ApprovalInput): ApprovalDecision {
  const { plan } = a;
  const short = plan.currencies
    .filter((c) => c.shortfall)
    .map((c) => `${c.currency} short by ${c.shortfall} (balance ${c.balance}, batch ${c.total})`);
  const corridors = plan.corridorsNotEnabled.map(
    (c) => `${c.sourceCurrency}->${c.destinationCurrency} (${c.destinationCountryCode}, ${plural(c.rows, 'row')}): ${enableHint(c)}`,
  );
  const reasons = [
    a.policy?.(a.rows ? { ...plan, ...wholeOf(plan, a.rows) } : plan),
    a.env === 'production' && a.envFlag !== 'production'
      ? 'production needs --env production on the command line (PAYOUT_ENV alone is not enough to pay for real)'
      : undefined,
    plan.shortfall ? `insufficient funds: ${short.join('; ')}. ${fundingHint(plan, a.swapCommand)}` : undefined,
    ...swapReasons(plan, a),
    plan.corridorBlocked && !a.allowPartial
      ? `corridors not enabled: ${corridors.join('; ')}. Enable them, or pass --allow-partial to send the other rows`
      : undefined,
    ...(plan.screening?.refused ?? []),
    ...screeningReasons(plan, a.allowPartial),
    ...controlTotalReasons(a),
    requestLimitReason(plan.requests, a.maxRequests),
    !a.yes && !a.interactive
      ? 'not a terminal, so nobody can confirm: pass --yes for unattended runs (with --expect-rows / --expect-total as control totals)'
      : undefined,
  ].filter((r): r is string => !!r);
  if (reasons.length) return { ok: false, reasons };
  return { ok: true, confirm: !a.yes };
}

/** How a corridor's pair is enabled: its toggle (what --enable-pairs sends), or by hand when the service listed no id (§4.9 lists enabled pairs). */
export const enableHint = (c: { pairId?: string }): string =>
  c.pairId === undefined
    ? "the service lists no id for this pair (only enabled pairs are listed): enable it in the service's dashboard"
    : `PATCH /v1/payout-api/payouts/currency-pairs/${c.pairId}/toggle {"enabled": true}, or --enable-pairs`;

/** Rows held by sanctions screening, now or by an earlier run's (journalled), stop the batch unless --allow-partial. */
export function screeningReasons(plan: Pick<BatchPlan, 'notSent'>, allowPartial: boolean): string[] {
  const rows = [...plan.notSent].filter(([, i]) => i.code === ENGINE_STATUSES.HELD_SCREENING).map(([n]) => n);
  if (!rows.length || allowPartial) return [];
  return [
    `${rows.length === 1 ? '1 row is' : `${rows.length} rows are`} held by sanctions screening (HELD_SCREENING, rows ${rows.join(', ')}): ` +
      'pass --allow-partial to send the others, or clear a false positive (payout-batch screen --clear)',
  ];
}

/** Rows whose sanctions clearance expired since the plan (the run waited at its confirmation, or sent rows before them): they would go uncleared. */
export function clearanceLapsed(plan: Pick<BatchPlan, 'screening' | 'toSend'>, now = Date.now()): string | undefined {
  const rows = plan.toSend.filter((n) => plan.screening?.cleared.get(n)?.some((c) => !((zonedTime(c.expiresAt) ?? NaN) > now)));
  if (rows.length)
    return `the sanctions clearance of row${rows.length > 1 ? 's' : ''} ${rows.join(', ')} expired before it was sent: run again (its row is held unless cleared again)`;
}

export const payoutsOf = (numbers: Iterable<number>, rows: RowList<EngineRow>): UnapprovedPayout[] => {
  const wanted = new Set(numbers);
  return rows.flatMap((r) =>
    r.payout && wanted.has(r.rowNumber)
      ? [{ reference: r.payout.reference, currency: r.payout.sourceCurrency, amount: r.payout.sourceAmount.toFixed() }]
      : [],
  );
};

/** The batch as the policy judges it: rows sent or left out, but not those another batch sent: no part goes that the whole would not. */
function wholeOf(plan: Pick<BatchPlan, 'toSend' | 'notSent'>, rows: RowList<EngineRow>) {
  const left = [...plan.notSent].filter(([, o]) => !SENT_ELSEWHERE.has(o.code)).map(([n]) => n);
  return partOf([...plan.toSend, ...left], rows);
}

/**
 * The policy's refusal of rows the plan will hold, before any request: what it refuses of a part it refuses of the
 * whole (the totals only grow), so a batch over an `above` allowance on its file's amounts costs no request.
 */
export const policyRefusalOf = (g: Pick<GuardOptions, 'policy'>, numbers: Iterable<number>, rows: RowList<EngineRow>) =>
  g.policy?.(partOf(numbers, rows));

function partOf(numbers: Iterable<number>, rows: RowList<EngineRow>) {
  const payouts = payoutsOf(numbers, rows);
  const totals = payouts.reduce((m, p) => addTo(m, p.currency, new Dec(p.amount)), new Map<string, DecT>());
  const count = (currency: string) => payouts.filter((p) => p.currency === currency).length;
  return { payouts, currencies: [...totals].map(([currency, amount]) => ({ currency, rows: count(currency), amount: amount.toFixed() })) };
}

function fundingHint(plan: BatchPlan, swapCommand: string | undefined): string {
  const partial = 'or pass --allow-partial to send the rows that fit';
  if (plan.swapRefusals.length)
    return `No swap can fund it: ${plan.swapRefusals.map((r) => `${r.currency}: ${r.reason}`).join('; ')}. Top up the wallet, ${partial}`;
  if (plan.swaps.length && !plan.fundedBySwaps)
    return `Top up the wallet, fund it by the swap${plan.swaps.length === 1 ? '' : 's'} the plan proposes (${swapCommand ?? '`payout-batch run` with --fund-by-swap'}), ${partial}`;
  return `Top up the wallet, ${partial}`;
}

/** --max-swap caps a swap's credit (the debit follows the rate); --swap-from must name a plan file's funding wallet. */
export function swapReasons(plan: Pick<BatchPlan, 'swaps' | 'fundedBySwaps'>, a: Pick<GuardOptions, 'maxSwaps' | 'swapFrom'>): string[] {
  if (!plan.fundedBySwaps) return [];
  const reasons: string[] = [];
  for (const s of plan.swaps) {
    const swap = `the swap credits ${s.amountToBeSent} ${s.currency} for ${s.swapAmount} ${s.fromCurrency} from the ${s.fromCurrency} wallet`;
    for (const m of a.maxSwaps ?? [])
      if (m.currency === s.currency && new Dec(s.amountToBeSent).greaterThan(m.amount))
        reasons.push(`--max-swap ${m.currency}:${m.amount.toFixed()}, but ${swap}`);
    if (a.swapFrom !== undefined && a.swapFrom !== s.fromCurrency) reasons.push(`--swap-from ${a.swapFrom}, but ${swap}`);
  }
  return reasons;
}

type ControlTotals = Pick<ApprovalInput, 'expectRows' | 'expectTotals' | 'maxTotals' | 'strictTotals' | 'payable'>;

/**
 * Each mismatch of --expect-rows, --expect-total, --max-total with what the batch pays. A currency
 * --expect-total leaves out refuses only under --strict-totals, else it is a note (controlTotalNotes).
 */
export function controlTotalReasons(a: ControlTotals): string[] {
  const reasons: string[] = [];
  if (a.expectRows !== undefined && a.expectRows !== a.payable.rows) {
    reasons.push(`--expect-rows ${a.expectRows}, but the batch pays ${plural(a.payable.rows, 'row')}`);
  }
  const expected = expectedTotals(a.expectTotals);
  for (const [ccy, amount] of a.payable.amounts) {
    const want = expected.get(ccy);
    if (want && !want.equals(amount))
      reasons.push(`--expect-total ${ccy}:${want.toFixed()}, but the batch pays ${formatAmount(amount, ccy)} ${ccy} (before fees)`);
  }
  if (a.strictTotals) reasons.push(...unnamedTotals(a).map((n) => `${n} (--strict-totals)`));
  for (const [ccy, want] of expected) {
    if (!a.payable.amounts.has(ccy) && !want.isZero())
      reasons.push(`--expect-total ${ccy}:${want.toFixed()}, but the batch pays nothing in ${ccy}`);
  }
  for (const m of a.maxTotals) {
    const total = a.payable.withFees.get(m.currency);
    if (total && total.greaterThan(m.amount)) {
      reasons.push(
        `--max-total ${m.currency}:${m.amount.toFixed()}, but the batch pays ${formatAmount(total, m.currency)} ${m.currency} with estimated fees`,
      );
    }
  }
  return reasons;
}

export function controlTotalNotes(a: Pick<ControlTotals, 'expectTotals' | 'strictTotals' | 'payable'>): string[] {
  return a.strictTotals ? [] : unnamedTotals(a).map((n) => `${n}: not checked (--strict-totals refuses it)`);
}

function unnamedTotals(a: Pick<ControlTotals, 'expectTotals' | 'payable'>): string[] {
  if (!a.expectTotals.length) return [];
  const expected = expectedTotals(a.expectTotals);
  return [...a.payable.amounts]
    .filter(([ccy]) => !expected.has(ccy))
    .map(([ccy, amount]) => `--expect-total names no ${ccy}, and the batch pays ${formatAmount(amount, ccy)} ${ccy}`);
}

/** A currency named twice adds up. */
const expectedTotals = (flags: MoneyFlag[]) => flags.reduce((m, e) => addTo(m, e.currency, e.amount), new Map<string, DecT>());

// ---- the names of a plan's maker and approvers (four eyes)

/** NFKC, case folded (upper then lower: "Straße" is "STRASSE"), spaces collapsed. */
const foldName = (name: string): string => name.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC').trim().replace(/\s+/g, ' ');

/** The Unicode TR39 confusable skeleton without diacritics, punctuation or spaces: "Kim" is "Kirn", "Al ice" is "Alice". */
const skeleton = (name: string): string =>
  unhomoglyph(name.normalize('NFD').replace(/\p{M}/gu, ''))
    .normalize('NFD')
    .replace(/[\p{M}\p{P}\p{Z}\s]/gu, '');

/** Skeletons meet folded, as written ("Ian" / "lan") or in upper case (Cyrillic "вох" / "Box"). */
export const sameName = (a: string, b: string): boolean =>
  [foldName, (n: string) => n.normalize('NFKC'), (n: string) => foldName(n).toUpperCase()].some(
    (form) => skeleton(form(a)) === skeleton(form(b)),
  );

/** Characters that show nothing or reorder the text around them: control, format, bidi, default-ignorable. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Bidi_Control}]/u;

const SCRIPTS = [
  'Latin', 'Greek', 'Cyrillic', 'Armenian', 'Georgian', 'Hebrew', 'Arabic', 'Syriac', 'Thaana', 'Devanagari', 'Bengali',
  'Gurmukhi', 'Gujarati', 'Oriya', 'Tamil', 'Telugu', 'Kannada', 'Malayalam', 'Sinhala', 'Thai', 'Lao', 'Tibetan',
  'Myanmar', 'Khmer', 'Mongolian', 'Ethiopic', 'Cherokee', 'Han', 'Hiragana', 'Katakana', 'Hangul', 'Bopomofo',
] as const; // prettier-ignore
const SCRIPT_OF = SCRIPTS.map((s) => [s, new RegExp(`^\\p{Script=${s}}$`, 'u')] as const);

/** The scripts one name may mix (TR39 "highly restrictive"): any other mix makes a look-alike ("Dаn", Cyrillic а). */
const ONE_WRITING = [
  new Set(['Latin', 'Han', 'Hiragana', 'Katakana']),
  new Set(['Latin', 'Han', 'Bopomofo']),
  new Set(['Latin', 'Han', 'Hangul']),
];

/** The scripts of a name's letters (digits, spaces, punctuation and marks are in every script). */
const scriptsOf = (name: string): Set<string> =>
  new Set([...name].filter((ch) => /\p{L}/u.test(ch)).map((ch) => SCRIPT_OF.find(([, re]) => re.test(ch))?.[0] ?? 'another script'));

/** Why a maker's or approver's name cannot be used: empty, an invisible or bidi control, or mixed scripts. */
export function nameProblem(name: string): string | undefined {
  const n = name.normalize('NFKC').trim();
  if (!n) return 'the name is empty';
  const bad = [...n].find((ch) => INVISIBLE.test(ch));
  if (bad)
    return `the name holds an invisible or bidirectional control character (U+${bad.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')})`;
  const scripts = scriptsOf(n);
  if (scripts.size > 1 && !ONE_WRITING.some((w) => [...scripts].every((s) => w.has(s))))
    return `the name mixes the ${[...scripts].join(' and ')} scripts (a look-alike of another name)`;
  return undefined;
}

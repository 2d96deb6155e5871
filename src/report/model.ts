// The report's view models: plain data, money as exact decimal strings; html.ts only lays it out.
import { basename, resolve } from 'node:path';
import { amountText, Dec, formatAmount, type Dec as DecT } from '../money.ts';
import { maskAccount } from '../mask.ts';
import { ACCOUNT_ID_FIELDS, type CanonicalField } from '../input/batch-columns.ts';
import { NOT_DUE, type BatchPlan, type CurrencyPlan } from '../engine/batch-plan.ts';
import { payeeOf, type PlanFile, type PlanRow } from '../engine/plan-file.ts';
import { fileSha256 } from '../engine/identity.ts';
import { validateBatch, type ValidateOptions } from '../validation/validation.ts';
import { amountAsRead } from '../validation/amount.ts';
import type { ResultsTable } from '../results/results.ts';
import { batchColumns, copiedPayouts } from '../results/read.ts';
import { isCreatedStatus, STATUS_GROUP_WORDS, STATUS_GROUPS, statusGroup, type StatusGroup } from '../engine/outcome.ts';
import { parseEarlierPayouts, readAmount, type TieOutSummary } from '../engine/money-totals.ts';
import type { ApprovalsView } from '../approvals/view.ts';
import type { SwapProposal } from '../engine/swap.ts';
import type { SwapLine } from '../results/swap-summary.ts';
import { byText, shellWord } from '../text.ts';

/** At most this many invalid rows, warnings or rows needing action are listed (the counts are always whole). */
export const MAX_LISTED = 2000;
/** The most rows a report's paged list holds (every row is in the file, or the CSV beside it). */
export const MAX_ROWS_LISTED = 10_000;

type ResultsRowView = { row: number } & Record<'reference' | 'name' | 'amount' | 'currency' | 'status' | 'payoutId' | 'note', string>;

// ---------------------------------------------------------------- approvals (input)

/**
 * Who made the plan (the plan file's preparedBy) and its approvals as src/approvals checked them: the report shows them, never
 * verifies them. `listChecked`: against an approvers list; without one, `valid` says only that the signature holds and is not the maker's.
 */
export type ApprovalsInput = Partial<ApprovalsView> & { listChecked?: boolean };

// ---------------------------------------------------------------- plan

export interface InvalidRow {
  /** As the spreadsheet shows it (header = row 1). */
  row: number;
  problems: { column?: string; code: string; message: string }[];
}

/** A source currency's rows, amount before fees and (from the service) fees, balances and shortfall. */
type PlanTotal = Pick<CurrencyPlan, 'currency' | 'rows' | 'amount'> & Partial<CurrencyPlan>;

export type PlanView = ReturnType<typeof planViewOfPlan>;

/** What the batch file says, read offline (src/validation): the part of a plan no request is needed for. */
type OfflineBatch = Awaited<ReturnType<typeof readOfflineBatch>>;

type Corridor = { sourceCurrency: string; destinationCurrency: string; destinationCountryCode: string; method?: string };
const corridorKeyOf = (c: Corridor) =>
  `${c.sourceCurrency}>${c.destinationCurrency}@${c.destinationCountryCode}${c.method ? `/${c.method}` : ''}`;

/** Reads and validates a batch file offline: no key, no network (as `payout-batch validate`). */
export async function readOfflineBatch(file: string, options: ValidateOptions = {}) {
  const sha256 = await fileSha256(resolve(options.dir ?? '', file));
  const v = await validateBatch(file, options);
  const [invalid, warnings] = [listed<InvalidRow>(), listed<string>()];
  try {
    for await (const r of v.rows) {
      const errors = r.problems.filter((p) => p.severity === 'error');
      for (const p of r.problems)
        if (p.severity === 'warning') warnings.add(`row ${r.rowNumber}${p.column ? `, ${p.column}` : ''}: ${p.message}`);
      if (errors.length)
        invalid.add({ row: r.rowNumber, problems: errors.map((p) => ({ column: p.column, code: p.code, message: p.message })) });
    }
    for (const p of v.fileProblems) warnings.add(`${p.row ? `row ${p.row}: ` : ''}${p.message}`);
  } finally {
    await v.close();
  }
  return { file, sha256, summary: v.summary, invalid, warnings };
}

/** A list of at most MAX_LISTED items, and how many more were left out. */
function listed<T>() {
  const l = { items: [] as T[], omitted: 0, add: (x: T) => void (l.items.length < MAX_LISTED ? l.items.push(x) : l.omitted++) };
  return l;
}

/** The file's corridors, with the distinct rates the quotes of the rows to send gave in each, and by method and currency. */
function offlineParts(offline: OfflineBatch | undefined, quotes: readonly PlanRow[] = [], notEnabled: Set<string> | undefined) {
  if (!offline) return { corridors: [], byMethod: [] };
  const rates = new Map<string, Set<string>>();
  for (const { body, rate } of quotes)
    if (rate !== undefined) rates.set(corridorKeyOf(body), (rates.get(corridorKeyOf(body)) ?? new Set()).add(String(rate)));
  const corridors = offline.summary.corridors.map((c) => ({
    ...c,
    rates: [...(rates.get(corridorKeyOf(c)) ?? [])],
    ...(notEnabled ? { enabled: !notEnabled.has(corridorKeyOf({ ...c, method: undefined })) } : {}),
  }));
  const byMethod = new Map<string, { method: string; currency: string; rows: number; amount: DecT }>();
  for (const c of offline.summary.corridors) {
    const k = `${c.method} ${c.sourceCurrency}`;
    const m = byMethod.get(k) ?? { method: c.method, currency: c.sourceCurrency, rows: 0, amount: new Dec(0) };
    m.rows += c.rows;
    m.amount = m.amount.plus(c.amount);
    byMethod.set(k, m);
  }
  return {
    corridors,
    byMethod: [...byMethod.values()]
      .sort((a, b) => byText(a.method, b.method) || byText(a.currency, b.currency))
      .map((m) => ({ method: m.method, currency: m.currency, rows: m.rows, amount: formatAmount(m.amount, m.currency) })),
  };
}

/** Invalid rows with their columns (offline) and the preflight's findings, which have none. */
function mergeInvalid(offline: OfflineBatch | undefined, planInvalid: Iterable<[number, { code: string; message: string }]>) {
  const rows = new Map<number, InvalidRow>((offline?.invalid.items ?? []).map((r) => [r.row, r]));
  let omitted = offline?.invalid.omitted ?? 0;
  for (const [row, p] of planInvalid) {
    if (rows.has(row)) continue;
    if (rows.size < MAX_LISTED) rows.set(row, { row, problems: [{ code: p.code, message: p.message }] });
    else omitted++;
  }
  return { invalid: [...rows.values()].sort((a, b) => a.row - b.row), invalidOmitted: omitted };
}

function refusalsOf(currencies: readonly PlanTotal[], corridorBlocked: boolean): string[] {
  const out: string[] = [];
  for (const c of currencies)
    if (c.shortfall) out.push(`the ${c.currency} wallet is short by ${c.shortfall} ${c.currency} (amounts plus estimated fees)`);
  if (corridorBlocked) out.push('some rows use a corridor that is not enabled (--enable-pairs, or --allow-partial to leave them out)');
  return out;
}

type RowNote = { code: string; message: string };

/** What a plan report shows of a plan: the engine's BatchPlan is one, and a plan file is read into one (planViewOfPlanFile). */
type PlanFacts = Pick<BatchPlan, 'file' | 'batchId' | 'warnings' | 'requests' | 'corridorBlocked'> &
  Pick<BatchPlan, 'rows' | 'valid' | 'invalid' | 'alreadyCreated'> & {
    toSend: readonly unknown[];
    currencies: readonly PlanTotal[];
    invalidRows: Iterable<[number, RowNote]>;
    notSent: Iterable<[number, RowNote]>;
    corridorsNotEnabled: readonly Corridor[];
    swaps?: readonly SwapProposal[];
  };

/**
 * The plan `plan` (or `run --dry-run`) just computed, or a plan file read back; without a plan, the
 * batch file alone, offline (planViewOffline). `planSha256`: of the plan file's own bytes (what an
 * approval signs), when the report is made from one.
 */
export function planViewOfPlan(
  plan: PlanFacts | undefined,
  o: Partial<Record<'environment' | 'baseUrl' | 'planSha256', string>> & {
    /** The plan's file: its batch file's sha256, rows to send with their quotes, sheet (Excel), label, maker and time. */
    planFile?: Partial<PlanFile>;
    offline?: OfflineBatch;
    approvals?: ApprovalsInput;
    notes?: string[];
  },
) {
  const notEnabled = plan && new Set(plan.corridorsNotEnabled.map(corridorKeyOf));
  const pf = o.planFile;
  const { corridors, byMethod } = offlineParts(o.offline, pf?.rows, notEnabled);
  const { invalid, invalidOmitted } = mergeInvalid(o.offline, plan?.invalidRows ?? []);
  const file = plan?.file ?? o.offline?.file ?? '';
  const counts = plan ?? o.offline?.summary;
  // offline: in the summary's order, by currency
  const totals: readonly PlanTotal[] =
    plan?.currencies ?? Object.entries(o.offline?.summary.totalsBySourceCurrency ?? {}).map(([currency, t]) => ({ currency, ...t }));
  return {
    kind: 'plan' as const,
    /** Computed from the batch file alone: no fees, balances, quotes or requests. */
    offline: !plan,
    generatedAt: new Date().toISOString(),
    identity: {
      file,
      fileName: basename(file),
      sha256: pf?.fileSha256 ?? o.offline?.sha256,
      planSha256: o.planSha256,
      rows: counts?.rows,
      valid: counts?.valid,
      invalid: counts?.invalid,
      toSend: plan?.toSend.length,
      alreadyCreated: plan?.alreadyCreated,
      batchId: plan?.batchId,
      batchLabel: pf?.batchLabel,
      ...(pf?.sheet !== undefined ? { sheet: pf.sheet } : {}),
      environment: o.environment,
      baseUrl: o.baseUrl,
      createdAt: pf?.createdAt,
    },
    totals,
    /** Every row to send, by what its initiate body pays (a plan file's, or the plan's quotes), and where to. */
    payees:
      plan &&
      (pf?.rows ?? []).map((r) => ({ ...payeeOf(r), destination: `${r.body.destinationCurrency} ${r.body.destinationCountryCode}` })),
    byMethod,
    /** The file's corridors: amounts before fees, the distinct rates quoted for the rows to send, `enabled` unknown offline. */
    corridors,
    warnings: [...(plan?.warnings ?? []), ...(o.offline?.warnings.items ?? [])],
    warningsOmitted: o.offline?.warnings.omitted ?? 0,
    invalid,
    invalidOmitted,
    notSent: [...(plan?.notSent ?? [])].map(([row, i]) => ({ row, code: i.code, message: i.message })).sort((a, b) => a.row - b.row),
    requests: plan && { ...plan.requests },
    /** Why `run` would refuse the plan as it stands. */
    refusals: plan ? refusalsOf(plan.currencies, plan.corridorBlocked) : [],
    /** What the report could not show, and why. */
    notes: o.notes ?? [],
    ...(o.approvals || pf ? { approvals: { preparedBy: pf?.preparedBy, ...o.approvals } } : {}),
    /** The swaps the plan proposes to fund short wallets (spec §4.7), status PROPOSED. */
    swaps: (plan?.swaps ?? []).map((p): SwapLine => ({
      currency: p.currency,
      reference: p.reference,
      status: 'PROPOSED',
      sourceAmount: p.swapAmount,
      sourceCurrency: p.fromCurrency,
      destinationAmount: p.amountToBeSent,
      destinationCurrency: p.currency,
      exchangeRate: `${p.pair.baseCurrency}/${p.pair.quoteCurrency} ${p.pair.rate}`,
    })),
  };
}

/** A plan file (`plan --out PLAN`), with the batch file it names read offline when it is unchanged. */
export function planViewOfPlanFile(pf: PlanFile, offline: OfflineBatch | undefined, approvals?: ApprovalsInput, planSha256?: string) {
  const usable = offline && offline.sha256 === pf.fileSha256 ? offline : undefined;
  const byRow = (notes: PlanFile['notSent']) => notes.map((r): [number, RowNote] => [r.rowNumber, r]);
  const corridorsNotEnabled = pf.corridorsNotEnabled as Corridor[];
  const plan: PlanFacts = {
    ...pf,
    rows: pf.rowsInBatch,
    toSend: pf.rows,
    currencies: pf.currencies as unknown as PlanTotal[],
    invalidRows: byRow(pf.invalidRows),
    notSent: byRow(pf.notSent),
    corridorsNotEnabled,
    corridorBlocked: corridorsNotEnabled.length > 0,
  };
  const why = offline ? 'changed since the plan was made (its sha256 differs)' : 'could not be read';
  return planViewOfPlan(plan, {
    environment: pf.env,
    baseUrl: pf.baseUrl,
    planFile: pf,
    planSha256,
    offline: usable,
    approvals,
    notes: usable ? [] : [`${pf.file} ${why}: methods, corridors and invalid columns are not shown.`],
  });
}

/** A batch file alone, offline: what it would pay before fees, and what is wrong with it. */
export const planViewOffline = (offline: OfflineBatch): PlanView =>
  planViewOfPlan(undefined, {
    offline,
    notes: [
      'Offline report of the batch file: the valid rows before fees. Fees, wallet balances, quotes and the requests against the quota come from the service: run `payout-batch plan FILE` (it writes the full report).',
    ],
  });

// ---------------------------------------------------------------- results

/** A results file's view: every row in the file's order (`note` the service's reason or error, else the next step). */
export type ResultsView = Awaited<ReturnType<typeof resultsViewOf>>;

/** What to do, and the command that does it (RESULTS: this results file; PAYOUT_ID: the row's payout). */
type Action = { urgency: number; next: string; command?: string };
const refund: Action = {
  urgency: 4,
  next: 'Check the refund (reconcile), then pay it again',
  command: 'payout-batch retry RESULTS --resend-failed',
};

/** The statuses that need action: a deadline first, then what may have paid, then what a person fixes. */
const ACTIONS: Record<string, Action> = {
  ADDITIONAL_INFO_REQUIRED: { urgency: 0, next: 'Answer the information request', command: 'payout-batch attach PAYOUT_ID FILE...' },
  UNKNOWN_OUTCOME: { urgency: 1, next: 'Run or retry again: it is resent with the same key, so it cannot pay twice' },
  CONFLICT: { urgency: 2, next: 'A person looks: the key was used with another body (never resent under a new key)' },
  FAILED_TO_SEND: { urgency: 3, next: 'Fix the cause, then send it again', command: 'payout-batch retry RESULTS' },
  FAILED: refund,
  REJECTED: refund,
  INVALID: { urgency: 5, next: 'Fix the row in the results file, then send it', command: 'payout-batch retry RESULTS' },
  HELD_SCREENING: { urgency: 5, next: 'Held by sanctions screening: sent only once approvers clear a false positive (screen --clear)' },
  NOT_SENT: { urgency: 6, next: 'Fix the cause (funds, corridor), then run again or retry' },
};
/** A failed payout whose refund the results do not show yet: look again before paying again. */
const REFUND_NOT_SEEN: Action = {
  urgency: 4,
  next: 'The refund is not seen yet: look again later',
  command: 'payout-batch status RESULTS',
};
/** A row left out until its requested execution date (pain.001 ReqdExctnDt): nothing to fix. */
const NOT_DUE_ACTION: Action = { urgency: 6, next: 'Not due yet: run it again on its day (it is never sent before)' };
/** A payout of any other status whose documents are not attached yet. */
const ATTACH: Action = { urgency: 3, next: 'Run or retry again: the documents are attached to the existing payout' };

type Row = ResultsTable['rows'][number];
type GroupSums = { group: StatusGroup; currency: string; rows: number; amount: DecT; total?: DecT; refunded?: DecT };

/** Amounts as written: padded to the currency's decimals, never rounded ("10.005" USD, "1500.5" JPY: an invalid row's). */
const EXACT = { exact: true };

/** A batch's amount cell as the run read it too ("1.234,56", "12,34": the run paid them), never a 0. */
const batchAmount = (text: string): DecT | undefined => readAmount(text) ?? amountAsRead(text);

/** The rows per status group and currency, with their sums; a cell that is no amount is a note, never a 0. */
function addToGroups(groups: Map<string, GroupSums>, r: Row, cell: (r: Row, f: CanonicalField) => string, notes: string[]): void {
  const group = statusGroup((r.result.status ?? '').trim() || undefined);
  const currency = cell(r, 'sourceCurrency').toUpperCase();
  const k = `${group} ${currency}`;
  const g = groups.get(k) ?? { group, currency, rows: 0, amount: new Dec(0) };
  g.rows++;
  const add = (
    sum: DecT | undefined,
    column: string,
    text: string | undefined,
    read: (t: string) => DecT | undefined = readAmount,
  ): DecT | undefined => {
    if (text === undefined || text.trim() === '') return sum;
    const d = read(text);
    if (d !== undefined) return (sum ?? new Dec(0)).plus(d);
    notes.push(
      `Row ${r.rowNumber}: ${column} ${JSON.stringify(text)} is not an amount; it is left out of the totals of "${STATUS_GROUP_WORDS[group].title}".`,
    );
    return sum;
  };
  g.amount = add(g.amount, 'sourceAmount', cell(r, 'sourceAmount'), batchAmount)!; // (as the run read it: "1.234,56")
  // only a payout of this batch debited its total, as status and the summary count it: not a quote of a row not sent, nor
  // the payout of another batch an ALREADY_PAID row names
  if (isCreatedStatus(r.result.status?.trim())) {
    g.total = add(g.total, 'totalDeductible', r.result.totalDeductible);
    g.refunded = add(g.refunded, 'refunded', r.result.refunded);
  }
  // the payouts the row replaced (failed, refunded, sent again) moved the wallet too: the tie-out counts them, so do these
  const earlier = parseEarlierPayouts(r.result.earlierPayouts);
  if (earlier.problem) notes.push(`Row ${r.rowNumber}: ${earlier.problem}.`);
  for (const e of earlier.payouts) {
    g.total = (g.total ?? new Dec(0)).plus(e.amount).plus(e.fee ?? 0);
    g.refunded = add(g.refunded, 'refunded', e.refunded);
  }
  groups.set(k, g);
}

function groupTotals(groups: Map<string, GroupSums>) {
  return [...groups.values()]
    .sort((a, b) => STATUS_GROUPS.indexOf(a.group) - STATUS_GROUPS.indexOf(b.group) || byText(a.currency, b.currency))
    .map((g) => ({
      group: g.group,
      currency: g.currency,
      rows: g.rows,
      amount: amountText(g.amount, g.currency, EXACT),
      ...(g.total ? { total: amountText(g.total, g.currency, EXACT) } : {}),
      ...(g.refunded ? { refunded: amountText(g.refunded, g.currency, EXACT) } : {}),
    }));
}

/** A command with the row's own values for its placeholders, each one shell word, so that it runs as shown (a path with spaces quoted). */
function commandOf(a: Action, file: string, payoutId: string | undefined): string | undefined {
  // (a function, not a string, replaces: a "$&" in a path is not the placeholder again)
  return a.command?.replace('RESULTS', () => shellWord(file)).replace('PAYOUT_ID', () => (payoutId ? shellWord(payoutId) : 'PAYOUT_ID'));
}

/** The row: its number, reference, payee, and amount with its currency, formatted when it reads as an amount (else as written). */
function rowOf(r: Row, cell: (r: Row, f: CanonicalField) => string) {
  const currency = cell(r, 'sourceCurrency').toUpperCase();
  const d = batchAmount(cell(r, 'sourceAmount'));
  const amount = d !== undefined ? amountText(d, currency, EXACT) : cell(r, 'sourceAmount');
  return { row: r.rowNumber, reference: cell(r, 'reference'), name: cell(r, 'accountName'), amount, currency };
}

/** What the service said of the row: its reason, error code and message. */
const reasonOf = (r: Row) => [r.result.statusReason, r.result.errorCode, r.result.errorMessage].filter((x) => x?.trim()).join(': ');

/** The row of the action list, when the row needs one: what to do, and the command that does it, as it runs. */
function actionOf(r: Row, status: string, cell: (r: Row, f: CanonicalField) => string, file: string) {
  const docsMissing = r.result.errorCode === 'DOCUMENTS_NOT_ATTACHED';
  const known = (r.result.errorCode === NOT_DUE ? NOT_DUE_ACTION : ACTIONS[status]) ?? (docsMissing ? ATTACH : undefined);
  if (!known) return undefined;
  const action = known === refund && r.result.refunded === undefined ? REFUND_NOT_SEEN : known;
  const account = ACCOUNT_ID_FIELDS.map((f) => cell(r, f)).find((v) => v !== '');
  return {
    urgency: action.urgency,
    ...rowOf(r, cell),
    account: account ? maskAccount(account) : '',
    status: docsMissing ? `${status} (documents not attached)` : status,
    reason: reasonOf(r),
    next: action.next,
    ...(action.command ? { command: commandOf(action, file, r.result.payoutId) } : {}),
  };
}

/** Where the results' refunds and the tie-out's differ per currency. */
function refundNotes(groups: ReturnType<typeof groupTotals>, tieOut: TieOutSummary | undefined, file: string): string[] {
  return (tieOut?.totals ?? []).flatMap((t) => {
    const said = groups.filter((g) => g.currency === t.currency).reduce((a, g) => a.plus(readAmount(g.refunded) ?? 0), new Dec(0));
    const seen = readAmount(t.refunded);
    return seen === undefined || seen.equals(said)
      ? []
      : [
          `${t.currency}: the results file says ${amountText(said, t.currency, EXACT)} refunded, the wallet's transactions ${amountText(seen, t.currency, EXACT)}: ${commandOf(REFUND_NOT_SEEN, file, undefined)} records the refunds it sees.`,
        ];
  });
}

/** The results view, its rows read once as they come (issue 44: a report of any size holds only the rows it lists, counts and sums). */
export async function resultsViewOf(
  table: Omit<ResultsTable, 'rows'> & { rows: Iterable<Row> | AsyncIterable<Row> },
  file: string,
  o: { tieOut?: TieOutSummary; environment?: string; batchId?: string; notes?: string[]; swaps?: SwapLine[] } = {},
) {
  // the columns status and reconcile read (an exact name over an alias); a field no column, or two, name: its own name
  const column = batchColumns(table);
  const cell = (r: Row, f: CanonicalField) => (r.cells[column[f] ?? f] ?? '').trim();
  const counts = new Map<string, number>();
  let action: NonNullable<ReturnType<typeof actionOf>>[] = [];
  let actionRows = 0;
  const byUrgency = () => action.sort((a, b) => a.urgency - b.urgency || a.row - b.row);
  const notes = [...(o.notes ?? [])];
  const sums = new Map<string, GroupSums>();
  const copied = copiedPayouts();
  const rows: ResultsRowView[] = [];
  let total = 0;
  for await (const r of table.rows) {
    total++;
    const status = (r.result.status ?? '').trim() || '(none)';
    counts.set(status, (counts.get(status) ?? 0) + 1);
    const a = actionOf(r, status, cell, file);
    if (a) {
      actionRows++;
      action.push(a);
      // (the most urgent are kept as they come: never a list of every row that needs action)
      if (action.length > 2 * MAX_LISTED) action = byUrgency().slice(0, MAX_LISTED);
    }
    const copy = copied(r.result.payoutId, r.rowNumber);
    if (copy) notes.push(`Row ${r.rowNumber}: ${copy}.`);
    else addToGroups(sums, r, cell, notes);
    if (rows.length < MAX_ROWS_LISTED)
      rows.push({
        ...rowOf(r, cell),
        status: (r.result.status ?? '').trim(),
        payoutId: r.result.payoutId ?? '',
        note: reasonOf(r) || (r.result.nextStep ?? ''),
      });
  }
  byUrgency();
  const groups = groupTotals(sums);
  notes.push(...refundNotes(groups, o.tieOut, file));
  return {
    kind: 'results' as const,
    generatedAt: new Date().toISOString(),
    identity: {
      file,
      fileName: basename(file),
      rows: total,
      ...(o.environment ? { environment: o.environment } : {}),
      ...(o.batchId ? { batchId: o.batchId } : {}),
    },
    statusCounts: [...counts].map(([status, rows]) => ({ status, rows })).sort((a, b) => b.rows - a.rows || byText(a.status, b.status)),
    groups,
    rows,
    action: action.slice(0, MAX_LISTED).map(({ urgency: _u, ...a }) => a),
    actionOmitted: Math.max(0, actionRows - MAX_LISTED),
    ...(o.tieOut ? { tieOut: o.tieOut } : {}),
    swaps: o.swaps ?? table.swaps ?? (o.tieOut?.swaps ?? []).map(swapOfTieOut),
    notes,
  };
}

/** A swap as the tie-out gives it (its two legs), when nothing else does: the legs' amounts. */
function swapOfTieOut(w: NonNullable<TieOutSummary['swaps']>[number]): SwapLine {
  const debit = readAmount(w.debit)?.negated();
  return {
    currency: w.currency,
    reference: w.reference,
    id: w.id,
    status: w.status ?? '',
    sourceAmount: debit && amountText(debit, w.sourceCurrency, EXACT),
    sourceCurrency: w.sourceCurrency,
    destinationAmount: w.credit,
    destinationCurrency: w.destinationCurrency,
    exchangeRate: w.exchangeRate,
  };
}

// A whole batch: each row validated as it is read, then the rules across rows and the totals.
// Across rows only each reference and duplicate key (with its first row) and the totals are kept.
import { dirname, resolve } from 'node:path';
import { readBatch, type BatchSource, type ReadOptions } from '../input/read-batch.ts';
import { GUESSED_1252 } from '../input/detect.ts';
import { firstMisreadLine } from '../input/csv-reader.ts';
import type { RawRow } from '../input/records.ts';
import { Dec, formatAmount } from '../money.ts';
import type { Problem } from './problems.ts';
import { parseRow, type RowContext, type RowResult } from './row.ts';
import type { PayoutRow } from './row-schemas.ts';
import { byText } from '../text.ts';

export interface ValidateOptions extends ReadOptions, Pick<RowContext, 'checkDocument'> {
  /** Two rows with the same beneficiary account, amount and currency: a warning instead of an error. */
  allowDuplicateRows?: boolean;
  /** References an earlier run created: such a row keeps its place in the probable-duplicate rule even when now invalid. */
  createdBefore?: (reference: string) => boolean;
}

export interface ValidatedRow extends Pick<RawRow, 'rowNumber' | 'cells'> {
  problems: Problem[];
  valid: boolean;
  payout?: PayoutRow;
}

/** The summary of a batch, counted as its rows are read. */
const emptySummary = (file: string, format: BatchSource['format']) => ({
  file,
  format,
  /** Payout rows (blank and totals rows excluded). */
  rows: 0,
  valid: 0,
  invalid: 0,
  /** Blank rows and totals rows skipped. */
  skipped: 0,
  errors: 0,
  warnings: 0,
  problemsByCode: {} as Record<string, number>,
  /** Of the valid rows: what would be debited, before fees (exact decimal text with the currency's minor units). */
  totalsBySourceCurrency: {} as Record<string, { rows: number; amount: string }>,
  byMethod: {} as Record<string, { rows: number; totals: Record<string, string> }>,
  corridors: [] as Corridor[],
});
export type BatchSummary = ReturnType<typeof emptySummary>;

export type Corridor = Pick<PayoutRow, 'sourceCurrency' | 'destinationCurrency' | 'destinationCountryCode' | 'method'> & {
  rows: number;
  /** In the source currency. */
  amount: string;
};

export type BatchValidation = Awaited<ReturnType<typeof validateBatch>>;

/** Opens and validates a batch. Throws InputError for a file that cannot be used (also while iterating). */
export async function validateBatch(path: string, options: ValidateOptions = {}) {
  const src = await readBatch(path, options);
  const { rows: rawRows, warnings, close, ...info } = src;
  const at = resolve(options.dir ?? '', path);
  const ctx: RowContext = { file: src.file, fields: src.fields, baseDir: dirname(at), checkDocument: options.checkDocument };
  ctx.encodingGuessed = src.encodingDetectedBy === GUESSED_1252;
  if (ctx.encodingGuessed) ctx.misreadLine = await firstMisreadLine(at);
  // Problems of no payout row (blank or totals rows, columns), and the summary: both complete once the rows are read.
  const fileProblems: Problem[] = [];
  const summary = emptySummary(src.file, src.format);
  let drained = 0;
  const drain = () => {
    for (; drained < warnings.length; drained++) {
      const w = warnings[drained]!;
      if (w.code === 'BLANK_ROWS' || w.code === 'TOTALS_ROW') summary.skipped += (w.rowEnd ?? w.row ?? 0) - (w.row ?? 0) + 1;
      const p: Problem = {
        severity: 'warning',
        code: w.code,
        file: src.file,
        message: w.message,
        ...(w.row !== undefined && { row: w.row }),
      };
      countProblem(summary, p);
      fileProblems.push(p);
    }
  };
  drain();

  const acrossRows = crossRowRules(ctx, options);
  const corridors = new Map<string, RunningTotal>();

  function validateOne(raw: RawRow): ValidatedRow {
    const parsed = parseRow(raw, ctx);
    const problems = [...parsed.problems, ...acrossRows(raw, parsed)];
    const payout = problems.some((p) => p.severity === 'error') ? undefined : parsed.payout;
    summary.rows++;
    problems.forEach((p) => countProblem(summary, p));
    summary[payout ? 'valid' : 'invalid']++;
    if (payout) addToCorridor(corridors, payout);
    return { rowNumber: raw.rowNumber, cells: raw.cells, problems, valid: !!payout, ...(payout && { payout }) };
  }

  async function* rows(): AsyncGenerator<ValidatedRow> {
    for await (const raw of rawRows) {
      drain();
      yield validateOne(raw);
    }
    drain();
    Object.assign(summary, totalsOf(corridors));
  }

  return { source: info, rows: rows(), fileProblems, summary, close };
}

function countProblem(summary: BatchSummary, p: Problem): void {
  if (p.severity === 'error') summary.errors++;
  else summary.warnings++;
  summary.problemsByCode[p.code] = (summary.problemsByCode[p.code] ?? 0) + 1;
}

/** DUPLICATE_REFERENCE and PROBABLE_DUPLICATE, row after row: each reference and key kept with its first row. */
function crossRowRules(ctx: RowContext, options: ValidateOptions): (raw: RawRow, parsed: RowResult) => Problem[] {
  /** Each first row, as its problems name it: "row 3", or a pain.001's transaction by its XPath. */
  const firstWithReference = new Map<string, string>();
  const firstWithKey = new Map<string, string>();
  const refHeader = ctx.fields.reference;
  const amountHeader = ctx.fields.sourceAmount;
  const allowed = options.allowDuplicateRows === true;
  return (raw, parsed) => {
    const problems: Problem[] = [];
    const named = raw.xml ? `by ${raw.xml.path}` : `on row ${raw.rowNumber}`;
    const ref = refHeader ? raw.cells[refHeader] : '';
    const sameReference = ref ? firstWithReference.get(ref) : undefined;
    if (ref && sameReference === undefined) firstWithReference.set(ref, named);
    if (sameReference !== undefined) {
      problems.push({
        severity: 'error',
        code: 'DUPLICATE_REFERENCE',
        file: ctx.file,
        row: raw.rowNumber,
        column: raw.xml?.elements.reference ?? refHeader,
        value: ref,
        message: `the reference is already used ${sameReference}: each payout needs its own (it makes the payout idempotent)`,
        expected: 'a reference used by no other row',
      });
    }
    // the rows that are or will be payouts: a valid row, and a row an earlier run created under this reference
    const key = parsed.duplicateKey;
    const payable = !!parsed.payout || (!!ref && sameReference === undefined && options.createdBefore?.(ref) === true);
    if (key === undefined || !payable) return problems;
    const sameKey = firstWithKey.get(key);
    if (sameKey === undefined) {
      firstWithKey.set(key, raw.xml ? raw.xml.path : `row ${raw.rowNumber}`);
      return problems;
    }
    const shownAmount = raw.cells[amountHeader ?? ''];
    problems.push({
      severity: allowed ? 'warning' : 'error',
      code: 'PROBABLE_DUPLICATE',
      file: ctx.file,
      row: raw.rowNumber,
      column: raw.xml?.elements.sourceAmount ?? amountHeader ?? 'sourceAmount',
      ...(shownAmount ? { value: shownAmount } : {}),
      message: `same beneficiary account, amount and currency as ${sameKey}: a probable duplicate${allowed ? ' (allowed by --allow-duplicate-rows)' : ''}`,
      ...(!allowed && { expected: 'one row per payment, or --allow-duplicate-rows when both are intended' }),
    });
    return problems;
  };
}

type RunningTotal = { corridor: Omit<Corridor, 'amount'>; amount: Dec };

/** One running total per corridor; currency and method totals are folded from them at the end. */
function addToCorridor(corridors: Map<string, RunningTotal>, payout: PayoutRow): void {
  const { sourceCurrency, destinationCurrency, destinationCountryCode, method } = payout;
  const key = `${sourceCurrency}|${destinationCurrency}|${destinationCountryCode}|${method}`;
  const t = corridors.get(key) ?? {
    corridor: { sourceCurrency, destinationCurrency, destinationCountryCode, method, rows: 0 },
    amount: new Dec(0),
  };
  t.corridor.rows++;
  t.amount = t.amount.plus(payout.sourceAmount);
  corridors.set(key, t);
}

const byKey = <T>(m: Map<string, T>): [string, T][] => [...m].sort(([a], [b]) => byText(a, b));

/** The summary's totals by source currency, by method and by corridor, from the corridors' running totals. */
function totalsOf(corridors: Map<string, RunningTotal>): Pick<BatchSummary, 'totalsBySourceCurrency' | 'byMethod' | 'corridors'> {
  const totals = new Map<string, { rows: number; amount: Dec }>();
  const byMethod = new Map<string, { rows: number; totals: Map<string, Dec> }>();
  for (const { corridor: c, amount } of corridors.values()) {
    const t = totals.get(c.sourceCurrency) ?? { rows: 0, amount: new Dec(0) };
    t.rows += c.rows;
    t.amount = t.amount.plus(amount);
    totals.set(c.sourceCurrency, t);
    const m = byMethod.get(c.method) ?? { rows: 0, totals: new Map<string, Dec>() };
    m.rows += c.rows;
    m.totals.set(c.sourceCurrency, (m.totals.get(c.sourceCurrency) ?? new Dec(0)).plus(amount));
    byMethod.set(c.method, m);
  }
  const formatted = (m: Map<string, Dec>) => Object.fromEntries(byKey(m).map(([ccy, d]) => [ccy, formatAmount(d, ccy)]));
  return {
    totalsBySourceCurrency: Object.fromEntries(
      byKey(totals).map(([ccy, t]) => [ccy, { rows: t.rows, amount: formatAmount(t.amount, ccy) }]),
    ),
    byMethod: Object.fromEntries(byKey(byMethod).map(([m, v]) => [m, { rows: v.rows, totals: formatted(v.totals) }])),
    corridors: byKey(corridors).map(([, { corridor: c, amount }]) => ({ ...c, amount: formatAmount(amount, c.sourceCurrency) })),
  };
}

// A whole batch: read (streamed for CSV), validate each row, apply the rules that span rows
// (duplicate references, probable duplicate rows) and total what would be sent. Memory stays flat:
// across rows only a 53-bit hash per reference and per valid row is kept (12 bytes each, in typed
// arrays), plus small totals.
import { dirname, resolve } from 'node:path';
import { readBatch, type BatchSource, type ReadOptions } from '../input/index.ts';
import type { InputWarning, RawRow } from '../input/rows.ts';
import { Dec, formatAmount } from '../money.ts';
import type { PayoutMethod } from '../spec/codes.ts';
import type { DocumentCheck } from './documents.ts';
import { cachedDocumentChecker } from './documents.ts';
import type { Problem } from './problems.ts';
import { parseRow, type RowContext } from './row.ts';
import type { PayoutRow } from './schemas.ts';

export interface ValidateOptions extends ReadOptions {
  /** Two rows with the same beneficiary account, amount and currency: a warning instead of an error. */
  allowDuplicateRows?: boolean;
  /** Replaces the document checker (tests). */
  checkDocument?: (absPath: string, shownAs?: string) => DocumentCheck;
  /**
   * Rows an earlier run created (the engine's journal): the probable-duplicate key a row was sent
   * with, by reference and row number. Such a row is not validated again (see ValidatedRow.settled);
   * the summary counts it valid but leaves it out of its totals and corridors (only the engine
   * passes this, and it totals created rows from the journal).
   */
  settled?: (reference: string, rowNumber: number) => SettledRow | undefined;
}

/** What the journal knows of a row created by an earlier run. */
export interface SettledRow {
  /** probableDuplicateKey() of the payout it was sent as. */
  dup: number;
}

export interface ValidatedRow {
  rowNumber: number;
  /** The row's cells by the file's own headers, for the results file. */
  cells: Record<string, string>;
  problems: Problem[];
  valid: boolean;
  /** Present when valid, unless settled. */
  payout?: PayoutRow;
  /**
   * The row was created by an earlier run (ValidateOptions.settled) and is not validated again:
   * valid, with no payout. Its payout exists at the service and is never sent again, so what the
   * file says of it now cannot change anything; only the rules that span rows still see it (its
   * reference and its probable-duplicate key, from the journal).
   */
  settled?: { reference: string };
}

export interface AmountTotal {
  rows: number;
  /** Exact decimal text with the currency's minor units. */
  amount: string;
}

export interface BatchSummary {
  file: string;
  format: BatchSource['format'];
  /** Payout rows read (blank and totals rows excluded). */
  rows: number;
  valid: number;
  invalid: number;
  /** Blank rows and totals rows skipped. */
  skipped: number;
  errors: number;
  warnings: number;
  problemsByCode: Record<string, number>;
  /** Of the valid rows: what would be debited, before fees. */
  totalsBySourceCurrency: Record<string, AmountTotal>;
  byMethod: Record<string, { rows: number; totals: Record<string, string> }>;
  corridors: Corridor[];
}

export interface Corridor {
  sourceCurrency: string;
  destinationCurrency: string;
  destinationCountryCode: string;
  method: PayoutMethod;
  rows: number;
  /** In the source currency. */
  amount: string;
}

export interface BatchValidation {
  source: Omit<BatchSource, 'rows' | 'warnings' | 'close'>;
  /** Rows in file order, each with its own problems. Single pass. */
  rows: AsyncIterable<ValidatedRow>;
  /** Problems of no payout row (blank rows, totals row, ignored columns): grows while rows are read. */
  fileProblems: Problem[];
  /** Complete once rows is exhausted. */
  summary: BatchSummary;
  close(): Promise<void>;
}

/** cyrb53: a fast 53-bit string hash, enough to find duplicates among millions of rows. */
export function hash53(str: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < str.length; i++) {
    const ch = str.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** The beneficiary account of a payout, whatever the method: what two rows must share to be duplicates. */
export function accountKey(p: PayoutRow): string {
  const b = p.beneficiary;
  const id = b.iban ?? [b.accountNumber, b.sortCode, b.routingNumber, b.bankCode, b.swiftCode].filter(Boolean).join('/');
  return id || b.alipayId || b.openId || b.wechatUserId || b.fpsId || b.phoneNumber || b.email || b.accountName;
}

/**
 * The key of the probable-duplicate rule: same beneficiary account, amount and currencies. The
 * engine journals it with each initiate, so a resumed run can apply the rule to the rows it created
 * without validating them again.
 */
export function probableDuplicateKey(p: PayoutRow): number {
  return hash53([accountKey(p), p.sourceAmount.toFixed(), p.sourceCurrency, p.destinationCurrency].join('|'), 7);
}

/**
 * 53-bit hash → the first row that had it: open addressing in typed arrays (12 bytes a slot, off
 * the V8 heap, no boxed number per key), where a Map<number, number> takes about 40 bytes and a
 * heap number per entry. Kept under 70% full.
 */
export class FirstRowIndex {
  private keys: Float64Array;
  private rows: Uint32Array;
  private mask: number;
  size = 0;

  constructor(capacity = 1 << 12) {
    let c = 16;
    while (c < capacity) c *= 2;
    this.keys = new Float64Array(c);
    this.rows = new Uint32Array(c);
    this.mask = c - 1;
  }

  /** The row recorded for hash h; when there is none, records `row` (> 0) and returns undefined. */
  firstOrAdd(h: number, row: number): number | undefined {
    let i = (h >>> 0) & this.mask;
    for (;;) {
      const r = this.rows[i]!;
      if (r === 0) break;
      if (this.keys[i] === h) return r;
      i = (i + 1) & this.mask;
    }
    this.keys[i] = h;
    this.rows[i] = row;
    if (++this.size * 10 > this.keys.length * 7) this.grow();
    return undefined;
  }

  private grow(): void {
    const { keys, rows } = this;
    this.keys = new Float64Array(keys.length * 2);
    this.rows = new Uint32Array(keys.length * 2);
    this.mask = this.keys.length - 1;
    for (let j = 0; j < keys.length; j++) {
      const r = rows[j]!;
      if (r === 0) continue;
      const h = keys[j]!;
      let i = (h >>> 0) & this.mask;
      while (this.rows[i] !== 0) i = (i + 1) & this.mask;
      this.keys[i] = h;
      this.rows[i] = r;
    }
  }
}

export function warningToProblem(file: string, w: InputWarning): Problem {
  const p: Problem = { severity: 'warning', code: w.code, file, message: w.message };
  if (w.row !== undefined) p.row = w.row;
  return p;
}

/**
 * Opens and validates a batch. Throws InputError when the file cannot be used at all (also while
 * iterating: a CSV broken halfway, or a file with a header and no rows).
 */
export async function validateBatch(path: string, options: ValidateOptions = {}): Promise<BatchValidation> {
  const src = await readBatch(path, options);
  const { rows: rawRows, warnings, close, ...info } = src;
  const ctx: RowContext = {
    file: src.file,
    fields: src.fields,
    baseDir: dirname(resolve(path)),
    checkDocument: options.checkDocument ?? cachedDocumentChecker(),
  };
  const fileProblems: Problem[] = [];
  const summary: BatchSummary = {
    file: src.file,
    format: src.format,
    rows: 0,
    valid: 0,
    invalid: 0,
    skipped: 0,
    errors: 0,
    warnings: 0,
    problemsByCode: {},
    totalsBySourceCurrency: {},
    byMethod: {},
    corridors: [],
  };
  const count = (p: Problem) => {
    if (p.severity === 'error') summary.errors++;
    else summary.warnings++;
    summary.problemsByCode[p.code] = (summary.problemsByCode[p.code] ?? 0) + 1;
  };
  let drained = 0;
  const drain = () => {
    for (; drained < warnings.length; drained++) {
      const w = warnings[drained]!;
      if (w.code === 'BLANK_ROWS') summary.skipped += (w.rowEnd ?? w.row ?? 0) - (w.row ?? 0) + 1;
      if (w.code === 'TOTALS_ROW') summary.skipped++;
      const p = warningToProblem(src.file, w);
      count(p);
      fileProblems.push(p);
    }
  };
  drain();

  const refs = new FirstRowIndex();
  const dupRows = new FirstRowIndex();
  const corridors = new Map<string, { c: Omit<Corridor, 'amount'>; amount: Dec }>();

  function validateOne(raw: RawRow): ValidatedRow {
    const refHeader = src.fields.reference;
    const ref = refHeader ? raw.cells[refHeader] : '';
    const firstWithRef = ref ? refs.firstOrAdd(hash53(ref), raw.rowNumber) : undefined;
    // A row created by an earlier run skips validation, but only when nothing about it is unusual:
    // its reference and its duplicate key seen first here, at the row number it was sent from.
    // Otherwise it is validated as before, and flagged as before.
    if (ref && firstWithRef === undefined && options.settled) {
      const s = options.settled(ref, raw.rowNumber);
      if (s && dupRows.firstOrAdd(s.dup, raw.rowNumber) === undefined) {
        summary.rows++;
        summary.valid++;
        return { rowNumber: raw.rowNumber, cells: raw.cells, problems: [], valid: true, settled: { reference: ref } };
      }
    }
    const { problems, payout } = parseRow(raw, ctx);
    if (firstWithRef !== undefined) {
      problems.push({
        severity: 'error',
        code: 'DUPLICATE_REFERENCE',
        file: src.file,
        row: raw.rowNumber,
        column: refHeader,
        value: ref,
        message: `the reference is already used on row ${firstWithRef}: each payout needs its own (it makes the payout idempotent)`,
        expected: 'a reference used by no other row',
      });
    }
    if (payout) {
      const first = dupRows.firstOrAdd(probableDuplicateKey(payout), raw.rowNumber);
      if (first !== undefined) {
        const allowed = options.allowDuplicateRows === true;
        const shownAmount = raw.cells[src.fields.sourceAmount ?? ''];
        const p: Problem = {
          severity: allowed ? 'warning' : 'error',
          code: 'PROBABLE_DUPLICATE',
          file: src.file,
          row: raw.rowNumber,
          column: src.fields.sourceAmount ?? 'sourceAmount',
          ...(shownAmount ? { value: shownAmount } : {}),
          message: `same beneficiary account, amount and currency as row ${first}: a probable duplicate${allowed ? ' (allowed by --allow-duplicate-rows)' : ''}`,
        };
        if (!allowed) p.expected = 'one row per payment, or --allow-duplicate-rows when both are intended';
        problems.push(p);
      }
    }
    let valid = true;
    for (const p of problems) if (p.severity === 'error') valid = false;
    summary.rows++;
    problems.forEach(count);
    if (!valid || !payout) {
      summary.invalid++;
      return { rowNumber: raw.rowNumber, cells: raw.cells, problems, valid: false };
    }
    summary.valid++;
    // one running total per corridor; currency and method totals are folded from them at the end
    const ck = `${payout.sourceCurrency}|${payout.destinationCurrency}|${payout.destinationCountryCode}|${payout.method}`;
    const c = corridors.get(ck);
    if (c) {
      c.c.rows++;
      c.amount = c.amount.plus(payout.sourceAmount);
    } else {
      corridors.set(ck, {
        c: {
          sourceCurrency: payout.sourceCurrency,
          destinationCurrency: payout.destinationCurrency,
          destinationCountryCode: payout.destinationCountryCode,
          method: payout.method,
          rows: 1,
        },
        amount: payout.sourceAmount,
      });
    }
    return { rowNumber: raw.rowNumber, cells: raw.cells, problems, valid: true, payout };
  }

  function finish() {
    drain();
    const totals = new Map<string, { rows: number; amount: Dec }>();
    const byMethod = new Map<string, { rows: number; totals: Map<string, Dec> }>();
    for (const { c, amount } of corridors.values()) {
      const t = totals.get(c.sourceCurrency) ?? { rows: 0, amount: new Dec(0) };
      t.rows += c.rows;
      t.amount = t.amount.plus(amount);
      totals.set(c.sourceCurrency, t);
      const m = byMethod.get(c.method) ?? { rows: 0, totals: new Map<string, Dec>() };
      m.rows += c.rows;
      m.totals.set(c.sourceCurrency, (m.totals.get(c.sourceCurrency) ?? new Dec(0)).plus(amount));
      byMethod.set(c.method, m);
    }
    summary.totalsBySourceCurrency = Object.fromEntries(
      [...totals].sort(([a], [b]) => a.localeCompare(b)).map(([ccy, t]) => [ccy, { rows: t.rows, amount: formatAmount(t.amount, ccy) }]),
    );
    summary.byMethod = Object.fromEntries(
      [...byMethod]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([m, v]) => [
          m,
          { rows: v.rows, totals: Object.fromEntries([...v.totals].sort().map(([ccy, d]) => [ccy, formatAmount(d, ccy)])) },
        ]),
    );
    summary.corridors = [...corridors.values()]
      .map(({ c, amount }) => ({ ...c, amount: formatAmount(amount, c.sourceCurrency) }))
      .sort((a, b) =>
        `${a.sourceCurrency}${a.destinationCurrency}${a.destinationCountryCode}${a.method}`.localeCompare(
          `${b.sourceCurrency}${b.destinationCurrency}${b.destinationCountryCode}${b.method}`,
        ),
      );
  }

  async function* rows(): AsyncGenerator<ValidatedRow> {
    for await (const raw of rawRows) {
      drain();
      yield validateOne(raw);
    }
    finish();
  }

  return { source: info, rows: rows(), fileProblems, summary, close };
}

export interface CollectedBatch {
  source: BatchValidation['source'];
  rows: ValidatedRow[];
  /** Every problem, file problems included, in row order. */
  problems: Problem[];
  summary: BatchSummary;
}

/** validateBatch read to the end, everything kept in memory: for tests, templates and small files. */
export async function collectBatch(path: string, options: ValidateOptions = {}): Promise<CollectedBatch> {
  const v = await validateBatch(path, options);
  const rows: ValidatedRow[] = [];
  for await (const r of v.rows) rows.push(r);
  const problems = [...v.fileProblems, ...rows.flatMap((r) => r.problems)].sort((a, b) => (a.row ?? 0) - (b.row ?? 0));
  return { source: v.source, rows, problems, summary: v.summary };
}

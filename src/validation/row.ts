// One row → its problems, and when it has no error, the typed PayoutRow ready to be sent.
// Pure but for reading the first bytes of the documents it names (through ctx.checkDocument).
// The package's main entry loads every language's names; the codes need none of them.
import countries from 'i18n-iso-countries/index.js';
import { MAX_DOCUMENTS_PER_PAYOUT, type PayoutMethod } from '../spec/codes.ts';
import { METHOD_RULES, methodsForCorridor } from '../spec/methods.ts';
import type { Beneficiary } from '../spec/schemas.ts';
import { maskAccount } from '../mask.ts';
import { BENEFICIARY_COLUMNS, type BeneficiaryColumn, type CanonicalField } from '../input/columns.ts';
import type { RawRow } from '../input/rows.ts';
import { parseAmount } from './amount.ts';
import { cachedDocumentChecker, documentPath, documentPaths, type DocumentCheck } from './documents.ts';
import { nubanCheckDigitOk } from './fields.ts';
import type { Problem, ProblemCode, Severity } from './problems.ts';
import {
  BENEFICIARY_SCHEMAS,
  METHOD_FIELD_SETS,
  OPTIONAL_PAYOUT_FIELDS,
  PAYOUT_FIELD_CHECKS,
  minDigits,
  type IssueParams,
  type PayoutRow,
} from './schemas.ts';
import type { Dec } from '../money.ts';

export interface RowContext {
  /** The batch file as given (for the problems). */
  file: string;
  /** canonical field → the file's header (from readBatch). */
  fields: Partial<Record<CanonicalField, string>>;
  /** Folder the document paths are relative to: the batch file's folder. */
  baseDir: string;
  /** Document checker; defaults to one reading the files (cached). */
  checkDocument?: (absPath: string, shownAs?: string) => DocumentCheck;
}

export interface RowResult {
  problems: Problem[];
  /** Present when the row has no error. */
  payout?: PayoutRow;
}

/** Account identifiers: shown masked (last 4 kept) in every problem. */
export const MASKED_FIELDS: ReadonlySet<string> = new Set([
  'accountNumber',
  'iban',
  'alipayId',
  'openId',
  'wechatUserId',
  'fpsId',
  'phoneNumber',
]);
/** Identifiers that must reach us as text: a numeric Excel cell here is checked for lost digits. */
export const TEXT_ONLY_FIELDS: ReadonlySet<string> = new Set([
  'accountNumber',
  'sortCode',
  'routingNumber',
  'phoneNumber',
  'iban',
  'bankCode',
  'fpsId',
]);

/** A date-formatted Excel cell is refused in these columns: the identifiers and the amount. */
const DATE_TRAP_FIELDS: readonly string[] = [...TEXT_ONLY_FIELDS, 'sourceAmount'];

const defaultChecker = cachedDocumentChecker();
type PayoutField = keyof typeof PAYOUT_FIELD_CHECKS;
const PAYOUT_FIELDS = Object.keys(PAYOUT_FIELD_CHECKS) as PayoutField[];

/** Excel shows at most 15 significant digits; a number is read as Excel would show it in General. */
const excelNumberText = (v: number): string => String(Number(v.toPrecision(15)));

export function validateRow(row: RawRow, ctx: RowContext): Problem[] {
  return parseRow(row, ctx).problems;
}

/** The file's header of a field (the field's own name when the file has no such column). */
const headerOf = (ctx: RowContext, f: string): string => ctx.fields[f as CanonicalField] ?? f;
/** A field's cell as read ('' when the file has no such column). */
function rawOf(row: RawRow, ctx: RowContext, f: string): string {
  const h = ctx.fields[f as CanonicalField];
  return h === undefined ? '' : (row.cells[h] ?? '');
}
function add(
  problems: Problem[],
  row: RawRow,
  ctx: RowContext,
  severity: Severity,
  code: ProblemCode,
  f: string | undefined,
  message: string,
  expected?: string,
  value?: string,
): void {
  const p = { severity, code, file: ctx.file, row: row.rowNumber } as Problem;
  if (f !== undefined) {
    p.column = headerOf(ctx, f);
    const v = value ?? rawOf(row, ctx, f);
    if (v !== '') p.value = MASKED_FIELDS.has(f) ? maskAccount(v) : v;
  }
  p.message = message;
  if (expected) p.expected = expected;
  problems.push(p);
}

export function parseRow(row: RawRow, ctx: RowContext): RowResult {
  const problems: Problem[] = [];

  // ---- the shape of the row
  if (row.extraCells) {
    add(
      problems,
      row,
      ctx,
      'error',
      'EXTRA_CELLS',
      undefined,
      `${row.extraCells} non-empty cell(s) beyond the last column: a value probably holds the delimiter without quotes (e.g. an amount 1,234.56 in a comma-separated file)`,
      'as many cells as headers; quote values that hold the delimiter',
    );
  }
  for (const h in row.cells) {
    if (row.cells[h]!.includes('\uFFFD')) {
      problems.push({
        severity: 'error',
        code: 'ENCODING',
        file: ctx.file,
        row: row.rowNumber,
        column: h,
        message: 'characters that are not valid in the encoding read (shown as \uFFFD): the file is probably in another encoding',
        expected: 'the file saved as UTF-8, or --encoding windows-1252 / utf-16le',
      });
    }
  }

  // ---- payout fields (their validators are those of PayoutFieldsSchema), normalized
  const top: Partial<Record<PayoutField, string>> = {};
  for (const f of PAYOUT_FIELDS) {
    const v = rawOf(row, ctx, f);
    if (v === '') {
      if (!OPTIONAL_PAYOUT_FIELDS.has(f)) add(problems, row, ctx, 'error', 'MISSING_VALUE', f, `${f} is required`, requiredHint(f));
      continue;
    }
    const r = PAYOUT_FIELD_CHECKS[f](v);
    if (r.ok) top[f] = r.value;
    else add(problems, row, ctx, r.severity ?? 'error', r.code, f, r.message, r.expected);
  }
  const method = top.method as PayoutMethod | undefined;
  const sourceCurrency = top.sourceCurrency;

  // ---- Excel traps: a date-formatted cell where an amount or identifier is expected (German
  // Excel makes the date 1 May of "1.5"): its value would be a serial number or an ISO date
  let trapped: Set<string> | undefined;
  if (row.dates) {
    for (const f of DATE_TRAP_FIELDS) {
      const h = ctx.fields[f as CanonicalField];
      const shown = h === undefined ? undefined : row.dates[h];
      if (shown === undefined) continue;
      (trapped ??= new Set<string>()).add(f);
      const amount = f === 'sourceAmount';
      add(
        problems,
        row,
        ctx,
        'error',
        'EXCEL_DATE',
        f,
        `the cell is formatted as a date (shows "${shown}"); format the column as ${amount ? 'a number' : 'Text'}`,
        amount
          ? 'the column formatted as a number and the amount typed again, such as 1500.00'
          : 'the column formatted as Text and the value typed again',
        shown,
      );
    }
  }

  // ---- Excel traps: identifiers that arrived as numbers
  let overrides: Record<string, string> | undefined;
  if (row.numbers) {
    overrides = {};
    trapped ??= new Set<string>();
    for (const f of TEXT_ONLY_FIELDS) {
      const h = ctx.fields[f as CanonicalField];
      const n = h === undefined ? undefined : row.numbers[h];
      if (n === undefined) continue;
      const cell = rawOf(row, ctx, f);
      const label = `the ${f}`;
      if (/e/i.test(cell) || Math.abs(n) >= 1e15) {
        trapped.add(f);
        add(
          problems,
          row,
          ctx,
          'error',
          'EXCEL_DIGITS_LOST',
          f,
          `${label} is stored as a number ${/e/i.test(cell) ? 'shown in scientific notation' : 'of more than 15 digits'}: Excel keeps only 15 significant digits, so digits were lost and cannot be recovered`,
          'the column formatted as Text before the value is typed or pasted (or a leading apostrophe)',
        );
        continue;
      }
      if (!Number.isInteger(n)) continue;
      const digits = String(n);
      if (f === 'phoneNumber') {
        trapped.add(f);
        add(
          problems,
          row,
          ctx,
          'error',
          'EXCEL_LEADING_ZEROS_LOST',
          f,
          `${label} is stored as a number, which dropped its leading + (and any leading 0)`,
          'the column formatted as Text, with the number in E.164 form such as +85291234567',
          digits,
        );
        continue;
      }
      const min = minDigits(f as BeneficiaryColumn, method);
      if (min !== undefined && digits.length < min) {
        trapped.add(f);
        add(
          problems,
          row,
          ctx,
          'error',
          'EXCEL_LEADING_ZEROS_LOST',
          f,
          `${label} is stored as a number of ${digits.length} digits but has ${min}${method ? ` for ${method}` : ''}: Excel dropped the leading zero(s) and which ones cannot be known`,
          `the column formatted as Text and the ${min} digits typed again`,
          digits,
        );
        continue;
      }
      overrides[f] = digits;
      if (min === undefined && (f === 'accountNumber' || f === 'bankCode')) {
        add(
          problems,
          row,
          ctx,
          'warning',
          'EXCEL_LEADING_ZEROS_LOST',
          f,
          `${label} is stored as a number: if it began with 0, Excel dropped the zeros`,
          'the column formatted as Text',
          digits,
        );
      }
    }
  }

  // ---- amount
  let amount: Dec | undefined;
  const amountHeader = ctx.fields.sourceAmount;
  const amountNumber = amountHeader !== undefined ? row.numbers?.[amountHeader] : undefined;
  const amountCell = rawOf(row, ctx, 'sourceAmount');
  const amountText = amountNumber !== undefined ? excelNumberText(amountNumber) : amountCell;
  if (trapped?.has('sourceAmount')) {
    // refused above: a date is no amount
  } else if (amountText === '')
    add(problems, row, ctx, 'error', 'MISSING_VALUE', 'sourceAmount', 'sourceAmount is required', 'a positive amount such as 1234.56');
  else {
    const a = parseAmount(amountText, sourceCurrency, { fromNumber: amountNumber !== undefined });
    if (a.ok) amount = a.value;
    else {
      const note = amountNumber !== undefined && amountCell !== amountText ? ` (the cell holds ${amountText} and shows ${amountCell})` : '';
      add(problems, row, ctx, 'error', a.code, 'sourceAmount', a.message + note, a.expected);
    }
  }

  // ---- beneficiary, by the method's schema
  let beneficiary: Beneficiary | undefined;
  if (method) {
    const used = METHOD_FIELD_SETS[method];
    // the method's non-empty fields (an empty cell is a missing value to the schema)
    const input: Record<string, string> = {};
    for (const f of BENEFICIARY_COLUMNS) {
      const cell = rawOf(row, ctx, f);
      if (used.has(f)) {
        const v = overrides?.[f] ?? cell;
        if (v !== '') input[f] = v;
      } else if (cell !== '') {
        add(
          problems,
          row,
          ctx,
          'warning',
          'FIELD_NOT_USED',
          f,
          `${method} does not use ${f}: the value is not sent`,
          `${f} left empty for ${method}`,
        );
      }
    }
    // the method's zod schema: its issues become the problems
    const r = BENEFICIARY_SCHEMAS[method].safeParse(input);
    if (r.success) {
      // only the non-empty values are sent
      const b: Record<string, string> = {};
      for (const [k, v] of Object.entries(r.data as Record<string, unknown>)) if (typeof v === 'string' && v !== '') b[k] = v;
      beneficiary = b as Beneficiary;
    } else {
      for (const iss of r.error.issues) {
        const f = iss.path[0] as string | undefined;
        if (f !== undefined && trapped?.has(f)) continue;
        const params = (iss as { params?: IssueParams }).params;
        if (iss.code === 'custom' && params?.problem === 'MISSING_ONE_OF') {
          const groups = METHOD_RULES[method].oneOf ?? [];
          const p = {
            severity: 'error',
            code: 'MISSING_ONE_OF',
            file: ctx.file,
            row: row.rowNumber,
            column: [...new Set(groups.flat())].map((g) => headerOf(ctx, g)).join(' | '),
            message: iss.message,
          } as Problem;
          if (params.expected) p.expected = params.expected;
          problems.push(p);
        } else if (iss.code === 'custom') {
          add(problems, row, ctx, params?.severity ?? 'error', params?.problem ?? 'INVALID_TEXT', f, iss.message, params?.expected);
        } else if (iss.code === 'invalid_type') {
          add(
            problems,
            row,
            ctx,
            'error',
            'MISSING_VALUE',
            f,
            ctx.fields[f as CanonicalField] === undefined
              ? `${method} needs ${f}, and the file has no ${f} column`
              : `${method} needs ${f}`,
          );
        } else {
          add(problems, row, ctx, 'error', 'INVALID_TEXT', f, iss.message);
        }
      }
    }
    if (
      beneficiary &&
      method === 'NIP' &&
      beneficiary.bankCode?.length === 3 &&
      beneficiary.accountNumber &&
      !nubanCheckDigitOk(beneficiary.bankCode, beneficiary.accountNumber)
    ) {
      add(
        problems,
        row,
        ctx,
        'warning',
        'NUBAN_CHECK_DIGIT',
        'accountNumber',
        `the NUBAN check digit does not match bank code ${beneficiary.bankCode}: the account number or the bank code may be mistyped`,
        'the 10-digit NUBAN of an account at that bank',
      );
    }
  }

  // ---- combinations
  const dest = top.destinationCurrency;
  const country = top.destinationCountryCode;
  if (method && sourceCurrency && dest && country) {
    const list = methodsForCorridor(sourceCurrency, dest, country);
    if (!list.includes(method)) {
      add(
        problems,
        row,
        ctx,
        'warning',
        'CORRIDOR_NOT_IN_OVERVIEW',
        'method',
        `${sourceCurrency} to ${dest} in ${country} by ${method} is not in the spec's corridor overview (${list.length ? `it lists ${list.join(', ')}` : 'it lists no method'} for this corridor); the methods route decides when the batch is sent`,
        list.length ? list.join(' or ') : undefined,
      );
    }
  }
  if (beneficiary && dest && beneficiary.accountCurrency !== dest) {
    add(
      problems,
      row,
      ctx,
      'warning',
      'ACCOUNT_CURRENCY_MISMATCH',
      'accountCurrency',
      `the account currency ${beneficiary.accountCurrency} differs from the destination currency ${dest}`,
      dest,
    );
  }
  if (beneficiary?.iban && country) {
    const ibanCountry = countries.alpha2ToAlpha3(beneficiary.iban.slice(0, 2));
    if (ibanCountry && ibanCountry !== country) {
      add(
        problems,
        row,
        ctx,
        'warning',
        'IBAN_MISMATCH',
        'iban',
        `the IBAN is of ${ibanCountry} but destinationCountryCode is ${country}`,
        `destinationCountryCode ${ibanCountry}`,
      );
    }
  }

  // ---- documents
  const documents: string[] = [];
  const docCell = rawOf(row, ctx, 'documents');
  const docList = docCell === '' ? [] : documentPaths(docCell);
  if (docList.length > MAX_DOCUMENTS_PER_PAYOUT) {
    add(
      problems,
      row,
      ctx,
      'error',
      'TOO_MANY_DOCUMENTS',
      'documents',
      `${docList.length} documents; the service takes at most ${MAX_DOCUMENTS_PER_PAYOUT} per payout`,
      `at most ${MAX_DOCUMENTS_PER_PAYOUT} paths separated by ";" (or merge them into one PDF)`,
    );
  }
  const check = ctx.checkDocument ?? defaultChecker;
  for (const d of docList) {
    const abs = documentPath(ctx.baseDir, d);
    const r = check(abs, d);
    if (r.ok) documents.push(abs);
    else add(problems, row, ctx, 'error', r.code, 'documents', r.message, r.expected, d);
  }
  const withdrawal = top.withdrawal === 'true';
  if (!withdrawal && docList.length === 0) {
    add(
      problems,
      row,
      ctx,
      'warning',
      'NO_DOCUMENT',
      'documents',
      'no supporting document: the service will hold this payout until one is attached (a withdrawal to an own or UBO account needs none)',
      'a PDF, JPEG or PNG path, or withdrawal true',
    );
  }

  if (!method || !amount || !beneficiary) return { problems };
  for (const p of problems) if (p.severity === 'error') return { problems };
  const payout: PayoutRow = {
    rowNumber: row.rowNumber,
    reference: top.reference!,
    sourceAmount: amount,
    sourceCurrency: sourceCurrency!,
    destinationCurrency: dest!,
    destinationCountryCode: country!,
    method,
    beneficiary,
    narration: top.narration!,
    documents,
    withdrawal,
  };
  if (top.remitterAddress) payout.remitterAddress = top.remitterAddress;
  return { problems, payout };
}

function requiredHint(f: string): string | undefined {
  switch (f) {
    case 'reference':
      return 'a reference unique in the file, e.g. PAY-2025-001';
    case 'sourceCurrency':
    case 'destinationCurrency':
      return 'a 3-letter ISO 4217 code such as USD';
    case 'destinationCountryCode':
      return 'a 3-letter ISO 3166-1 alpha-3 code such as NGA';
    case 'method':
      return 'a payout method such as SEPA, NIP, ACH';
    case 'narration':
      return 'a payment description of 1 to 140 characters';
    default:
      return undefined;
  }
}

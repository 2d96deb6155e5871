// One row → its problems, and when it has no error, the typed PayoutRow ready to be sent.
// Pure but for reading the first bytes of the documents it names (through ctx.checkDocument).
// The package's main entry loads every language's names; the codes need none of them.
import { isAbsolute, resolve } from 'node:path';
import countries from 'i18n-iso-countries/index.js';
import { MAX_DOCUMENTS_PER_PAYOUT, type PayoutMethod } from '../spec/codes.ts';
import { METHOD_RULES, methodsForCorridor } from '../spec/methods.ts';
import type { Beneficiary } from '../spec/schemas.ts';
import { maskAccount } from '../mask.ts';
import { ACCOUNT_ID_FIELDS, BENEFICIARY_COLUMNS, type BeneficiaryColumn, type CanonicalField } from '../input/batch-columns.ts';
import type { RawRow } from '../input/records.ts';
import { misreadCodePage, utf8ReadAs1252 } from '../input/detect.ts';
import { parseAmount } from './amount.ts';
import { checkDocumentFile } from './document-files.ts';
import { nubanCheckDigitOk } from './fields.ts';
import { RISKY_WARNINGS, type Problem, type ProblemCode, type Severity } from './problems.ts';
import {
  checkBeneficiaryRules,
  methodFields,
  PAYOUT_FIELDS,
  fieldCheck,
  requiredFields,
  type PayoutField,
  type PayoutRow,
} from './row-schemas.ts';
import { Dec } from '../money.ts';

export interface RowContext {
  file: string;
  /** canonical field → the file's header (from readBatch). */
  fields: Partial<Record<CanonicalField, string>>;
  /** The batch file's folder, where document paths start. */
  baseDir: string;
  /** Replaces the document checker (tests). */
  checkDocument?: typeof checkDocumentFile;
  /** The file's encoding was guessed (GUESSED_1252): text that reads like another code page is refused. */
  encodingGuessed?: boolean;
  /** Its first line that reads so: a text beyond ASCII on any other line is suspect too (the file is in another code page). */
  misreadLine?: number;
}

export interface RowResult {
  problems: Problem[];
  /** Present when the row has no error. */
  payout?: PayoutRow;
  /** probableDuplicateKey(), whenever it could be read, errors or not (ValidateOptions.createdBefore). */
  duplicateKey?: string;
}

const MASKED_FIELDS: ReadonlySet<string> = new Set(ACCOUNT_ID_FIELDS);
/** Identifiers that must reach us as text: a numeric Excel cell here is checked for lost digits. */
const TEXT_ONLY_FIELDS = new Set(['accountNumber', 'sortCode', 'routingNumber', 'phoneNumber', 'iban', 'bankCode', 'fpsId']);

/** A date-formatted Excel cell is refused in these columns: the identifiers, the amount and the reference (read as an ISO date, saved as CSV as shown: two keys). */
const DATE_TRAP_FIELDS: readonly string[] = [...TEXT_ONLY_FIELDS, 'sourceAmount', 'reference'];

/** Excel shows at most 15 significant digits; a number is read as Excel would show it in General. */
const excelNumberText = (v: number): string => String(Number(v.toPrecision(15)));

/** The file's header of a field (the field's own name when the file has no such column). */
const headerOf = (ctx: RowContext, f: string): string => ctx.fields[f as CanonicalField] ?? f;
/** One row being read: its cells, and the problems found so far. */
type RowReader = ReturnType<typeof readerOf>;

function readerOf(row: RawRow, ctx: RowContext) {
  const problems: Problem[] = [];
  const of = <T>(byHeader: Record<string, T> | undefined, f: string): T | undefined => {
    const h = ctx.fields[f as CanonicalField];
    return h === undefined ? undefined : byHeader?.[h];
  };
  /** A field's cell as read ('' when the file has no such column). */
  const cell = (f: string) => of(row.cells, f) ?? '';
  /** Records a problem on a field (its column and value, account identifiers masked), on given columns, or on the row. */
  const add = (
    severity: Severity,
    code: ProblemCode,
    at: string | { column: string } | undefined,
    message: string,
    expected?: string,
    value?: string,
  ) => {
    const p = { severity, code, file: ctx.file, row: row.rowNumber } as Problem;
    if (typeof at === 'object') p.column = row.xml ? row.xml.path : at.column;
    else if (at !== undefined) {
      // (a pain.001 row names the element the value came from)
      p.column = row.xml ? (row.xml.elements[at as CanonicalField] ?? `${row.xml.path}/${at}`) : headerOf(ctx, at);
      const v = value ?? cell(at);
      if (v !== '') p.value = MASKED_FIELDS.has(at) ? maskAccount(v) : v;
    } else if (row.xml) p.column = row.xml.path;
    p.message = message;
    if (expected) p.expected = expected;
    if (severity === 'warning' && RISKY_WARNINGS.has(code)) p.risky = true;
    problems.push(p);
  };
  // Excel only: a field's cell as a number, or what a date-formatted cell shows
  const number = (f: string) => of(row.numbers, f);
  const date = (f: string) => of(row.dates, f);
  /** The fields an Excel trap refused: no other problem is told of them, and a refused amount is no amount. */
  const trapped = new Set<string>();
  return { row, ctx, problems, cell, number, date, add, trapped };
}

export function parseRow(row: RawRow, ctx: RowContext): RowResult {
  const r = readerOf(row, ctx);
  // a pain.001 transaction the reader could not map (an ambiguous method): that error, not the empty value it left
  for (const i of row.xml?.issues ?? []) r.add('error', 'UNMAPPABLE_TRANSACTION', i.field, i.message, i.expected);
  const mapped = r.problems.length;
  checkShape(r);
  // the day not to send before (a pain.001's, kept by its results file): one Excel rewrote is no date to drop
  const due = row.cells.ReqdExctnDt ?? '';
  if (due && !/^\d{4}-\d\d-\d\d$/.test(due))
    r.add(
      'error',
      'INVALID_DATE',
      'ReqdExctnDt',
      'not a date written YYYY-MM-DD: the row would be sent before its day',
      'the date as YYYY-MM-DD, e.g. 2025-01-31',
      due,
    );
  const top = payoutFields(r);
  checkOrdered(r, top);
  // a reference Excel cut to 15 digits (or a CSV it saved as 1.23457E+11): another invoice reads the same, one identity for two
  if (/^\d(\.\d+)?E\+\d+$/i.test(r.cell('reference')) || Math.abs(r.number('reference') ?? 0) >= 1e15)
    r.add(
      'error',
      'EXCEL_DIGITS_LOST',
      'reference',
      'the reference is a number that Excel kept to 15 significant digits: digits were lost, and another reference may read the same',
      'the column formatted as Text before the reference is typed or pasted (or a leading apostrophe)',
      r.cell('reference'),
    );
  const method = top.method as PayoutMethod | undefined;
  excelDateTraps(r);
  const overrides = excelNumberTraps(r, method);
  const amount = sourceAmount(r, top.sourceCurrency);
  const beneficiary = method ? beneficiaryOf(r, method, overrides) : undefined;
  checkCombinations(r, top, beneficiary);
  const withdrawal = top.withdrawal === 'true';
  const documents = documentsOf(r, withdrawal);

  const unmapped = new Set(row.xml?.issues.map((i) => row.xml!.elements[i.field]));
  const problems = r.problems.filter((p, i) => i < mapped || !(p.code === 'MISSING_VALUE' && unmapped.has(p.column)));
  const { sourceCurrency, destinationCurrency, destinationCountryCode } = top;
  if (!method || !amount || !beneficiary || !sourceCurrency || !destinationCurrency) return { problems };
  const duplicateKey = probableDuplicateKey({ beneficiary, sourceAmount: amount, sourceCurrency, destinationCurrency });
  if (problems.some((p) => p.severity === 'error')) return { problems, duplicateKey };
  const payout: PayoutRow = {
    rowNumber: row.rowNumber,
    reference: top.reference!,
    sourceAmount: amount,
    sourceCurrency,
    destinationCurrency,
    destinationCountryCode: destinationCountryCode!,
    method,
    beneficiary,
    narration: top.narration!,
    documents,
    withdrawal,
  };
  if (top.remitterAddress) payout.remitterAddress = top.remitterAddress;
  if (due) payout.notBefore = due;
  const { UltmtCdtr: name, UltmtCdtrCtry: country, UltmtCdtrBIC: bic } = row.cells;
  if (name || bic) payout.ultimateCreditor = { name: name ?? '', ...(country && { country }), ...(bic && { bic }) };
  if (row.cells.UltmtDbtr) payout.ultimateDebtor = row.cells.UltmtDbtr;
  if (row.cells.UltmtDbtrBIC) payout.ultimateDebtorBic = row.cells.UltmtDbtrBIC;
  // the bank the file names, though the method does not send its BIC: where the money goes all the same, so screened
  if (r.cell('swiftCode') && !beneficiary.swiftCode) payout.creditorAgentBic = r.cell('swiftCode');
  return { problems, payout, duplicateKey };
}

/**
 * What a pain.001 ordered that no payout does, from the columns its row carries: so the row of its
 * results file, read again by a retry, stays invalid until the cells themselves say otherwise.
 */
function checkOrdered(r: RowReader, top: Partial<Record<PayoutField, string>>): void {
  const { MsgNmId, ChrgBr: bearer, AmtCcy: ordered = '', CcyOfTrf, Unsupported, UltmtDbtr } = r.row.cells;
  if (MsgNmId === undefined) return;
  const [unmappable, debited] = ['UNMAPPABLE_TRANSACTION', top.sourceCurrency ?? ''] as const;
  // ISO 20022's "no end-to-end id": as a reference, every such transfer would be one payout, paid once
  if (top.reference?.toUpperCase() === 'NOTPROVIDED')
    r.add(
      'error',
      unmappable,
      'reference',
      'EndToEndId NOTPROVIDED names no transfer: the reference makes a payout idempotent, so each needs its own',
      'an EndToEndId unique to the transfer',
    );
  if (bearer && bearer !== 'DEBT' && bearer !== 'SLEV')
    r.add(
      'error',
      unmappable,
      'ChrgBr',
      'the payee is to bear (CRED) or share (SHAR) the charges, but would get the full amount: the fee is on top',
      'the service always charges the sender: DEBT or SLEV, or leave it out',
      bearer,
    );
  if (Unsupported)
    r.add(
      'error',
      unmappable,
      'Unsupported',
      'ordered as the service cannot pay: it pays by transfer to the account (no cheque, nothing held for the payee), through one intermediary at most, at its own rate when sent (none agreed or booked)',
      'PmtMtd TRF or TRA; no InstrForCdtrAgt/Cd CHQB or HOLD; no IntrmyAgt2 or IntrmyAgt3; no XchgRateInf, or an indicative one (RateTp SPOT or SALE, no CtrctId)',
      Unsupported,
    );
  if (UltmtDbtr && !r.cell('remitterAddress'))
    r.add(
      'error',
      unmappable,
      'remitterAddress',
      "made on behalf of another payer (UltmtDbtr) whose address is not given: the payout would show the business's address as the payer's",
      "the payer's postal address (UltmtDbtr/PstlAdr), or a remitterAddress",
      UltmtDbtr,
    );
  // the schema's [A-Z]{3}, with DbtrAcct/Ccy or without: "eur" is refused as such, never as another currency than the account's
  if (!/^([A-Z]{3})?$/.test(ordered))
    r.add(
      'error',
      'INVALID_CURRENCY',
      'AmtCcy',
      'a currency code is 3 capital letters in ISO 20022 (the schema allows no other)',
      'the ISO 4217 code in capitals, e.g. EUR',
      ordered,
    );
  else if (ordered && debited && ordered !== debited.toUpperCase())
    r.add(
      'error',
      unmappable,
      'sourceAmount',
      `the amount is in ${ordered} but the debtor account (DbtrAcct/Ccy) is in ${debited}: the service debits an amount in the wallet's currency`,
      CcyOfTrf ? `Amt/EqvtAmt/Amt in ${debited}` : `Amt/InstdAmt in ${debited}, or Amt/EqvtAmt (Amt in ${debited}, CcyOfTrf ${ordered})`,
    );
}

/** Invisible and bidirectional characters, refused in every cell: a right-to-left override makes "Invoice 0012" read as another text. */
const FORMAT_CHARACTERS: Record<string, string> = {
  '\u061C': 'ARABIC LETTER MARK',
  '\u200B': 'ZERO WIDTH SPACE',
  '\u200C': 'ZERO WIDTH NON-JOINER',
  '\u200D': 'ZERO WIDTH JOINER',
  '\u200E': 'LEFT-TO-RIGHT MARK',
  '\u200F': 'RIGHT-TO-LEFT MARK',
  '\u202A': 'LEFT-TO-RIGHT EMBEDDING',
  '\u202B': 'RIGHT-TO-LEFT EMBEDDING',
  '\u202C': 'POP DIRECTIONAL FORMATTING',
  '\u202D': 'LEFT-TO-RIGHT OVERRIDE',
  '\u202E': 'RIGHT-TO-LEFT OVERRIDE',
  '\u2060': 'WORD JOINER',
  '\u2061': 'FUNCTION APPLICATION',
  '\u2062': 'INVISIBLE TIMES',
  '\u2063': 'INVISIBLE SEPARATOR',
  '\u2064': 'INVISIBLE PLUS',
  '\u2066': 'LEFT-TO-RIGHT ISOLATE',
  '\u2067': 'RIGHT-TO-LEFT ISOLATE',
  '\u2068': 'FIRST STRONG ISOLATE',
  '\u2069': 'POP DIRECTIONAL ISOLATE',
  '\uFEFF': 'ZERO WIDTH NO-BREAK SPACE',
};
const FORMAT_CHARACTER = /[\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/;
/** What a formula that failed shows (Excel's errors, Google Sheets' #ERROR!, LibreOffice's Err:502), and a CSV saved from it holds. */
const EXCEL_ERROR =
  /^(#(NULL!|DIV\/0!|VALUE!|REF!|NAME\?|NUM!|N\/A|GETTING_DATA|SPILL!|CALC!|FIELD!|BLOCKED!|CONNECT!|BUSY!|UNKNOWN!|ERROR!?)|Err:\d{3})$/i;

/** The shape of the row: cells beyond the last column, characters the encoding could not read, format characters. */
function checkShape(r: RowReader): void {
  const { row } = r;
  if (row.hidden)
    r.add(
      'error',
      'HIDDEN_ROW',
      undefined,
      'the sheet hides this row (Hide, or a filter): it is not paid unseen',
      'the row shown to pay it, or deleted',
    );
  // a value in a column the sheet hides: sent, though whoever checked the sheet did not see it (a column of the user's own is not sent)
  const hiddenFields = new Set(row.hiddenColumns);
  for (const [f, h] of Object.entries(r.ctx.fields))
    if (hiddenFields.has(h))
      r.add(
        'error',
        'HIDDEN_COLUMN',
        f,
        'the sheet hides this column: the value would be paid unseen',
        'the column shown (Unhide), or its value deleted',
      );
  if (row.extraCells) {
    r.add(
      'error',
      'EXTRA_CELLS',
      undefined,
      `${row.extraCells} non-empty cell(s) beyond the last column, in a column with no header: in a CSV, a value probably holds the delimiter without quotes (e.g. an amount 1,234.56 in a comma-separated file)`,
      'a header over every column that holds a value (in a CSV, as many cells as headers: quote values that hold the delimiter)',
    );
  }
  // a payee "#N/A" would be sent, and screened, as a name (in a column of the user's own, it is not sent)
  for (const [f, h] of Object.entries(r.ctx.fields))
    if (EXCEL_ERROR.test(row.cells[h] ?? ''))
      r.add(
        'error',
        'EXCEL_ERROR',
        f,
        'the cell holds an Excel error: a formula that failed, not a value',
        'the value itself, or the formula fixed to give one',
      );
  for (const h in row.cells) {
    const format = FORMAT_CHARACTER.exec(row.cells[h]!)?.[0];
    if (format) {
      const code = `U+${format.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
      r.add(
        'error',
        'INVALID_TEXT',
        { column: h },
        `holds the invisible character ${code} ${FORMAT_CHARACTERS[format]}, which changes how the text reads`,
        'the text without invisible or direction-changing characters',
      );
    }
    const misread = encodingProblem(row.cells[h]!, row.xml !== undefined, r.ctx.encodingGuessed, r.ctx.misreadLine);
    if (misread) r.add('error', 'ENCODING', { column: h }, ...misread);
  }
}

/** Why a cell's text is not what its file means (message, expected), when it was read in another encoding. */
function encodingProblem(text: string, xml: boolean, guessed?: boolean, misreadLine?: number): [string, string] | undefined {
  if (text.includes('\uFFFD'))
    return [
      'characters that are not valid in the encoding read (shown as \uFFFD): the file is probably in another encoding',
      xml
        ? 'the file saved as UTF-8, as ISO 20022 messages are'
        : 'the file saved as UTF-8, or --encoding of what it is (macintosh, windows-1250, windows-1251, windows-1252, utf-16le)',
    ];
  const utf8 = utf8ReadAs1252(text);
  if (utf8 !== undefined)
    return [`UTF-8 text read as Windows-1252 (in UTF-8: "${utf8}"): the file mixes the two`, 'the file saved as UTF-8'];
  const misread = guessed && misreadCodePage(text);
  const page = 'reads like another code page (Mac Roman, Windows-1250, Windows-1251) read as Windows-1252, guessed for a file not in UTF-8';
  if (misread || (misreadLine !== undefined && /[^\p{ASCII}]/u.test(text)))
    return [
      misread ? `"${text}" ${page}` : `"${text}" may be misread: line ${misreadLine} of the file ${page}`,
      'save the file as CSV UTF-8, or (a batch file) name its encoding with --encoding (windows-1250, windows-1251, macintosh, windows-1252)',
    ];
}

/** The payout fields, each by its validator (PAYOUT_FIELDS), normalized. */
function payoutFields(r: RowReader): Partial<Record<PayoutField, string>> {
  const top: Partial<Record<PayoutField, string>> = {};
  for (const [f, { check, required }] of Object.entries(PAYOUT_FIELDS) as [PayoutField, (typeof PAYOUT_FIELDS)[PayoutField]][]) {
    const v = r.cell(f);
    if (v === '') {
      if (required) r.add('error', 'MISSING_VALUE', f, `${f} is required`, required);
      continue;
    }
    const c = check(v);
    if (c.ok) top[f] = c.value;
    else r.add('error', c.code, f, c.message, c.expected);
  }
  return top;
}

/** Excel traps: a date-formatted amount or identifier (German Excel makes "1.5" 1 May), refused (`trapped`). */
function excelDateTraps(r: RowReader): void {
  for (const f of DATE_TRAP_FIELDS) {
    const shown = r.date(f);
    if (shown === undefined) continue;
    r.trapped.add(f);
    const amount = f === 'sourceAmount';
    r.add(
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

/** Excel traps: identifiers that arrived as numbers, refused (`trapped`) when digits were lost; else their digits (the overrides). */
function excelNumberTraps(r: RowReader, method: PayoutMethod | undefined): Record<string, string> {
  const overrides: Record<string, string> = {};
  for (const f of TEXT_ONLY_FIELDS) {
    const n = r.number(f);
    if (n === undefined) continue;
    const check = fieldCheck(f as BeneficiaryColumn, method);
    const min = check.minDigits;
    // as shown when a format ("00000000", or grouped: "00-00-00") shows the zeros a number lost (a valid value: an FPS ID of 9
    // digits is no 8), else as held
    const shown = r.cell(f).replace(/[\s-]+/g, '');
    const zeros = /^\d+$/.test(shown) && Number(shown) === n;
    const digits = zeros && (String(n).length < (min ?? Infinity) || check(shown).ok) ? shown : String(n);
    const refuse = (code: ProblemCode, message: string, expected: string, value?: string) => {
      r.add('error', code, f, message, expected, value);
      r.trapped.add(f);
    };
    const scientific = /e/i.test(r.cell(f));
    if (scientific || Math.abs(n) >= 1e15)
      refuse(
        'EXCEL_DIGITS_LOST',
        Math.abs(n) >= 1e15
          ? `the ${f} is stored as a number of more than 15 digits: Excel keeps only 15 significant digits, so digits were lost and cannot be recovered`
          : `the ${f} is stored as a number shown in scientific notation: the sheet shows ${r.cell(f)}, not the digits it holds, and a leading zero would be gone`,
        'the column formatted as Text before the value is typed or pasted (or a leading apostrophe)',
      );
    else if (!Number.isInteger(n)) continue;
    else if (f === 'phoneNumber')
      refuse(
        'EXCEL_LEADING_ZEROS_LOST',
        `the ${f} is stored as a number, which dropped its leading + (and any leading 0)`,
        'the column formatted as Text, with the number in E.164 form such as +85291234567',
        digits,
      );
    else if (min !== undefined && digits.length < min)
      refuse(
        'EXCEL_LEADING_ZEROS_LOST',
        `the ${f} is stored as a number of ${digits.length} digits but has ${min}${method ? ` for ${method}` : ''}: Excel dropped the leading zero(s) and which ones cannot be known`,
        `the column formatted as Text and the ${min} digits typed again`,
        digits,
      );
    else {
      // (a length the method does not fix, or one a leading zero still fits: an FPS ID of 8 digits may have been 9)
      const zeroFits = min === undefined ? f === 'accountNumber' || f === 'bankCode' : check(`0${digits}`).ok;
      if (zeroFits && !digits.startsWith('0'))
        r.add(
          'warning',
          'EXCEL_LEADING_ZEROS_LOST',
          f,
          `the ${f} is stored as a number: if it began with 0, Excel dropped the zeros`,
          'the column formatted as Text',
          digits,
        );
      overrides[f] = digits;
    }
  }
  return overrides;
}

/** The amount, exact, in the source currency's minor units (a numeric Excel cell as Excel shows it). */
function sourceAmount(r: RowReader, sourceCurrency: string | undefined): Dec | undefined {
  const number = r.number('sourceAmount');
  const cell = r.cell('sourceAmount');
  const text = number !== undefined ? excelNumberText(number) : cell;
  if (r.trapped.has('sourceAmount')) return undefined; // refused as a date: a date is no amount
  if (text === '') {
    r.add('error', 'MISSING_VALUE', 'sourceAmount', 'sourceAmount is required', 'a positive amount such as 1234.56');
    return undefined;
  }
  // typed into a cell formatted as a percentage, 50 is held as 0.5
  if (number !== undefined && cell.endsWith('%')) {
    r.add(
      'error',
      'INVALID_AMOUNT',
      'sourceAmount',
      `the cell is formatted as a percentage (shows "${cell}", holds ${text})`,
      'the column formatted as a number and the amount typed again',
    );
    return undefined;
  }
  // (a number cell or an xs:decimal has no thousands separator: 1.555 is 1.555)
  // (a pain.001's, also read again from its results: no thousands separator, "1.500.000" is no amount)
  const xsDecimal = r.row.cells.MsgNmId !== undefined && number === undefined;
  const a = parseAmount(text, sourceCurrency, { fromNumber: number !== undefined || r.row.xml !== undefined, xsDecimal });
  const shown = number === undefined ? undefined : shownAmount(cell);
  // a format that scales what is shown ("#,##0," in thousands), or shows nothing (";;;"): the approver saw 1,500, or no
  // amount, where 1,500,000 would be paid
  if (a.ok && number !== undefined && (cell === '' || (shown && !shownAs(a.value, shown)))) {
    r.add(
      'error',
      'INVALID_AMOUNT',
      'sourceAmount',
      cell === ''
        ? `the cell shows nothing but holds ${text}: its number format hides the amount`
        : `the cell shows "${cell}" but holds ${text}: its number format scales the amount shown (in thousands or millions)`,
      'the column formatted to show the amount itself (e.g. #,##0.00) and the amount checked',
    );
    return undefined;
  }
  if (a.ok) return a.value;
  const note = number !== undefined && cell !== text ? ` (the cell holds ${text} and shows ${cell})` : '';
  r.add('error', a.code, 'sourceAmount', a.message + note, a.expected);
  return undefined;
}

/**
 * The one plain amount a number cell shows, as Excel's own (en-US) text writes it: a currency or a word around it, "," grouping
 * thousands ("€1,500.00", "1,500K"); undefined when it shows another shape (1.50E+03, a fraction), which is not compared.
 */
function shownAmount(shown: string): { value: Dec; decimals: number } | undefined {
  const m = /^[^\d.]*(\d[\d,]*(?:\.(\d*))?|\.(\d+))[^\d]*$/.exec(shown);
  if (!m) return undefined;
  return { value: new Dec(m[1]!.replaceAll(',', '').replace(/\.$/, '')), decimals: (m[2] ?? m[3] ?? '').length };
}

/** Whether `held` is the amount shown, to the decimals shown (rounded either way: Excel's rounding of a binary number). */
const shownAs = (held: Dec, shown: { value: Dec; decimals: number }): boolean =>
  [Dec.ROUND_DOWN, Dec.ROUND_UP].some((rounding) => held.toDecimalPlaces(shown.decimals, rounding).equals(shown.value));

/** The beneficiary, by the method's fields and rules (spec §4.2); a value in a column the method does not use is not sent. */
function beneficiaryOf(r: RowReader, method: PayoutMethod, overrides: Record<string, string>): Beneficiary | undefined {
  const fields = methodFields(method);
  const required = new Set<string>(requiredFields(method));
  // the method's non-empty fields (an empty cell is a missing value)
  const input: Record<string, string> = {};
  for (const f of BENEFICIARY_COLUMNS) {
    const cell = r.cell(f);
    if (fields.includes(f)) {
      const v = overrides[f] ?? cell;
      if (v !== '') input[f] = v;
    } else if (cell !== '' && !(r.row.xml && f === 'swiftCode')) {
      r.add('warning', 'FIELD_NOT_USED', f, `${method} does not use ${f}: the value is not sent`, `${f} left empty for ${method}`);
    }
  }
  // every problem is told at once (the rules across fields too); none on a field Excel's traps refused already
  let errors = 0;
  const issue = (f: string | undefined, code: ProblemCode, message: string, expected?: string) => {
    errors++;
    if (f === undefined) {
      const group = new Set((METHOD_RULES[method].oneOf ?? []).flat());
      r.add('error', code, { column: [...group].map((g) => headerOf(r.ctx, g)).join(' | ') }, message, expected);
    } else if (!r.trapped.has(f)) r.add('error', code, f, message, expected);
  };
  const valid: Record<string, string> = {};
  for (const f of fields) {
    const v = input[f];
    if (v === undefined) {
      const noColumn = r.ctx.fields[f] === undefined ? `, and the file has no ${f} column` : '';
      // (what would be valid: the field's format, as an empty value is told it, else the field itself)
      const empty = fieldCheck(f, method)('');
      if (required.has(f))
        issue(f, 'MISSING_VALUE', `${method} needs ${f}${noColumn}`, empty.ok ? `the ${f} (${method} requires it)` : empty.expected);
      continue;
    }
    const c = fieldCheck(f, method)(v);
    if (c.ok) valid[f] = c.value;
    else issue(f, c.code, c.message, c.expected);
  }
  checkBeneficiaryRules(method, new Set(Object.keys(input)), valid, issue);
  if (errors) return undefined;
  // only the non-empty values are sent
  const beneficiary = Object.fromEntries(Object.entries(valid).filter(([, v]) => v !== '')) as Beneficiary;
  if (
    method === 'NIP' &&
    beneficiary.bankCode?.length === 3 &&
    beneficiary.accountNumber &&
    !nubanCheckDigitOk(beneficiary.bankCode, beneficiary.accountNumber)
  ) {
    r.add(
      'warning',
      'NUBAN_CHECK_DIGIT',
      'accountNumber',
      `the NUBAN check digit does not match bank code ${beneficiary.bankCode}: the account number or the bank code may be mistyped`,
      'the 10-digit NUBAN of an account at that bank',
    );
  }
  return beneficiary;
}

/** Fields that disagree with one another: warnings only (the service decides). */
function checkCombinations(r: RowReader, top: Partial<Record<PayoutField, string>>, beneficiary: Beneficiary | undefined): void {
  const { sourceCurrency, destinationCurrency: dest, destinationCountryCode: country } = top;
  const method = top.method as PayoutMethod | undefined;
  if (method && sourceCurrency && dest && country) {
    const list = methodsForCorridor(sourceCurrency, dest, country);
    if (!list.includes(method)) {
      r.add(
        'warning',
        'CORRIDOR_NOT_IN_OVERVIEW',
        'method',
        `${sourceCurrency} to ${dest} in ${country} by ${method} is not in the spec's corridor overview (${list.length ? `it lists ${list.join(', ')}` : 'it lists no method'} for this corridor); the methods route decides when the batch is sent`,
        list.length ? list.join(' or ') : undefined,
      );
    }
  }
  if (beneficiary && dest && beneficiary.accountCurrency !== dest) {
    r.add(
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
      r.add(
        'warning',
        'IBAN_MISMATCH',
        'iban',
        `the IBAN is of ${ibanCountry} but destinationCountryCode is ${country}`,
        `destinationCountryCode ${ibanCountry}`,
      );
    }
  }
}

/** The supporting documents (spec §4.5): at most MAX_DOCUMENTS_PER_PAYOUT, each checked; their absolute paths. */
function documentsOf(r: RowReader, withdrawal: boolean): string[] {
  const documents: string[] = [];
  // paths separated by ";" (the cell is trimmed), relative to the batch file's folder
  const cell = r.cell('documents');
  const list = cell.split(/\s*;\s*/).filter(Boolean);
  if (list.length > MAX_DOCUMENTS_PER_PAYOUT) {
    r.add(
      'error',
      'TOO_MANY_DOCUMENTS',
      'documents',
      `${list.length} documents; the service takes at most ${MAX_DOCUMENTS_PER_PAYOUT} per payout`,
      `at most ${MAX_DOCUMENTS_PER_PAYOUT} paths separated by ";" (or merge them into one PDF)`,
    );
  }
  const check = r.ctx.checkDocument ?? checkDocumentFile;
  for (const d of list) {
    const abs = isAbsolute(d) ? d : resolve(r.ctx.baseDir, d);
    const c = check(abs, d);
    if (c.ok) documents.push(abs);
    else r.add('error', c.code, 'documents', c.message, c.expected, d);
  }
  if (!withdrawal && list.length === 0) {
    r.add(
      'warning',
      'NO_DOCUMENT',
      'documents',
      'no supporting document: the service will hold this payout until one is attached (a withdrawal to an own or UBO account needs none)',
      'a PDF, JPEG or PNG path, or withdrawal true',
    );
  }
  return documents;
}

/** The beneficiary account of a payout, whatever the method: what two rows must share to be duplicates. */
export function accountKey(p: Pick<PayoutRow, 'beneficiary'>): string {
  const b = p.beneficiary;
  // (digits without their leading zeros: the same account after Excel typed it as a number, "0005407324931" as 5407324931)
  const z = (v: string | undefined) => v?.replace(/^0+(?=\d+$)/, '');
  const id = b.iban ?? [b.accountNumber, b.sortCode, b.routingNumber, b.bankCode].map(z).concat(b.swiftCode).filter(Boolean).join('/');
  return id || b.alipayId || b.openId || b.wechatUserId || z(b.fpsId) || b.phoneNumber || b.email || b.accountName;
}

/** The key of the probable-duplicate rule: same beneficiary account, amount and currencies. */
export function probableDuplicateKey(
  p: Pick<PayoutRow, 'beneficiary' | 'sourceAmount' | 'sourceCurrency' | 'destinationCurrency'>,
): string {
  return [accountKey(p), p.sourceAmount.toFixed(), p.sourceCurrency, p.destinationCurrency].join('|');
}

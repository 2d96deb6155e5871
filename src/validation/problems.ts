// A problem found in a batch file: printed by validate, listed in the report, recorded for a row not sent.

import { visible } from '../text.ts';

export type Severity = 'error' | 'warning';

/** Every problem code, with what it means. Errors make a row invalid (never sent); warnings do not. */
export const PROBLEM_CODES = {
  // file-level notes (warnings)
  BLANK_ROWS: 'blank rows skipped',
  TOTALS_ROW: 'a trailing totals row skipped',
  COLUMN_IGNORED: 'a column kept as an extra column because another one gives the same field',
  COLUMN_UNKNOWN: 'a column that names no payout field: not sent, kept in the results file',
  // shape of the row
  EXTRA_CELLS: 'more cells than headers: a value in a column with no header (in a CSV, probably a delimiter not quoted)',
  HIDDEN_ROW: 'a row the sheet hides (Hide, or a filter): whoever checked the sheet did not see it',
  HIDDEN_COLUMN: 'a payout value in a column the sheet hides: whoever checked the sheet did not see it',
  ENCODING: 'characters that could not be decoded: the file is not in the encoding read',
  MISSING_VALUE: 'a required value is empty (or its column is absent)',
  MISSING_ONE_OF: 'none of the alternative groups of fields is complete (WECHAT, HK_FPS)',
  FIELD_NOT_USED: "a value in a column the row's method does not use: it is not sent",
  TOO_LONG: 'a value longer than allowed',
  // codes and amounts
  INVALID_METHOD: 'not a payout method of the service',
  INVALID_CURRENCY: 'not an ISO 4217 currency code',
  INVALID_COUNTRY: 'not an ISO 3166-1 alpha-3 country code',
  INVALID_AMOUNT: 'not a positive decimal amount',
  AMBIGUOUS_AMOUNT: 'an amount that reads two ways ("1,234")',
  AMOUNT_PRECISION: 'more decimal places than the currency has',
  CORRIDOR_NOT_IN_OVERVIEW: "method / currencies / country outside the spec's corridor overview: the methods route decides",
  ACCOUNT_CURRENCY_MISMATCH: 'the beneficiary account currency differs from the destination currency',
  // beneficiary formats
  INVALID_IBAN: 'not a valid IBAN (country, length, checksum)',
  IBAN_MISMATCH: 'the IBAN disagrees with the other fields (country, sort code, account number)',
  INVALID_BIC: 'not a valid SWIFT/BIC code',
  INVALID_ROUTING_NUMBER: 'not a valid ABA routing number (9 digits, checksum)',
  INVALID_SORT_CODE: 'not a UK sort code (6 digits)',
  INVALID_ACCOUNT_NUMBER: "not an account number of the method's format",
  INVALID_BANK_CODE: "not a bank code of the method's format",
  NUBAN_CHECK_DIGIT: 'the NUBAN check digit does not match the bank code',
  INVALID_ACCOUNT_TYPE: 'accountType is not checking or savings',
  INVALID_EMAIL: 'not an email address',
  INVALID_PHONE: 'not an E.164 phone number (+ and 8 to 15 digits)',
  INVALID_ID: 'not a valid identifier for the field (FPS ID, Alipay ID, WeChat ID)',
  INVALID_TEXT: 'text with control characters',
  INVALID_BOOLEAN: 'withdrawal is not true or false',
  INVALID_DATE: 'ReqdExctnDt is not a date written YYYY-MM-DD',
  // Excel traps
  EXCEL_DIGITS_LOST: 'an identifier stored as a number that lost digits (scientific notation, over 15 digits)',
  EXCEL_LEADING_ZEROS_LOST: 'an identifier stored as a number that lost its leading zeros',
  EXCEL_DATE: 'an amount or identifier cell formatted as a date: its value is a date, not what was typed',
  EXCEL_ERROR: 'a cell of a payout field holding an Excel error (#N/A, #REF!): a formula that failed, no value',
  // batch rules
  DUPLICATE_REFERENCE: 'the reference is already used by an earlier row',
  PROBABLE_DUPLICATE: 'same beneficiary account, amount and currency as an earlier row',
  DOCUMENT_NOT_FOUND: 'a supporting document does not exist',
  DOCUMENT_TYPE: 'a supporting document is not a PDF, JPEG or PNG by its bytes',
  DOCUMENT_TOO_LARGE: 'a supporting document is over 10 MB',
  TOO_MANY_DOCUMENTS: 'more than 5 supporting documents',
  UNMAPPABLE_TRANSACTION:
    "a pain.001 transaction that maps to no payout: an ambiguous or unsupported method, an amount not in the debtor account's currency, charges the payee is to bear",
  NO_DOCUMENT: 'no supporting document on a payout that is not a withdrawal: the service will hold it',
} as const;
export type ProblemCode = keyof typeof PROBLEM_CODES;

/** Warnings that may pay the wrong person (an account identifier probably wrong): `risky`; a watch refuses such a file unless "allowPartial". */
export const RISKY_WARNINGS: ReadonlySet<ProblemCode> = new Set(['NUBAN_CHECK_DIGIT', 'EXCEL_LEADING_ZEROS_LOST', 'IBAN_MISMATCH']);

export interface Problem {
  severity: Severity;
  code: ProblemCode;
  file: string;
  /** Spreadsheet row number (header is row 1); undefined for a problem of the whole file. */
  row?: number;
  /** The column as headed in the file (or the canonical name when the column is absent); in a pain.001, the element's XPath. */
  column?: string;
  /** The cell's value; account identifiers masked (last 4 characters kept). */
  value?: string;
  message: string;
  expected?: string;
  /** A warning that may pay the wrong person (RISKY_WARNINGS). */
  risky?: true;
}

/** One line for a terminal: `file:row  column  error CODE  message (value "x"); expected: …`, control and bidi characters escaped (`visible`). */
export function formatProblem(p: Problem): string {
  const where = p.column?.startsWith('/')
    ? `${p.file} ${p.column}`
    : `${p.file}${p.row !== undefined ? ` row ${p.row}` : ''}${p.column ? `, column "${p.column}"` : ''}`;
  // (a value of megabytes, a pain.001's element say, shown by its start: the line stays one a terminal shows)
  const shown = p.value && p.value.length > 200 ? `${p.value.slice(0, 100)}…` : p.value;
  const value = shown ? ` (value "${shown}")` : '';
  const expected = p.expected ? `; expected ${p.expected}` : '';
  return visible(`${where}: ${p.severity} ${p.code}: ${p.message}${value}${expected}`);
}

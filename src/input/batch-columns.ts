// The columns of a batch file, their aliases and how a file's headers match them (README.md "Headers").
import type { Beneficiary } from '../spec/schemas.ts';
import { InputError, type InputErrorCode } from './input-errors.ts';

/** The payout columns, in template order. */
export const PAYOUT_COLUMNS = [
  'reference',
  'sourceAmount',
  'sourceCurrency',
  'destinationCurrency',
  'destinationCountryCode',
  'method',
] as const;
/** Beneficiary columns (spec §2 Beneficiary: the fields of its schema), in template order. */
export const BENEFICIARY_COLUMNS = (
  'accountName accountCurrency accountNumber iban swiftCode bankName beneficiaryCountry intermediarySwift address city ' +
  'postCode routingNumber accountType bankCode sortCode fpsId phoneNumber email alipayId openId wechatUserId countryCode'
).split(' ') as BeneficiaryColumn[];
export const TRAILING_COLUMNS = ['narration', 'remitterAddress', 'documents', 'withdrawal'] as const;

export const CANONICAL_FIELDS = [...PAYOUT_COLUMNS, ...BENEFICIARY_COLUMNS, ...TRAILING_COLUMNS] as const;
export type CanonicalField = (typeof CANONICAL_FIELDS)[number];
export type BeneficiaryColumn = keyof typeof Beneficiary.shape;

/** Account identifiers, in the order a row's account is named by: masked (last 4 kept) wherever shown. */
export const ACCOUNT_ID_FIELDS = ['iban', 'accountNumber', 'fpsId', 'phoneNumber', 'email', 'alipayId', 'openId', 'wechatUserId'] as const;

/** Columns every file must have (narration: the initiate body requires it); a method's other columns are row errors when needed. */
const REQUIRED_COLUMNS: readonly CanonicalField[] = [...PAYOUT_COLUMNS, 'accountName', 'accountCurrency', 'narration'];

export const normalizeHeader = (h: string): string =>
  h
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');

/** Aliases of common export names as files write them (normalized before use), separated by ", ". */
export const COLUMN_ALIASES: Partial<Record<CanonicalField, string>> = {
  reference:
    'Ref, Payment Reference, Payout Reference, Transaction Reference, Your Reference, Customer Reference, Reference Number, Ref No',
  sourceAmount: 'Amount, Send Amount, Payment Amount, Amount To Send, Net Pay, Net Amount, Debit Amount',
  sourceCurrency: 'Currency, Send Currency, From Currency, Debit Currency, Source Ccy, Ccy',
  destinationCurrency: 'Receive Currency, To Currency, Payout Currency, Credit Currency, Destination Ccy',
  destinationCountryCode: 'Destination Country, Country, To Country, Receiving Country',
  method: 'Payment Method, Payout Method, Payment Type, Transfer Method, Payment Rail, Rail',
  accountName:
    'Beneficiary Name, Beneficiary, Payee, Payee Name, Name, Account Holder, Account Holder Name, Recipient Name, Employee Name, Full Name',
  accountCurrency: 'Beneficiary Account Currency, Account Ccy',
  accountNumber:
    'Account No, Account No., Acct No, Account Num, Account, Bank Account, Bank Account Number, Beneficiary Account, Beneficiary Account Number, NUBAN',
  iban: 'IBAN Number, IBAN Code, Beneficiary IBAN, International Bank Account Number',
  swiftCode: 'SWIFT, BIC, SWIFT/BIC, BIC/SWIFT, SWIFT BIC, SWIFT Code, BIC Code, SWIFT/BIC Code, Bank BIC, Bank SWIFT',
  bankName: 'Bank, Beneficiary Bank, Name of Bank',
  beneficiaryCountry: 'Recipient Country, Beneficiary Country Code',
  intermediarySwift: 'Intermediary BIC, Intermediary SWIFT Code, Intermediary Bank BIC, Correspondent BIC',
  address: 'Beneficiary Address, Street, Street Address, Address Line 1, Address 1',
  city: 'Town, Beneficiary City',
  postCode: 'Postal Code, Post Code, Postcode, ZIP, ZIP Code',
  routingNumber: 'Routing, ABA, ABA Number, ABA Routing Number, Routing Transit Number, RTN',
  accountType: 'Checking/Savings, Type of Account',
  bankCode: 'NIP Code, NIBSS Code, CBN Code, NIP Bank Code',
  sortCode: 'Sort, Bank Sort Code, Sort Code Number',
  fpsId: 'FPS, FPS ID, FPS Identifier, FPS Proxy ID',
  phoneNumber: 'Phone, Mobile, Mobile Number, Mobile No, Telephone, Tel, Phone No, MSISDN',
  email: 'E-mail, Email Address, E-mail Address, Beneficiary Email',
  alipayId: 'Alipay, Alipay ID, Alipay Account',
  openId: 'WeChat OpenID, WeChat Open ID',
  wechatUserId: 'WeChat ID, WeChat User ID, WeChat, Weixin ID',
  narration:
    'Description, Payment Description, Memo, Narrative, Payment Details, Remittance Information, Remittance Info, Purpose, Payment Purpose',
  remitterAddress: 'Payer Address, Sender Address',
  documents: 'Document, Supporting Document, Supporting Documents, Invoice, Invoices, Attachment, Attachments',
  withdrawal: 'Is Withdrawal, Own Account, Withdraw',
};

/** Each header as compared → its field, by the field's own name (which no alias overrides) or by an alias. */
const HEADERS = new Map<string, { field: CanonicalField; by: 'name' | 'alias' }>(
  CANONICAL_FIELDS.map((field) => [normalizeHeader(field), { field, by: 'name' }]),
);
for (const field of CANONICAL_FIELDS)
  for (const n of COLUMN_ALIASES[field]?.split(', ').map(normalizeHeader) ?? [])
    if (!HEADERS.has(n)) HEADERS.set(n, { field, by: 'alias' });

export const matchHeader = (header: string) => HEADERS.get(normalizeHeader(header));

/** A file's headers in order, made unique ("Notes", "Notes (2)") and never empty; the results reader names them alike. */
export function uniqueColumns(rawHeaders: readonly string[]): string[] {
  const taken = new Set<string>();
  return rawHeaders.map((raw, i) => {
    const h = raw.trim() || `(column ${i + 1})`;
    let name = h;
    for (let n = 2; taken.has(name); n++) name = `${h} (${n})`; // a header "Notes (2)" may be there already
    taken.add(name);
    return name;
  });
}

export type ColumnMapping = ReturnType<typeof mapColumns>;

/**
 * Matches a header row, as written (a second "reference" is no unknown "reference (2)"). Two headers
 * of one field are DUPLICATE_COLUMNS unless one is its exact name: the alias is then kept, with a note.
 * `need` (a results file's batch columns, src/results): only these fields must be named, once; another
 * field two headers name is left out, and headers are named without their place (result columns sit among them).
 */
export function mapColumns(rawHeaders: string[], file: string, headerRow = 1, need?: readonly CanonicalField[]) {
  const columns = uniqueColumns(rawHeaders);
  const refuse = (code: InputErrorCode, message: string) => new InputError(code, file, `${file}: ${message}`, headerRow);

  // A cell of a row is keyed by its header: "__proto__" cannot be a key of a plain object, and a
  // column silently left out is a row silently changed.
  const unusable = rawHeaders.findIndex((h) => h.trim() === '__proto__');
  if (unusable >= 0 && !need)
    throw refuse(
      'UNUSABLE_HEADER',
      `column ${unusable + 1} of header row ${headerRow} is headed "__proto__", which cannot name a column. Rename it.`,
    );

  // A results file (src/results) is a valid input again: no result column names a payout field,
  // so its result columns are kept as extra cells.
  const byField = new Map<CanonicalField, { header: string; raw: string; index: number; by: 'name' | 'alias' }[]>();
  rawHeaders.forEach((raw, index) => {
    const m = matchHeader(raw);
    if (!m) return;
    const list = byField.get(m.field) ?? [];
    list.push({ header: columns[index]!, raw: raw.trim(), index, by: m.by });
    byField.set(m.field, list);
  });
  if (byField.size === 0 && !need)
    throw refuse(
      'NO_HEADER',
      `row ${headerRow} is not a header row: none of its cells names a payout column (expected headers such as ${REQUIRED_COLUMNS.join(', ')}).`,
    );

  const mapping: Record<string, CanonicalField> = {};
  const fields: Partial<Record<CanonicalField, string>> = {};
  const notes: string[] = []; // about the header: a header ignored because another one names the same field
  const conflicts: string[] = [];
  for (const [field, list] of byField) {
    const exact = list.filter((c) => c.by === 'name');
    const named = exact.length ? exact : list; // the exact names when there are any (the aliases beside them are not the problem)
    if (named.length > 1) {
      if (need && !need.includes(field)) continue;
      const shown = named.slice(0, 5).map((c) => `"${c.raw}"${need ? '' : ` (column ${c.index + 1})`}`);
      if (named.length > 5) shown.push(`${named.length - 5} more`);
      conflicts.push(`${shown.join(named.length > 5 ? ', ' : ' and ')} ${named.length === 2 ? 'both' : 'all'} name ${field}`);
      continue;
    }
    const chosen = named[0]!.header;
    mapping[chosen] = field;
    fields[field] = chosen;
    for (const other of list) {
      if (other.header !== chosen) notes.push(`column "${other.header}" is kept as an extra column: "${chosen}" already gives ${field}`);
    }
  }
  if (conflicts.length) throw refuse('DUPLICATE_COLUMNS', `ambiguous columns: ${conflicts.join('; ')}. Rename or remove all but one.`);
  const missing = (need ?? REQUIRED_COLUMNS).filter((f) => !fields[f]);
  if (missing.length)
    throw refuse(
      'MISSING_COLUMNS',
      `missing required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}${need ? '' : ` (header row ${headerRow})`}. ` +
        `Headers match ignoring case, spaces, "_" and "-"; see "payout-batch template" for a file with every column.`,
    );
  return { columns, mapping, fields, notes };
}

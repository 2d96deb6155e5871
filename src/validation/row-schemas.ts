// Each method's beneficiary fields and rules, from the spec's method table (src/spec/methods.ts) and
// the field validators (fields.ts): the row is checked by them, the templates list their fields.
import * as z from 'zod';
import { isSEPACountry } from 'ibantools';
import { PAYOUT_METHODS, PayoutMethod, canonicalMethod } from '../spec/codes.ts';
import { ALWAYS_REQUIRED, METHOD_RULES } from '../spec/methods.ts';
import { InitiateRequest } from '../spec/schemas.ts';
import { Dec } from '../money.ts';
import type { BeneficiaryColumn, CanonicalField } from '../input/batch-columns.ts';
import * as F from './fields.ts';
import type { ProblemCode } from './problems.ts';

/** Default validator of each beneficiary field. */
export const FIELD_CHECKS: Record<BeneficiaryColumn, F.FieldCheck> = {
  accountName: F.text(140, 'the account name'),
  accountCurrency: F.currencyCode,
  accountNumber: F.genericAccountNumber,
  iban: F.iban,
  swiftCode: F.bic,
  bankName: F.text(140, 'the bank name'),
  beneficiaryCountry: F.countryCode,
  intermediarySwift: F.bic,
  address: F.text(140, 'the address'),
  city: F.text(70, 'the city'),
  postCode: F.text(16, 'the post code'),
  routingNumber: F.routingNumber,
  accountType: F.accountType,
  bankCode: F.anyBankCode,
  sortCode: F.sortCode,
  fpsId: F.fpsId,
  phoneNumber: F.phone,
  email: F.email,
  alipayId: F.alipayId,
  openId: F.openId,
  wechatUserId: F.wechatUserId,
  countryCode: F.countryCode,
};

/** Where a method's national format is narrower than the default. */
export const METHOD_FIELD_CHECKS: Partial<Record<PayoutMethod, Partial<Record<BeneficiaryColumn, F.FieldCheck>>>> = {
  FASTER_PAYMENTS: { accountNumber: F.ukAccountNumber },
  BACS: { accountNumber: F.ukAccountNumber },
  NIP: { accountNumber: F.nuban, bankCode: F.nipBankCode },
  ACH: { accountNumber: F.usAccountNumber },
  WIRE: { accountNumber: F.usAccountNumber },
  HK_FPS: { accountNumber: F.hkAccountNumber, bankCode: F.hkBankCode },
};

export const fieldCheck = (field: BeneficiaryColumn, method: PayoutMethod | undefined): F.FieldCheck =>
  (method && METHOD_FIELD_CHECKS[method]?.[field]) || FIELD_CHECKS[field];

/** The beneficiary fields a method takes (spec §4.2): the rest are not sent. */
export function methodFields(method: PayoutMethod): BeneficiaryColumn[] {
  const rule = METHOD_RULES[method];
  const fields: BeneficiaryColumn[] = [...ALWAYS_REQUIRED, ...rule.required, ...(rule.oneOf ?? []).flat(), ...rule.optional, 'countryCode'];
  return [...new Set(fields)];
}

/**
 * The method's rules across fields: one-of groups (of the fields `given`, valid or not), the IBAN
 * against the method and the UK account (of the `valid` values); `issue`: on a field, or (undefined) on the groups.
 */
export function checkBeneficiaryRules(
  method: PayoutMethod,
  given: Set<string>,
  valid: Record<string, string>,
  issue: (field: BeneficiaryColumn | undefined, code: ProblemCode, message: string, expected: string) => void,
): void {
  const mismatch = (field: BeneficiaryColumn, message: string, expected: string) => issue(field, 'IBAN_MISMATCH', message, expected);
  const rule = METHOD_RULES[method];
  if (rule.oneOf && !rule.oneOf.some((group) => group.every((f) => given.has(f)))) {
    const expected = rule.oneOf.map((g) => g.join(' + ')).join(' | ');
    issue(undefined, 'MISSING_ONE_OF', `${method} needs one of: ${rule.oneOf.map((g) => g.join(' and ')).join('; or ')}`, expected);
  }
  const { iban } = valid;
  if (!iban) return;
  const country = iban.slice(0, 2);
  if (method === 'SEPA' && !isSEPACountry(country))
    mismatch('iban', `SEPA reaches accounts in the SEPA area; ${country} is not in it`, 'an IBAN of a SEPA country (or method SWIFT)');
  if (method !== 'FASTER_PAYMENTS' && method !== 'BACS') return;
  if (country !== 'GB') return mismatch('iban', `${method} pays UK accounts: the IBAN starts with GB, not ${country}`, 'a GB IBAN');
  const sortCode = iban.slice(8, 14);
  if (valid.sortCode !== undefined && valid.sortCode !== sortCode)
    mismatch('sortCode', `the sort code differs from the one inside the IBAN (${sortCode})`, `${sortCode}, as in the IBAN`);
  if (valid.accountNumber !== undefined && valid.accountNumber !== iban.slice(14, 22))
    mismatch('accountNumber', 'the account number differs from the one inside the IBAN', 'the 8 digits at the end of the IBAN');
}

export function requiredFields(method: PayoutMethod): BeneficiaryColumn[] {
  return [...ALWAYS_REQUIRED, ...METHOD_RULES[method].required];
}

const methodCheck: F.FieldCheck = (raw) => {
  const m = canonicalMethod(raw);
  if (m) return F.ok(m);
  const expected = `one of ${PAYOUT_METHODS.join(', ')} (any case; HONG_KONG_FPS for HK_FPS)`;
  return F.bad('INVALID_METHOD', `"${raw}" is not a payout method of the service`, expected);
};

export type PayoutField = Exclude<CanonicalField, BeneficiaryColumn | 'sourceAmount' | 'documents'>;

/** The payout fields besides the amount and the beneficiary: their validators, and what a required one holds. */
export const PAYOUT_FIELDS: Record<PayoutField, { check: F.FieldCheck; required?: string }> = {
  reference: { check: F.text(100, 'the reference'), required: 'a reference unique in the file, e.g. PAY-2025-001' },
  sourceCurrency: { check: F.currencyCode, required: 'a 3-letter ISO 4217 code such as USD' },
  destinationCurrency: { check: F.currencyCode, required: 'a 3-letter ISO 4217 code such as USD' },
  destinationCountryCode: { check: F.countryCode, required: 'a 3-letter ISO 3166-1 alpha-3 code such as NGA' },
  method: { check: methodCheck, required: 'a payout method such as SEPA, NIP, ACH' },
  narration: { check: F.text(140, 'the narration'), required: 'a payment description of 1 to 140 characters' },
  remitterAddress: { check: F.text(200, 'the remitter address') },
  withdrawal: { check: F.booleanText },
};

/**
 * A valid row, ready to become an initiate body (plus its documents to upload): the body's fields, its beneficiary
 * only the method's fields, only the non-empty ones, normalized (IBAN without spaces, ...).
 */
export const PayoutRowSchema = InitiateRequest.omit({ sourceAmount: true, supportingDocument: true }).extend({
  rowNumber: z.number().int().positive(),
  reference: z.string().min(1).max(100),
  sourceAmount: z.instanceof(Dec).refine((d) => d.greaterThan(0)),
  method: PayoutMethod,
  /** Absolute paths of the supporting documents, checked to exist and be PDF, JPEG or PNG. */
  documents: z.array(z.string()).max(5),
  withdrawal: z.boolean(),
  /** Not sent before this day (YYYY-MM-DD, UTC): a pain.001's ReqdExctnDt, a column of that name in any batch. */
  notBefore: z.string().optional(),
  /** Whom the money is for, behind the beneficiary: a pain.001's UltmtCdtr, a column UltmtCdtr (and UltmtCdtrCtry, UltmtCdtrBIC) in any batch. */
  ultimateCreditor: z.object({ name: z.string(), country: z.string().optional(), bic: z.string().optional() }).optional(),
  /** The payer it is sent on behalf of: a pain.001's UltmtDbtr/Nm (none when it names the debtor), a column UltmtDbtr in any batch; screened. */
  ultimateDebtor: z.string().optional(),
  /** Its BIC (UltmtDbtr/Id/OrgId/AnyBIC, BICOrBEI; a column UltmtDbtrBIC): screened as the ultimate creditor's is. */
  ultimateDebtorBic: z.string().optional(),
  /** The creditor agent's BIC (swiftCode) the file gives and the method does not send: screened, never sent. */
  creditorAgentBic: z.string().optional(),
});
export type PayoutRow = z.infer<typeof PayoutRowSchema>;

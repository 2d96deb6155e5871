// One beneficiary schema per method, from the spec's method table (src/spec/methods.ts) and the
// field validators (fields.ts): the row parses with them, the templates list their fields.
import { z } from 'zod';
import { isSEPACountry } from 'ibantools';
import { PAYOUT_METHODS, PayoutMethod, canonicalMethod } from '../spec/codes.ts';
import { ALWAYS_REQUIRED, METHOD_RULES } from '../spec/methods.ts';
import { Beneficiary } from '../spec/schemas.ts';
import { Dec } from '../money.ts';
import type { BeneficiaryColumn, CanonicalField } from '../input/batch-columns.ts';
import * as F from './fields.ts';
import type { ProblemCode } from './problems.ts';

/** What a custom zod issue carries, so it becomes a Problem. */
export interface IssueParams {
  problem: ProblemCode;
  expected?: string;
}

/** A zod schema from a field validator: text in, normalized text out, or an issue. */
const fieldSchema = (check: F.FieldCheck) =>
  z.string().transform((v, ctx) => {
    const r = check(v);
    if (r.ok) return r.value;
    ctx.addIssue({ code: 'custom', message: r.message, params: { problem: r.code, expected: r.expected } satisfies IssueParams });
    return z.NEVER;
  });

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

/** A field's validator for a method: the method's national format, else the default. */
export const fieldCheck = (field: BeneficiaryColumn, method: PayoutMethod | undefined): F.FieldCheck =>
  (method && METHOD_FIELD_CHECKS[method]?.[field]) || FIELD_CHECKS[field];

/** The beneficiary fields a method takes (spec §4.2): the rest are not sent. */
export function methodFields(method: PayoutMethod): BeneficiaryColumn[] {
  const rule = METHOD_RULES[method];
  const fields: BeneficiaryColumn[] = [...ALWAYS_REQUIRED, ...rule.required, ...(rule.oneOf ?? []).flat(), ...rule.optional, 'countryCode'];
  return [...new Set(fields)];
}

/** The method's rules across fields, on the parsed beneficiary: one-of groups, the IBAN against the method and the UK account. */
function checkBeneficiaryRules(method: PayoutMethod, b: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const issue = (path: string[], message: string, expected: string, problem: ProblemCode = 'IBAN_MISMATCH') =>
    ctx.addIssue({ code: 'custom', path, message, params: { problem, expected } satisfies IssueParams });
  const rule = METHOD_RULES[method];
  if (rule.oneOf && !rule.oneOf.some((group) => group.every((f) => b[f] !== undefined))) {
    const expected = rule.oneOf.map((g) => g.join(' + ')).join(' | ');
    issue([], `${method} needs one of: ${rule.oneOf.map((g) => g.join(' and ')).join('; or ')}`, expected, 'MISSING_ONE_OF');
  }
  const iban = typeof b.iban === 'string' ? b.iban : undefined;
  if (!iban) return;
  const country = iban.slice(0, 2);
  if (method === 'SEPA' && !isSEPACountry(country))
    issue(['iban'], `SEPA reaches accounts in the SEPA area; ${country} is not in it`, 'an IBAN of a SEPA country (or method SWIFT)');
  if (method !== 'FASTER_PAYMENTS' && method !== 'BACS') return;
  if (country !== 'GB') return issue(['iban'], `${method} pays UK accounts: the IBAN starts with GB, not ${country}`, 'a GB IBAN');
  const sortCode = iban.slice(8, 14);
  if (typeof b.sortCode === 'string' && b.sortCode !== sortCode)
    issue(['sortCode'], `the sort code differs from the one inside the IBAN (${sortCode})`, `${sortCode}, as in the IBAN`);
  if (typeof b.accountNumber === 'string' && b.accountNumber !== iban.slice(14, 22))
    issue(['accountNumber'], 'the account number differs from the one inside the IBAN', 'the 8 digits at the end of the IBAN');
}

export function requiredFields(method: PayoutMethod): BeneficiaryColumn[] {
  return [...ALWAYS_REQUIRED, ...METHOD_RULES[method].required];
}

function beneficiarySchema(method: PayoutMethod) {
  const required = new Set<string>(requiredFields(method));
  const shape: Record<string, z.ZodType> = {};
  for (const f of methodFields(method)) {
    const s = fieldSchema(fieldCheck(f, method));
    shape[f] = required.has(f) ? s : s.optional();
  }
  // `when`: the cross-field rules run even when a field has an issue, so a row's problems are all told at once
  return z.object(shape).superRefine((b: Record<string, unknown>, ctx) => checkBeneficiaryRules(method, b, ctx), { when: () => true });
}

/** One beneficiary schema per method. */
export const BENEFICIARY_SCHEMAS = Object.fromEntries(PAYOUT_METHODS.map((m) => [m, beneficiarySchema(m)])) as Record<
  PayoutMethod,
  ReturnType<typeof beneficiarySchema>
>;

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

/** A valid row, ready to become an initiate body (plus its documents to upload). */
export const PayoutRowSchema = z.object({
  rowNumber: z.number().int().positive(),
  reference: z.string().min(1).max(100),
  sourceAmount: z.instanceof(Dec).refine((d) => d.greaterThan(0)),
  sourceCurrency: z.string().length(3),
  destinationCurrency: z.string().length(3),
  destinationCountryCode: z.string().length(3),
  method: PayoutMethod,
  /** Only the method's fields, only the non-empty ones, normalized (IBAN without spaces, ...). */
  beneficiary: Beneficiary,
  narration: z.string().min(1).max(140),
  remitterAddress: z.string().optional(),
  /** Absolute paths of the supporting documents, checked to exist and be PDF, JPEG or PNG. */
  documents: z.array(z.string()).max(5),
  withdrawal: z.boolean(),
  /** Not sent before this day (YYYY-MM-DD, UTC): a pain.001's ReqdExctnDt, a column of that name in any batch. */
  notBefore: z.string().optional(),
});
export type PayoutRow = z.infer<typeof PayoutRowSchema>;

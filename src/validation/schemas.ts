// The zod schemas of a batch row: one beneficiary schema per method, built from the spec's
// method table (src/spec/methods.ts: required, one-of and optional fields) and the field
// validators (fields.ts). They are the single source of truth of each method's shape: the row
// validator parses with them, the templates list their fields, and PayoutRow is inferred.
import { z } from 'zod';
import { isSEPACountry } from 'ibantools';
import { PAYOUT_METHODS, PayoutMethod, canonicalMethod } from '../spec/codes.ts';
import { ALWAYS_REQUIRED, METHOD_RULES } from '../spec/methods.ts';
import { Beneficiary } from '../spec/beneficiary.ts';
import { Dec } from '../money.ts';
import { BENEFICIARY_COLUMNS, type BeneficiaryColumn } from '../input/columns.ts';
import * as F from './fields.ts';
import type { ProblemCode } from './problems.ts';

/** What a custom zod issue carries, so it becomes a Problem. */
export interface IssueParams {
  problem: ProblemCode;
  expected?: string;
  severity?: 'warning';
}

/** A zod schema from a field validator: text in, normalized text out, or an issue. */
export const fieldSchema = (check: F.FieldCheck) =>
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
  swiftCode: F.memo(F.bic),
  bankName: F.memo(F.text(140, 'the bank name')),
  beneficiaryCountry: F.countryCode,
  intermediarySwift: F.bic,
  address: F.text(140, 'the address'),
  city: F.memo(F.text(70, 'the city')),
  postCode: F.text(16, 'the post code'),
  routingNumber: F.memo(F.routingNumber),
  accountType: F.memo(F.accountType),
  bankCode: F.memo(F.anyBankCode),
  sortCode: F.memo(F.sortCode),
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
  NIP: { accountNumber: F.nuban, bankCode: F.memo(F.nipBankCode) },
  ACH: { accountNumber: F.usAccountNumber },
  WIRE: { accountNumber: F.usAccountNumber },
  HK_FPS: { accountNumber: F.hkAccountNumber, bankCode: F.memo(F.hkBankCode) },
};

/**
 * Digits an identifier has at least, per method: a numeric Excel cell with fewer digits lost
 * its leading zeros. undefined: the format does not tell.
 */
export function minDigits(field: BeneficiaryColumn, method: PayoutMethod | undefined): number | undefined {
  if (field === 'sortCode') return 6;
  if (field === 'routingNumber') return 9;
  if (field === 'fpsId') return 7;
  if (field === 'accountNumber') return method === 'FASTER_PAYMENTS' || method === 'BACS' ? 8 : method === 'NIP' ? 10 : undefined;
  if (field === 'bankCode') return method === 'NIP' || method === 'HK_FPS' ? 3 : undefined;
  return undefined;
}

/** The beneficiary fields a method takes, in template order: the rest are not sent. */
export function methodFields(method: PayoutMethod): BeneficiaryColumn[] {
  return [...METHOD_FIELDS[method]];
}
const METHOD_FIELDS = Object.fromEntries(
  PAYOUT_METHODS.map((m) => {
    const rule = METHOD_RULES[m];
    return [
      m,
      [
        ...new Set([...ALWAYS_REQUIRED, ...rule.required, ...(rule.oneOf ?? []).flat(), ...rule.optional, 'countryCode']),
      ] as BeneficiaryColumn[],
    ];
  }),
) as unknown as Record<PayoutMethod, readonly BeneficiaryColumn[]>;
/** The method's fields as a set (shared, do not change). */
export const METHOD_FIELD_SETS = Object.fromEntries(PAYOUT_METHODS.map((m) => [m, new Set<string>(METHOD_FIELDS[m])])) as unknown as Record<
  PayoutMethod,
  ReadonlySet<string>
>;

export function requiredFields(method: PayoutMethod): BeneficiaryColumn[] {
  return [...ALWAYS_REQUIRED, ...METHOD_RULES[method].required] as BeneficiaryColumn[];
}

/** Whether every field of one of the groups is given. */
function someGroupGiven(groups: readonly (readonly string[])[], b: Record<string, unknown>): boolean {
  for (const g of groups) {
    let all = true;
    for (const f of g) if (b[f] === undefined) all = false;
    if (all) return true;
  }
  return false;
}

/** A cross-field issue of a beneficiary (zod custom issue: path, message, params). */
interface RuleIssue {
  path: string[];
  message: string;
  params: IssueParams;
}

/**
 * The method's rules across fields, on the parsed beneficiary (values as the field validators
 * return them): one-of groups, and the IBAN against the method and the UK sort code and account.
 */
function beneficiaryRuleIssues(method: PayoutMethod, b: Record<string, unknown>): RuleIssue[] | undefined {
  // plain loops and no closures: this runs for every row (and tsx names each closure it creates)
  const rule = METHOD_RULES[method];
  let issues: RuleIssue[] | undefined;
  if (rule.oneOf && !someGroupGiven(rule.oneOf, b)) {
    (issues ??= []).push({
      path: [],
      message: `${method} needs one of: ${rule.oneOf.map((g) => g.join(' and ')).join('; or ')}`,
      params: { problem: 'MISSING_ONE_OF', expected: rule.oneOf.map((g) => g.join(' + ')).join(' | ') },
    });
  }
  const iban = typeof b.iban === 'string' ? b.iban : undefined;
  if (iban && method === 'SEPA' && !isSEPACountry(iban.slice(0, 2))) {
    (issues ??= []).push({
      path: ['iban'],
      message: `SEPA reaches accounts in the SEPA area; ${iban.slice(0, 2)} is not in it`,
      params: { problem: 'IBAN_MISMATCH', expected: 'an IBAN of a SEPA country (or method SWIFT)' },
    });
  }
  if (iban && (method === 'FASTER_PAYMENTS' || method === 'BACS')) {
    if (!iban.startsWith('GB')) {
      (issues ??= []).push({
        path: ['iban'],
        message: `${method} pays UK accounts: the IBAN starts with GB, not ${iban.slice(0, 2)}`,
        params: { problem: 'IBAN_MISMATCH', expected: 'a GB IBAN' },
      });
    } else {
      const sc = iban.slice(8, 14);
      const acc = iban.slice(14, 22);
      if (typeof b.sortCode === 'string' && b.sortCode !== sc) {
        (issues ??= []).push({
          path: ['sortCode'],
          message: `the sort code differs from the one inside the IBAN (${sc})`,
          params: { problem: 'IBAN_MISMATCH', expected: `${sc}, as in the IBAN` },
        });
      }
      if (typeof b.accountNumber === 'string' && b.accountNumber !== acc) {
        (issues ??= []).push({
          path: ['accountNumber'],
          message: 'the account number differs from the one inside the IBAN',
          params: { problem: 'IBAN_MISMATCH', expected: 'the 8 digits at the end of the IBAN' },
        });
      }
    }
  }
  return issues;
}

/**
 * A beneficiary parser without zod's machinery, for rows with no issue (see BENEFICIARY_FAST).
 * Its input is the row's non-empty values by BENEFICIARY_COLUMNS index (undefined: empty).
 */
export type FastBeneficiary = (values: readonly (string | undefined)[]) => Record<string, string> | undefined;

function buildBeneficiarySchema(method: PayoutMethod) {
  const required = new Set<string>(requiredFields(method));
  const shape: Record<string, z.ZodType> = {};
  // the same fields, validators and required flags, for the fast path
  const plan: { field: string; column: number; check: F.FieldCheck; required: boolean }[] = [];
  for (const f of methodFields(method)) {
    const check = METHOD_FIELD_CHECKS[method]?.[f] ?? FIELD_CHECKS[f];
    const s = fieldSchema(check);
    shape[f] = required.has(f) ? s : s.optional();
    plan.push({ field: f, column: BENEFICIARY_COLUMNS.indexOf(f), check, required: required.has(f) });
  }
  const schema = z.object(shape).superRefine(
    (b: Record<string, unknown>, ctx) => {
      for (const i of beneficiaryRuleIssues(method, b) ?? [])
        ctx.addIssue({ code: 'custom', path: i.path, message: i.message, params: i.params });
    },
    { when: () => true },
  );
  const fast: FastBeneficiary = (values) => {
    const out: Record<string, string> = {};
    for (let i = 0; i < plan.length; i++) {
      const p = plan[i]!;
      const v = values[p.column];
      if (v === undefined) {
        if (p.required) return undefined;
        continue;
      }
      const r = p.check(v);
      if (!r.ok) return undefined;
      if (r.value !== '') out[p.field] = r.value;
    }
    return beneficiaryRuleIssues(method, out) ? undefined : out;
  };
  return { schema, fast };
}

const BUILT = Object.fromEntries(PAYOUT_METHODS.map((m) => [m, buildBeneficiarySchema(m)])) as Record<
  PayoutMethod,
  ReturnType<typeof buildBeneficiarySchema>
>;

/** One beneficiary schema per method. */
export const BENEFICIARY_SCHEMAS: Record<PayoutMethod, (typeof BUILT)[PayoutMethod]['schema']> = Object.fromEntries(
  PAYOUT_METHODS.map((m) => [m, BUILT[m].schema]),
) as Record<PayoutMethod, (typeof BUILT)[PayoutMethod]['schema']>;

/**
 * Per method, the beneficiary of a row's values for which BENEFICIARY_SCHEMAS[method] reports no
 * issue: the output of its safeParse (empty values left out), built from the same fields,
 * validators and rules, without zod's per-call objects. undefined whenever there is any issue:
 * the row is then parsed by the schema, which says what the issues are.
 * test/validation/fast-beneficiary.test.ts checks that both agree on random rows.
 */
export const BENEFICIARY_FAST: Record<PayoutMethod, FastBeneficiary> = Object.fromEntries(
  PAYOUT_METHODS.map((m) => [m, BUILT[m].fast]),
) as Record<PayoutMethod, FastBeneficiary>;

export const methodCheck: F.FieldCheck = (raw) => {
  const m = canonicalMethod(raw);
  if (m) return { ok: true, value: m };
  return {
    ok: false,
    code: 'INVALID_METHOD',
    message: `"${raw}" is not a payout method of the service`,
    expected: `one of ${PAYOUT_METHODS.join(', ')} (any case; HONG_KONG_FPS for HK_FPS)`,
  };
};

/** The payout fields of a row besides the amount and the beneficiary, and their validators. */
export const PAYOUT_FIELD_CHECKS = {
  reference: F.text(100, 'the reference'),
  sourceCurrency: F.currencyCode,
  destinationCurrency: F.currencyCode,
  destinationCountryCode: F.countryCode,
  method: F.memo(methodCheck),
  narration: F.text(140, 'the narration'),
  remitterAddress: F.text(200, 'the remitter address'),
  withdrawal: F.memo(F.booleanText),
} as const;
export const OPTIONAL_PAYOUT_FIELDS: ReadonlySet<string> = new Set(['remitterAddress', 'withdrawal']);
export const PayoutFieldsSchema = z.object(
  Object.fromEntries(
    Object.entries(PAYOUT_FIELD_CHECKS).map(([f, check]) => [
      f,
      OPTIONAL_PAYOUT_FIELDS.has(f) ? fieldSchema(check).optional() : fieldSchema(check),
    ]),
  ) as { [K in keyof typeof PAYOUT_FIELD_CHECKS]: ReturnType<typeof fieldSchema> },
);

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
});
export type PayoutRow = z.infer<typeof PayoutRowSchema>;

// Per-method rules of the spec: beneficiary fields (§4.2), fees and settlement (§1.9) and the
// corridor overview (§1.9), as the validator reads them. The sandbox keeps its own tables, written
// from the spec apart from these (sandbox/rules.ts), so that a misreading on one side shows up in
// the tests of the other instead of agreeing with itself.
import type { PayoutMethod } from './codes.ts';
import { Dec } from '../money.ts';
import { Beneficiary } from './beneficiary.ts';

/** Spec §2 Beneficiary: the field names used by the interface, in the schema's order. */
export type BeneficiaryField = keyof typeof Beneficiary.shape;
export const BENEFICIARY_FIELDS = Object.keys(Beneficiary.shape) as BeneficiaryField[];

/** Spec §2 Payment method: a field descriptor's type. */
export type FieldType = 'string' | 'email' | 'phone' | 'number';

export interface MethodRule {
  code: PayoutMethod;
  name: string;
  /** Always required besides accountName and accountCurrency (spec §4.2). */
  required: BeneficiaryField[];
  /** One of these groups must be given in full (WECHAT, HK_FPS). */
  oneOf?: BeneficiaryField[][];
  optional: BeneficiaryField[];
  /** Indicative fee in the source currency (spec §1.9); SWIFT uses amount bands. */
  fee: FeeRule;
  settlement: string;
  /** Destination currencies and countries this method can reach; undefined means any. */
  destinationCurrencies?: string[];
  destinationCountries?: string[];
}

export type FeeRule =
  { kind: 'flat'; amount: string; currency?: string } | { kind: 'bands'; bands: { below: string | null; amount: string }[] };

/** Spec §4.2: every method needs these two. */
export const ALWAYS_REQUIRED: BeneficiaryField[] = ['accountName', 'accountCurrency'];

const FIELD_TYPES: Partial<Record<BeneficiaryField, FieldType>> = {
  email: 'email',
  phoneNumber: 'phone',
};
export const fieldType = (f: BeneficiaryField): FieldType => FIELD_TYPES[f] ?? 'string';

/** SEPA reach, ISO 3166-1 alpha-3. */
const SEPA_COUNTRIES = (
  'AUT BEL BGR HRV CYP CZE DNK EST FIN FRA DEU GRC HUN ISL IRL ITA LVA LIE ' +
  'LTU LUX MLT MCO NLD NOR POL PRT ROU SMR SVK SVN ESP SWE CHE GBR AND VAT'
).split(' ');

/**
 * Spec §1.9 fees are "indicative" amounts without a currency for most rows. Our reading: the
 * amount is charged in the source currency (the quote's fee is "always the source currency").
 * WIRE and CHINA_WIRE have no required-field list in the spec ("not shown"); our reading is the
 * usual domestic wire details, written below. ALIPAY and WECHAT have no published fee; we use 10.
 */
export const METHOD_RULES: Record<PayoutMethod, MethodRule> = {
  ALIPAY: {
    code: 'ALIPAY',
    name: 'Alipay',
    required: ['alipayId'],
    optional: [],
    fee: { kind: 'flat', amount: '10' },
    settlement: 'under 24 hours',
    destinationCurrencies: ['CNY'],
    destinationCountries: ['CHN'],
  },
  WECHAT: {
    code: 'WECHAT',
    name: 'WeChat Pay',
    required: [],
    oneOf: [['openId'], ['wechatUserId']],
    optional: [],
    fee: { kind: 'flat', amount: '10' },
    settlement: 'under 24 hours',
    destinationCurrencies: ['CNY'],
    destinationCountries: ['CHN'],
  },
  SEPA: {
    code: 'SEPA',
    name: 'SEPA credit transfer',
    required: ['iban'],
    optional: ['swiftCode', 'address', 'city', 'postCode'],
    fee: { kind: 'flat', amount: '5.00' },
    settlement: 'under 48 hours',
    destinationCurrencies: ['EUR'],
    destinationCountries: SEPA_COUNTRIES,
  },
  SWIFT: {
    code: 'SWIFT',
    name: 'SWIFT international transfer',
    required: ['accountNumber', 'swiftCode', 'bankName', 'beneficiaryCountry'],
    optional: ['iban', 'intermediarySwift', 'address', 'city', 'postCode'],
    fee: {
      kind: 'bands',
      bands: [
        { below: '2000', amount: '50' },
        { below: '10000', amount: '40' },
        { below: null, amount: '0' },
      ],
    },
    settlement: '24 to 72 hours',
  },
  ACH: {
    code: 'ACH',
    name: 'ACH transfer',
    required: ['routingNumber', 'accountNumber', 'accountType'],
    optional: ['bankName'],
    fee: { kind: 'flat', amount: '5.00' },
    settlement: '1 to 3 days',
    destinationCurrencies: ['USD'],
    destinationCountries: ['USA'],
  },
  WIRE: {
    code: 'WIRE',
    name: 'Domestic wire',
    required: ['routingNumber', 'accountNumber', 'bankName'],
    optional: ['address', 'city', 'postCode'],
    fee: { kind: 'flat', amount: '20' },
    settlement: '1 day',
    destinationCurrencies: ['USD'],
    destinationCountries: ['USA'],
  },
  NIP: {
    code: 'NIP',
    name: 'NIBSS Instant Payment',
    required: ['accountNumber', 'bankCode'],
    optional: [],
    // The one fee the table prices in a currency other than every source that uses it: 100 NGN,
    // also when sent from USD.
    fee: { kind: 'flat', amount: '100', currency: 'NGN' },
    settlement: 'under 24 hours',
    destinationCurrencies: ['NGN'],
    destinationCountries: ['NGA'],
  },
  CHINA_WIRE: {
    code: 'CHINA_WIRE',
    name: 'China wire',
    required: ['accountNumber', 'bankName'],
    optional: ['swiftCode', 'bankCode', 'address', 'city'],
    fee: { kind: 'flat', amount: '20' },
    settlement: '24 to 72 hours',
    destinationCurrencies: ['CNY', 'USD'],
    destinationCountries: ['CHN'],
  },
  HK_FPS: {
    code: 'HK_FPS',
    name: 'Hong Kong Faster Payment System',
    required: [],
    oneOf: [['fpsId'], ['phoneNumber'], ['email'], ['accountNumber', 'bankCode']],
    optional: [],
    fee: { kind: 'flat', amount: '20' },
    settlement: 'under 24 hours',
    destinationCurrencies: ['HKD', 'USD'],
    destinationCountries: ['HKG'],
  },
  FASTER_PAYMENTS: {
    code: 'FASTER_PAYMENTS',
    name: 'UK Faster Payments',
    required: ['sortCode', 'accountNumber', 'iban'],
    optional: [],
    fee: { kind: 'flat', amount: '2.00' },
    settlement: 'under 24 hours',
    destinationCurrencies: ['GBP'],
    destinationCountries: ['GBR'],
  },
  BACS: {
    code: 'BACS',
    name: 'UK BACS',
    required: ['sortCode', 'accountNumber', 'iban'],
    optional: [],
    fee: { kind: 'flat', amount: '2.00' },
    settlement: 'under 24 hours',
    destinationCurrencies: ['GBP'],
    destinationCountries: ['GBR'],
  },
};

/**
 * Spec §1.9 "Supported currency to method overview", plus the HKD/HK FPS row of the fee table.
 * The overview lists destinations per source currency; "and more" after NGN is not a list, so a
 * combination outside it is only a warning for the validator: the methods route decides.
 */
export const CORRIDOR_OVERVIEW: Record<string, { destinations: string[]; methods: PayoutMethod[] }> = {
  NGN: { destinations: ['NGN', 'USD', 'EUR', 'GBP', 'CNY'], methods: ['NIP', 'SWIFT', 'ALIPAY', 'WECHAT'] },
  USD: {
    destinations: ['USD', 'NGN', 'GHS', 'XOF', 'XAF', 'ZAR', 'CAD', 'EUR', 'GBP', 'CNY', 'INR', 'HKD'],
    methods: ['WIRE', 'ACH', 'SWIFT', 'NIP', 'CHINA_WIRE', 'HK_FPS', 'FASTER_PAYMENTS', 'SEPA'],
  },
  EUR: { destinations: ['EUR', 'GBP', 'NGN', 'CNY'], methods: ['SEPA', 'SWIFT'] },
  GBP: { destinations: ['GBP', 'EUR', 'NGN', 'CNY'], methods: ['FASTER_PAYMENTS', 'BACS', 'SWIFT'] },
  CNY: { destinations: ['CNY'], methods: ['SWIFT', 'CHINA_WIRE'] },
  INR: { destinations: ['INR'], methods: ['SWIFT'] },
  HKD: { destinations: ['HKD'], methods: ['HK_FPS', 'SWIFT'] },
};

/** The methods the spec's overview allows for one corridor (source, destination currency, country). */
export function methodsForCorridor(source: string, destination: string, country: string): PayoutMethod[] {
  const overview = CORRIDOR_OVERVIEW[source];
  if (!overview || !overview.destinations.includes(destination)) return [];
  return overview.methods.filter((m) => {
    const rule = METHOD_RULES[m];
    return (
      (!rule.destinationCurrencies || rule.destinationCurrencies.includes(destination)) &&
      (!rule.destinationCountries || rule.destinationCountries.includes(country))
    );
  });
}

/** Beneficiary fields a method needs that are missing (spec §4.2); empty when complete. */
export function missingBeneficiaryFields(method: PayoutMethod, beneficiary: Partial<Record<string, unknown>>): string[] {
  const present = (f: string) => {
    const v = beneficiary[f];
    return v !== undefined && v !== null && (typeof v !== 'string' || v.trim() !== '');
  };
  const rule = METHOD_RULES[method];
  const missing = [...ALWAYS_REQUIRED, ...rule.required].filter((f) => !present(f));
  if (rule.oneOf && !rule.oneOf.some((group) => group.every(present))) {
    missing.push(rule.oneOf.map((g) => g.join('+')).join(' | ') as BeneficiaryField);
  }
  return missing;
}

/** Spec §1.9: the indicative fee for an amount in the source currency (SWIFT by amount band). */
export function indicativeFee(method: PayoutMethod, sourceAmount: Dec): Dec {
  const fee = METHOD_RULES[method].fee;
  if (fee.kind === 'flat') return new Dec(fee.amount);
  const band = fee.bands.find((b) => b.below === null || sourceAmount.lessThan(b.below));
  return new Dec(band?.amount ?? 0);
}

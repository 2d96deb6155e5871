// Per-method rules (spec §4.2 fields, §1.9 reach and overview), as the validator reads them. The sandbox
// keeps its own tables (sandbox/rules.ts), so a misreading on one side shows in the other's tests.
import type { PayoutMethod } from './codes.ts';
import { Beneficiary } from './schemas.ts';

type BeneficiaryField = keyof typeof Beneficiary.shape;
export const BENEFICIARY_FIELDS = Object.keys(Beneficiary.shape) as BeneficiaryField[];

interface MethodRule {
  /** Required besides ALWAYS_REQUIRED (spec §4.2). */
  required: BeneficiaryField[];
  /** One group given in full (WECHAT, HK_FPS). */
  oneOf?: BeneficiaryField[][];
  optional: BeneficiaryField[];
  /** Reach: destination currencies and countries; undefined means any. */
  destinationCurrencies?: string[];
  destinationCountries?: string[];
}

export const ALWAYS_REQUIRED: BeneficiaryField[] = ['accountName', 'accountCurrency'];

const SEPA_COUNTRIES = (
  'AUT BEL BGR HRV CYP CZE DNK EST FIN FRA DEU GRC HUN ISL IRL ITA LVA LIE ' +
  'LTU LUX MLT MCO NLD NOR POL PRT ROU SMR SVK SVN ESP SWE CHE GBR AND VAT'
).split(' ');

/** Rules name only what a method has: no required (or optional) field is an empty list. */
const rule = (r: Partial<MethodRule>): MethodRule => ({ required: [], optional: [], ...r });

/** WIRE and CHINA_WIRE have no required fields in the spec ("not shown"): the usual domestic wire details. */
export const METHOD_RULES: Record<PayoutMethod, MethodRule> = {
  ALIPAY: rule({ required: ['alipayId'], destinationCurrencies: ['CNY'], destinationCountries: ['CHN'] }),
  WECHAT: rule({ oneOf: [['openId'], ['wechatUserId']], destinationCurrencies: ['CNY'], destinationCountries: ['CHN'] }),
  SEPA: rule({
    required: ['iban'],
    optional: ['swiftCode', 'address', 'city', 'postCode'],
    destinationCurrencies: ['EUR'],
    destinationCountries: SEPA_COUNTRIES,
  }),
  SWIFT: rule({
    required: ['accountNumber', 'swiftCode', 'bankName', 'beneficiaryCountry'],
    optional: ['iban', 'intermediarySwift', 'address', 'city', 'postCode'],
  }),
  ACH: rule({
    required: ['routingNumber', 'accountNumber', 'accountType'],
    optional: ['bankName'],
    destinationCurrencies: ['USD'],
    destinationCountries: ['USA'],
  }),
  WIRE: rule({
    required: ['routingNumber', 'accountNumber', 'bankName'],
    optional: ['address', 'city', 'postCode'],
    destinationCurrencies: ['USD'],
    destinationCountries: ['USA'],
  }),
  NIP: rule({ required: ['accountNumber', 'bankCode'], destinationCurrencies: ['NGN'], destinationCountries: ['NGA'] }),
  CHINA_WIRE: rule({
    required: ['accountNumber', 'bankName'],
    optional: ['swiftCode', 'bankCode', 'address', 'city'],
    destinationCurrencies: ['CNY', 'USD'],
    destinationCountries: ['CHN'],
  }),
  HK_FPS: rule({
    oneOf: [['fpsId'], ['phoneNumber'], ['email'], ['accountNumber', 'bankCode']],
    destinationCurrencies: ['HKD', 'USD'],
    destinationCountries: ['HKG'],
  }),
  FASTER_PAYMENTS: rule({ required: ['sortCode', 'accountNumber', 'iban'], destinationCurrencies: ['GBP'], destinationCountries: ['GBR'] }),
  BACS: rule({ required: ['sortCode', 'accountNumber', 'iban'], destinationCurrencies: ['GBP'], destinationCountries: ['GBR'] }),
};

/** Spec §1.9 overview plus the fee table's HKD/HK FPS row. "And more" after NGN is not a list: outside it, the validator only warns. */
const CORRIDOR_OVERVIEW: Record<string, { destinations: string[]; methods: PayoutMethod[] }> = {
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

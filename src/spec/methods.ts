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

/** WIRE and CHINA_WIRE have no required fields in the spec ("not shown"): the usual domestic wire details. */
export const METHOD_RULES: Record<PayoutMethod, MethodRule> = {
  ALIPAY: { required: ['alipayId'], optional: [], destinationCurrencies: ['CNY'], destinationCountries: ['CHN'] },
  WECHAT: {
    required: [],
    oneOf: [['openId'], ['wechatUserId']],
    optional: [],
    destinationCurrencies: ['CNY'],
    destinationCountries: ['CHN'],
  },
  SEPA: {
    required: ['iban'],
    optional: ['swiftCode', 'address', 'city', 'postCode'],
    destinationCurrencies: ['EUR'],
    destinationCountries: SEPA_COUNTRIES,
  },
  SWIFT: {
    required: ['accountNumber', 'swiftCode', 'bankName', 'beneficiaryCountry'],
    optional: ['iban', 'intermediarySwift', 'address', 'city', 'postCode'],
  },
  ACH: {
    required: ['routingNumber', 'accountNumber', 'accountType'],
    optional: ['bankName'],
    destinationCurrencies: ['USD'],
    destinationCountries: ['USA'],
  },
  WIRE: {
    required: ['routingNumber', 'accountNumber', 'bankName'],
    optional: ['address', 'city', 'postCode'],
    destinationCurrencies: ['USD'],
    destinationCountries: ['USA'],
  },
  NIP: { required: ['accountNumber', 'bankCode'], optional: [], destinationCurrencies: ['NGN'], destinationCountries: ['NGA'] },
  CHINA_WIRE: {
    required: ['accountNumber', 'bankName'],
    optional: ['swiftCode', 'bankCode', 'address', 'city'],
    destinationCurrencies: ['CNY', 'USD'],
    destinationCountries: ['CHN'],
  },
  HK_FPS: {
    required: [],
    oneOf: [['fpsId'], ['phoneNumber'], ['email'], ['accountNumber', 'bankCode']],
    optional: [],
    destinationCurrencies: ['HKD', 'USD'],
    destinationCountries: ['HKG'],
  },
  FASTER_PAYMENTS: {
    required: ['sortCode', 'accountNumber', 'iban'],
    optional: [],
    destinationCurrencies: ['GBP'],
    destinationCountries: ['GBR'],
  },
  BACS: { required: ['sortCode', 'accountNumber', 'iban'], optional: [], destinationCurrencies: ['GBP'], destinationCountries: ['GBR'] },
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

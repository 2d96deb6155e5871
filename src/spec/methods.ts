// Per-method rules of the spec: beneficiary fields (§4.2), each method's reach and the corridor
// overview (§1.9), as the validator reads them. The sandbox keeps its own tables, written
// from the spec apart from these (sandbox/rules.ts), so that a misreading on one side shows up in
// the tests of the other instead of agreeing with itself.
import type { PayoutMethod } from './codes.ts';
import { Beneficiary } from './beneficiary.ts';

/** Spec §2 Beneficiary: the field names used by the interface, in the schema's order. */
type BeneficiaryField = keyof typeof Beneficiary.shape;
export const BENEFICIARY_FIELDS = Object.keys(Beneficiary.shape) as BeneficiaryField[];

interface MethodRule {
  /** Always required besides accountName and accountCurrency (spec §4.2). */
  required: BeneficiaryField[];
  /** One of these groups must be given in full (WECHAT, HK_FPS). */
  oneOf?: BeneficiaryField[][];
  optional: BeneficiaryField[];
  /** Destination currencies and countries this method can reach; undefined means any. */
  destinationCurrencies?: string[];
  destinationCountries?: string[];
}

/** Spec §4.2: every method needs these two. */
export const ALWAYS_REQUIRED: BeneficiaryField[] = ['accountName', 'accountCurrency'];

/** SEPA reach, ISO 3166-1 alpha-3. */
const SEPA_COUNTRIES = (
  'AUT BEL BGR HRV CYP CZE DNK EST FIN FRA DEU GRC HUN ISL IRL ITA LVA LIE ' +
  'LTU LUX MLT MCO NLD NOR POL PRT ROU SMR SVK SVN ESP SWE CHE GBR AND VAT'
).split(' ');

/**
 * WIRE and CHINA_WIRE have no required-field list in the spec ("not shown"); our reading is the
 * usual domestic wire details, written below.
 */
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

/**
 * Spec §1.9 "Supported currency to method overview", plus the HKD/HK FPS row of the fee table.
 * The overview lists destinations per source currency; "and more" after NGN is not a list, so a
 * combination outside it is only a warning for the validator: the methods route decides.
 */
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

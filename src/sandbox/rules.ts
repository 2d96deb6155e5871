// The sandbox's own table of methods: required fields (§4.2), fees, settlement and corridors (§1.9), kept apart from
// src/spec/methods.ts so that a misreading on one side shows in the other's tests; "reading" marks where the spec is silent.
import type { PayoutMethod } from '../spec/codes.ts';

/** Spec §4.2: "Only accountName and accountCurrency are always required" / "AccountCurrency is required for every method". */
export const ALWAYS_REQUIRED = ['accountName', 'accountCurrency'] as const;

/**
 * Spec §2 Beneficiary: "If countryCode is omitted it is derived from destinationCountryCode", so optional everywhere;
 * Payment method: "remitterAddress is top-level on initiate and optional for all methods".
 */
export const OPTIONAL_FOR_EVERY_METHOD = ['countryCode', 'remitterAddress'] as const;

/** Spec §1.9 settlement as written, with the hours it spans. */
const settlement = (text: string, minHours: number, maxHours: number) => ({ text, minHours, maxHours });
const DAY_TO_THREE = settlement('24 to 72 hours', 24, 72);
const UNDER_24_HOURS = settlement('under 24 hours', 0, 24);

/** A published fee, in `currency` where the table writes one, else the source's; SWIFT's by band (`below` exclusive, null last). */
export type Fee =
  { kind: 'flat'; amount: string; currency?: string } | { kind: 'bands'; bands: { below: string | null; amount: string }[] };

const flat = (amount: string, currency?: string): Fee => ({ kind: 'flat', amount, ...(currency ? { currency } : {}) });

const SWIFT_BANDS: Fee = {
  kind: 'bands',
  // §1.9: "50 (under 2k), 40 (2k to under 10k), 0 (10k and above)".
  bands: [
    { below: '2000', amount: '50' },
    { below: '10000', amount: '40' },
    { below: null, amount: '0' },
  ],
};

export interface PublishedRow {
  methods: PayoutMethod[];
  currencies?: string[];
  countries?: string[];
  fee: Fee;
  settlement: ReturnType<typeof settlement>;
}

/** Spec §1.9 "EUR to EU countries": the 27 member states. */
const EU_COUNTRIES = 'AUT BEL BGR HRV CYP CZE DNK EST FIN FRA DEU GRC HUN IRL ITA LVA LTU LUX MLT NLD POL PRT ROU SVK SVN ESP SWE'.split(
  ' ',
);

/** Spec §1.9 table, then readings for methods it does not price; the first row naming a (method, currency, country) serves it. */
const PUBLISHED: PublishedRow[] = [
  // "USD to United States | WIRE | 20 USD | 1 day"
  { methods: ['WIRE'], currencies: ['USD'], countries: ['USA'], fee: flat('20', 'USD'), settlement: settlement('1 day', 24, 24) },
  // "USD to United States | ACH | 5.00 USD | 1 to 3 days"
  { methods: ['ACH'], currencies: ['USD'], countries: ['USA'], fee: flat('5.00', 'USD'), settlement: settlement('1 to 3 days', 24, 72) },
  // "USD to China, Hong Kong | CHINA_WIRE / HK FPS | 20 USD | 24 to 72 hours": the lists pair up in order
  { methods: ['CHINA_WIRE'], currencies: ['USD'], countries: ['CHN'], fee: flat('20', 'USD'), settlement: DAY_TO_THREE },
  { methods: ['HK_FPS'], currencies: ['USD'], countries: ['HKG'], fee: flat('20', 'USD'), settlement: DAY_TO_THREE },
  // "... other currencies, other countries | SWIFT | 50/40/0 | 24 to 72 hours": any currency and country
  { methods: ['SWIFT'], fee: SWIFT_BANDS, settlement: DAY_TO_THREE },
  // "EUR to EU countries | SEPA | 5.00 | under 48 hours"
  { methods: ['SEPA'], currencies: ['EUR'], countries: EU_COUNTRIES, fee: flat('5.00'), settlement: settlement('under 48 hours', 0, 48) },
  // "GBP to United Kingdom | FASTER_PAYMENTS / BACS | 2.00 | under 24 hours"
  { methods: ['FASTER_PAYMENTS', 'BACS'], currencies: ['GBP'], countries: ['GBR'], fee: flat('2.00'), settlement: UNDER_24_HOURS },
  // "NGN to Nigeria | NIP | 100 NGN | under 24 hours"
  { methods: ['NIP'], currencies: ['NGN'], countries: ['NGA'], fee: flat('100', 'NGN'), settlement: UNDER_24_HOURS },
  // "HKD to Hong Kong | FPS | 20 | under 24 hours"
  { methods: ['HK_FPS'], currencies: ['HKD'], countries: ['HKG'], fee: flat('20'), settlement: UNDER_24_HOURS },
  // Reading: CHINA_WIRE paying CNY is not priced: the USD row's 20, 24 to 72 hours.
  { methods: ['CHINA_WIRE'], currencies: ['CNY'], countries: ['CHN'], fee: flat('20'), settlement: DAY_TO_THREE },
  // Reading: ALIPAY and WECHAT are not priced: CNY in China, 10 in the source currency, under 24 hours.
  { methods: ['ALIPAY', 'WECHAT'], currencies: ['CNY'], countries: ['CHN'], fee: flat('10'), settlement: UNDER_24_HOURS },
];

/** Spec §4.2 fields per method besides ALWAYS_REQUIRED; `oneOf`: one group in full. `name` and the optional fields but SWIFT's are readings. */
export const METHOD_FIELDS: Record<PayoutMethod, { name: string; required: string[]; oneOf?: string[][]; optional: string[] }> = {
  // "ALIPAY | accountName, alipayId"
  ALIPAY: { name: 'Alipay', required: ['alipayId'], optional: [] },
  // "WECHAT | accountName and one of openId or wechatUserId"
  WECHAT: { name: 'WeChat Pay', required: [], oneOf: [['openId'], ['wechatUserId']], optional: [] },
  // "SEPA | accountName, iban"
  SEPA: { name: 'SEPA credit transfer', required: ['iban'], optional: ['swiftCode', 'address', 'city', 'postCode'] },
  // "SWIFT | accountName, accountNumber, swiftCode, bankName, beneficiaryCountry; optional iban, intermediarySwift, address, city, postCode"
  SWIFT: {
    name: 'SWIFT international transfer',
    required: ['accountNumber', 'swiftCode', 'bankName', 'beneficiaryCountry'],
    optional: ['iban', 'intermediarySwift', 'address', 'city', 'postCode'],
  },
  // "ACH | accountName, routingNumber, accountNumber, accountType (checking or savings)"
  ACH: { name: 'ACH transfer', required: ['routingNumber', 'accountNumber', 'accountType'], optional: ['bankName'] },
  // Reading: WIRE is not in the table: routing number, account number, bank name.
  WIRE: { name: 'Domestic wire', required: ['routingNumber', 'accountNumber', 'bankName'], optional: ['address', 'city', 'postCode'] },
  // "NIP | accountName, accountNumber, bankCode"
  NIP: { name: 'NIBSS Instant Payment', required: ['accountNumber', 'bankCode'], optional: [] },
  // Reading: CHINA_WIRE is not in the table: account number, bank name.
  CHINA_WIRE: { name: 'China wire', required: ['accountNumber', 'bankName'], optional: ['swiftCode', 'bankCode', 'address', 'city'] },
  // "HONG_KONG_FPS | accountName and one of fpsId, phoneNumber, email, or accountNumber together with bankCode"
  HK_FPS: {
    name: 'Hong Kong Faster Payment System',
    required: [],
    oneOf: [['fpsId'], ['phoneNumber'], ['email'], ['accountNumber', 'bankCode']],
    optional: [],
  },
  // "BACS / FASTER_PAYMENTS | accountName, sortCode, accountNumber, iban"
  FASTER_PAYMENTS: { name: 'UK Faster Payments', required: ['sortCode', 'accountNumber', 'iban'], optional: [] },
  BACS: { name: 'UK BACS', required: ['sortCode', 'accountNumber', 'iban'], optional: [] },
};

/** Each field as the methods route describes it: `validation` hints at its format; `description` for the variant reading. */
export const FIELDS: Partial<Record<string, { description: string; validation?: string }>> = {
  accountName: { description: 'Name on the beneficiary account' },
  accountCurrency: { description: 'Currency of the beneficiary account (ISO 4217)', validation: 'iso_4217' },
  alipayId: { description: 'Alipay account id' },
  openId: { description: 'WeChat OpenID' },
  wechatUserId: { description: 'WeChat user id' },
  iban: { description: 'IBAN', validation: 'iban' },
  accountNumber: { description: 'Account number' },
  swiftCode: { description: 'SWIFT/BIC of the beneficiary bank', validation: 'bic' },
  bankName: { description: 'Name of the beneficiary bank' },
  beneficiaryCountry: { description: 'Country of the beneficiary (ISO 3166-1 alpha-3)', validation: 'iso_3166_alpha3' },
  intermediarySwift: { description: 'SWIFT/BIC of the intermediary bank', validation: 'bic' },
  address: { description: 'Beneficiary street address' },
  city: { description: 'Beneficiary city' },
  postCode: { description: 'Beneficiary post code' },
  routingNumber: { description: 'ABA routing number', validation: 'aba_routing_number' },
  accountType: { description: 'checking or savings', validation: 'checking_or_savings' },
  bankCode: { description: 'Bank code' },
  sortCode: { description: 'UK sort code', validation: 'sort_code' },
  fpsId: { description: 'FPS identifier' },
  phoneNumber: { description: 'Phone number registered for FPS', validation: 'phone' },
  email: { description: 'Email address registered for FPS', validation: 'email' },
  countryCode: {
    description: 'Country of the beneficiary, derived from destinationCountryCode when omitted',
    validation: 'iso_3166_alpha3',
  },
  remitterAddress: { description: 'Address of the payer when it is not the onboarded business (top-level on initiate)' },
};

/** IBAN's check: the first four characters moved to the end, letters as 10-35, modulo 97. */
const mod97 = (s: string): number => [...s].reduce((r, c) => Number(`${r}${parseInt(c, 36)}`) % 97, 0);

/** The formats behind the hints of FIELDS (iso_4217 and checking_or_savings are the body schema's); reading: as written for the wire. */
const FORMATS: Partial<Record<string, { valid: (v: string) => boolean; expected: string }>> = {
  iso_3166_alpha3: { valid: (v) => /^[A-Z]{3}$/.test(v), expected: 'an ISO 3166-1 alpha-3 code of 3 capital letters (spec §1.6)' },
  iban: { valid: (v) => /^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(v) && mod97(v.slice(4) + v.slice(0, 4)) === 1, expected: 'an IBAN' },
  bic: { valid: (v) => /^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$/.test(v), expected: 'a SWIFT/BIC of 8 or 11 capitals and digits' },
  sort_code: { valid: (v) => /^\d{6}$/.test(v), expected: 'a sort code of 6 digits' },
  aba_routing_number: {
    valid: (v) => /^\d{9}$/.test(v) && [...v].reduce((sum, d, i) => sum + Number(d) * [3, 7, 1][i % 3]!, 0) % 10 === 0,
    expected: '9 digits with the ABA checksum',
  },
  phone: { valid: (v) => /^\+[1-9]\d{7,14}$/.test(v), expected: 'an E.164 number: + and 8 to 15 digits' },
  email: { valid: (v) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v), expected: 'an email address' },
};

/** A given beneficiary value that fails the validation the methods route advertises for its field: what would be valid. */
export function formatProblem(field: string, value: unknown): string | undefined {
  const format = FORMATS[FIELDS[field]?.validation ?? ''];
  return format && typeof value === 'string' && value.trim() !== '' && !format.valid(value) ? `must be ${format.expected}` : undefined;
}

/** Spec §1.9 overview per source currency; reading: HKD added from the table's "HKD to Hong Kong | FPS" row. */
const OVERVIEW: Record<string, { destinations: string[]; methods: PayoutMethod[] }> = {
  // "NGN ... and more via NIP, SWIFT, ALIPAY, WECHAT" ("and more" is not a list)
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

export function publishedRow(method: PayoutMethod, currency: string, country: string): PublishedRow | undefined {
  return PUBLISHED.find(
    (r) =>
      r.methods.includes(method) && (!r.currencies || r.currencies.includes(currency)) && (!r.countries || r.countries.includes(country)),
  );
}

/** The methods a corridor offers, in the overview's order: the source sends there, and a §1.9 row serves it. */
export function corridorMethods(source: string, destination: string, country: string): PayoutMethod[] {
  const overview = OVERVIEW[source];
  if (!overview || !overview.destinations.includes(destination)) return [];
  return overview.methods.filter((m) => publishedRow(m, destination, country) !== undefined);
}

const given = (beneficiary: Partial<Record<string, unknown>>, field: string): boolean => {
  const v = beneficiary[field];
  return v !== undefined && v !== null && (typeof v !== 'string' || v.trim() !== '');
};

/** Name of a one-of group in a MISSING_REQUIRED_FIELDS answer, e.g. "openId | wechatUserId". */
export const groupName = (oneOf: string[][]): string => oneOf.map((g) => g.join('+')).join(' | ');

/** Spec §4.2 rule 5: the beneficiary fields a method needs that are missing or blank; empty when complete. */
export function missingFields(method: PayoutMethod, beneficiary: Partial<Record<string, unknown>>): string[] {
  const rule = METHOD_FIELDS[method];
  const missing = [...ALWAYS_REQUIRED, ...rule.required].filter((f) => !given(beneficiary, f));
  if (rule.oneOf && !rule.oneOf.some((group) => group.every((f) => given(beneficiary, f)))) missing.push(groupName(rule.oneOf));
  return missing;
}

// Field validators: text to the normalized value sent, or a problem saying what would be valid.
// Tables from maintained libraries: ISO 4217 (src/money.ts), ISO 3166 (i18n-iso-countries), ibantools.
import countries from 'i18n-iso-countries/index.js';
import {
  validateIBAN,
  validateBIC,
  electronicFormatIBAN,
  getCountrySpecifications,
  ValidationErrorsIBAN,
  ValidationErrorsBIC,
} from 'ibantools';
import * as z from 'zod';
import { isCurrencyCode } from '../money.ts';
import type { ProblemCode } from './problems.ts';

export type FieldResult = { ok: true; value: string } | { ok: false; code: ProblemCode; message: string; expected: string };
/** `minDigits`: the digits the format has at least, where it tells (fewer in a numeric Excel cell: leading zeros lost). */
export type FieldCheck = ((raw: string) => FieldResult) & { minDigits?: number };
const withMinDigits = (minDigits: number, check: FieldCheck): FieldCheck => Object.assign(check, { minDigits });

export const ok = (value: string): FieldResult => ({ ok: true, value });
export const bad = (code: ProblemCode, message: string, expected: string): FieldResult => ({ ok: false, code, message, expected });

const ALPHA3 = new Set(Object.keys(countries.getAlpha3Codes()));

export const currencyCode: FieldCheck = (raw) => {
  const v = raw.trim().toUpperCase();
  if (isCurrencyCode(v)) return ok(v);
  return bad('INVALID_CURRENCY', `"${raw}" is not an ISO 4217 currency code`, 'a 3-letter ISO 4217 code such as USD, EUR, GBP, NGN');
};

export const countryCode: FieldCheck = (raw) => {
  const v = raw.trim().toUpperCase();
  if (ALPHA3.has(v)) return ok(v);
  const a3 = /^[A-Z]{2}$/.test(v) ? countries.alpha2ToAlpha3(v) : undefined;
  const hint = a3 ? ` (${v} is the 2-letter code; the service takes ${a3})` : '';
  return bad(
    'INVALID_COUNTRY',
    `"${raw}" is not an ISO 3166-1 alpha-3 country code${hint}`,
    'a 3-letter ISO 3166-1 alpha-3 code such as NGA, USA, GBR, DEU',
  );
};

const IBAN_SPECS = getCountrySpecifications();

export const iban: FieldCheck = (raw) => {
  // (grouped with any space: a no-break or thin one comes pasted from a statement or a PDF, as the BIC's and sort code's do)
  const v = electronicFormatIBAN(raw.replace(/\s+/g, '')) ?? '';
  const invalid = (message: string, expected = 'the IBAN exactly as the bank gives it') => bad('INVALID_IBAN', message, expected);
  const expected = 'an IBAN: 2-letter country, 2 check digits, then the national account (spaces allowed)';
  if (!/^[A-Z0-9]+$/.test(v)) return invalid('an IBAN has only letters and digits', expected);
  const r = validateIBAN(v);
  if (r.valid) return ok(v);
  const cc = v.slice(0, 2);
  const spec = IBAN_SPECS[cc];
  const e = r.errorCodes[0];
  if (e === ValidationErrorsIBAN.NoIBANCountry || !spec?.chars) return invalid(`"${cc}" is not a country that uses IBANs`, expected);
  if (e === ValidationErrorsIBAN.WrongBBANLength) {
    return invalid(`an IBAN of ${cc} has ${spec.chars} characters; this one has ${v.length}`, `${spec.chars} characters for ${cc}`);
  }
  if (e === ValidationErrorsIBAN.WrongBBANFormat) {
    return invalid(`the account part does not have the format of a ${cc} IBAN`, `a ${cc} IBAN of ${spec.chars} characters`);
  }
  if (e === ValidationErrorsIBAN.WrongAccountBankBranchChecksum) {
    return invalid(`the national check digits inside the ${cc} IBAN are wrong: a character was probably mistyped`);
  }
  return invalid('the IBAN checksum (mod 97) is wrong: a character was probably mistyped or swapped');
};

export const bic: FieldCheck = (raw) => {
  const v = raw.replace(/\s+/g, '').toUpperCase();
  const expected = '8 or 11 characters: 4-letter bank, 2-letter country, 2-character location, optional 3-character branch (e.g. DEUTDEFF)';
  if (v.length !== 8 && v.length !== 11)
    return bad('INVALID_BIC', `a SWIFT/BIC code has 8 or 11 characters; this one has ${v.length}`, expected);
  const r = validateBIC(v);
  if (r.valid) return ok(v);
  if (r.errorCodes.includes(ValidationErrorsBIC.NoBICCountry)) {
    return bad('INVALID_BIC', `"${v.slice(4, 6)}" (characters 5-6) is not a country code`, expected);
  }
  return bad('INVALID_BIC', `"${v}" does not have the SWIFT/BIC format`, expected);
};

const digitsOnly = (raw: string) => raw.replace(/[\s-]+/g, '');

/** Digits weighted in turn (ABA 3-7-1, NUBAN 3-7-3), summed modulo 10. */
const weightedSum = (digits: string, weights: number[]) =>
  [...digits].reduce((sum, d, i) => sum + Number(d) * weights[i % weights.length]!, 0) % 10;
const abaPrefixOk = (v: string) => {
  const p = Number(v.slice(0, 2));
  return p <= 12 || (p >= 21 && p <= 32) || (p >= 61 && p <= 72) || p === 80;
};
export const routingNumber = withMinDigits(9, (raw) => {
  const v = digitsOnly(raw);
  const expected = '9 digits with a valid ABA checksum (e.g. 021000021)';
  if (!/^\d{9}$/.test(v)) {
    return bad(
      'INVALID_ROUTING_NUMBER',
      `an ABA routing number has 9 digits; this has ${/^\d+$/.test(v) ? `${v.length} digits` : 'other characters'}${/^\d{7,8}$/.test(v) ? ' (leading zeros lost?)' : ''}`,
      expected,
    );
  }
  // (the prefix and the checksum hold for all zeros, a template's placeholder: no routing number is that)
  if (/^0+$/.test(v)) return bad('INVALID_ROUTING_NUMBER', 'the routing number is all zeros: a placeholder, no bank', expected);
  if (!abaPrefixOk(v))
    return bad('INVALID_ROUTING_NUMBER', `"${v.slice(0, 2)}" is not a Federal Reserve routing prefix (00-12, 21-32, 61-72, 80)`, expected);
  if (weightedSum(v, [3, 7, 1]) !== 0)
    return bad('INVALID_ROUTING_NUMBER', 'the ABA checksum is wrong: a digit was probably mistyped', expected);
  return ok(v);
});

export const sortCode = withMinDigits(6, (raw) => {
  const v = digitsOnly(raw);
  if (/^\d{6}$/.test(v)) return ok(v);
  const hint = /^\d{5}$/.test(v) ? ' (a leading zero lost?)' : '';
  return bad(
    'INVALID_SORT_CODE',
    `a UK sort code has 6 digits; this has ${/^\d+$/.test(v) ? `${v.length}` : 'other characters than'} digits${hint}`,
    '6 digits, e.g. 601613 or 60-16-13',
  );
});

const accountDigits =
  (label: string, min: number, max: number): FieldCheck =>
  (raw) => {
    const v = digitsOnly(raw);
    const expected = min === max ? `${min} digits (${label})` : `${min} to ${max} digits (${label})`;
    if (!/^\d+$/.test(v)) return bad('INVALID_ACCOUNT_NUMBER', `a ${label} has digits only`, expected);
    if (v.length < min || v.length > max) {
      const hint = v.length < min ? ' (leading zeros lost?)' : '';
      return bad(
        'INVALID_ACCOUNT_NUMBER',
        `a ${label} has ${min === max ? min : `${min} to ${max}`} digits; this has ${v.length}${hint}`,
        expected,
      );
    }
    return ok(v);
  };
export const ukAccountNumber = withMinDigits(8, accountDigits('UK account number', 8, 8));
export const nuban = withMinDigits(10, accountDigits('Nigerian NUBAN account number', 10, 10));
export const usAccountNumber = accountDigits('US account number', 4, 17);
export const hkAccountNumber = accountDigits('Hong Kong account number', 6, 17);

/** Any account number: letters and digits, 1 to 34 (the longest an IBAN-era account can be). */
export const genericAccountNumber: FieldCheck = (raw) => {
  const v = digitsOnly(raw).toUpperCase();
  if (/^[A-Z0-9]{1,34}$/.test(v)) return ok(v);
  return bad('INVALID_ACCOUNT_NUMBER', 'an account number has letters and digits only, at most 34', '1 to 34 letters or digits');
};

export const nipBankCode = withMinDigits(3, (raw) => {
  const v = digitsOnly(raw);
  if (/^(\d{3}|\d{5}|\d{6})$/.test(v)) return ok(v);
  return bad(
    'INVALID_BANK_CODE',
    `a Nigerian bank code has 3, 5 or 6 digits; this has ${/^\d+$/.test(v) ? v.length : 'other characters than'} digits`,
    'a CBN code of 3 digits (e.g. 058) or a NIP institution code of 5 or 6 digits (e.g. 000013)',
  );
});
export const hkBankCode = withMinDigits(3, (raw) => {
  const v = digitsOnly(raw);
  if (/^\d{3}$/.test(v)) return ok(v);
  return bad('INVALID_BANK_CODE', 'a Hong Kong bank code has 3 digits', '3 digits, e.g. 004 (HSBC)');
});
export const anyBankCode: FieldCheck = (raw) => {
  const v = raw.trim().toUpperCase();
  if (/^[A-Z0-9-]{1,20}$/.test(v)) return ok(v);
  return bad('INVALID_BANK_CODE', 'a bank code has letters, digits and hyphens only', '1 to 20 letters, digits or hyphens');
};

/** NUBAN check digit (CBN standard, 3-digit bank codes): weights 3,7,3 over bank code and 9 digits. */
export function nubanCheckDigitOk(bankCode3: string, account: string): boolean {
  return (10 - weightedSum(bankCode3 + account.slice(0, 9), [3, 7, 3])) % 10 === Number(account[9]);
}

export const accountType: FieldCheck = (raw) => {
  const v = raw.trim().toLowerCase();
  if (v === 'checking' || v === 'savings') return ok(v);
  return bad('INVALID_ACCOUNT_TYPE', `"${raw}" is not an account type of the service`, 'checking or savings');
};

const emailSchema = z.email();
export const email: FieldCheck = (raw) => {
  const v = raw.trim();
  if (emailSchema.safeParse(v).success) return ok(v);
  return bad('INVALID_EMAIL', 'not an email address', 'an address such as name@example.com');
};

export const phone: FieldCheck = (raw) => {
  const v = raw.trim().replace(/[\s.()-]+/g, '');
  const expected = 'E.164: + then country code and number, 8 to 15 digits (e.g. +85291234567)';
  if (/^\+[1-9]\d{7,14}$/.test(v)) return ok(v);
  if (/^00[1-9]\d{7,14}$/.test(v)) return bad('INVALID_PHONE', 'starts with 00: write + instead of 00', expected);
  if (/^\d+$/.test(v)) return bad('INVALID_PHONE', 'no + and country code', expected);
  return bad('INVALID_PHONE', 'not an E.164 phone number', expected);
};

export const fpsId = withMinDigits(7, (raw) => {
  const v = digitsOnly(raw);
  if (/^\d{7,9}$/.test(v)) return ok(v);
  return bad('INVALID_ID', 'an FPS ID has 7 to 9 digits', '7 to 9 digits, e.g. 1234567');
});

export const alipayId: FieldCheck = (raw) => {
  const v = raw.trim();
  if (emailSchema.safeParse(v).success) return ok(v);
  const p = v.replace(/[\s-]+/g, '');
  if (/^\+[1-9]\d{7,14}$/.test(p) || /^1\d{10}$/.test(p)) return ok(p);
  return bad(
    'INVALID_ID',
    'an Alipay ID is the email address or mobile number of the Alipay account',
    'an email address or a mobile number (+8613800138000 or 13800138000)',
  );
};

export const openId: FieldCheck = (raw) => {
  const v = raw.trim();
  if (/^[A-Za-z0-9_-]{6,64}$/.test(v)) return ok(v);
  return bad(
    'INVALID_ID',
    'a WeChat OpenID has letters, digits, "_" and "-" only (6 to 64)',
    'an OpenID such as oUpF8uMuAJO_M2pxb1Q9zNjWeS6o',
  );
};

export const wechatUserId: FieldCheck = (raw) => {
  const v = raw.trim();
  if (/^[A-Za-z][A-Za-z0-9_-]{5,19}$/.test(v)) return ok(v);
  return bad(
    'INVALID_ID',
    'a WeChat ID starts with a letter and has 6 to 20 letters, digits, "_" or "-"',
    'a WeChat ID such as wxid_abc123',
  );
};

/** Control characters (C0 and C1: a terminal acts on both) and line breaks; a tab is allowed. */
const CONTROL = /(?!\t)\p{Cc}/u;
export const text =
  (max: number, what: string): FieldCheck =>
  (raw) => {
    const v = raw.trim();
    if (CONTROL.test(v))
      return bad('INVALID_TEXT', `${what} holds control characters or line breaks`, `plain text of at most ${max} characters`);
    if (v.length > max)
      return bad('TOO_LONG', `${what} has ${v.length} characters; at most ${max} are allowed`, `at most ${max} characters`);
    return ok(v);
  };

export const booleanText: FieldCheck = (raw) => {
  const v = raw.trim().toLowerCase();
  if (['true', 'yes', 'y', '1', 'x'].includes(v)) return ok('true');
  if (['false', 'no', 'n', '0', ''].includes(v)) return ok('false');
  return bad('INVALID_BOOLEAN', `"${raw}" is not true or false`, 'true or false (also yes/no, 1/0); empty means false');
};

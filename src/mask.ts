// Apart from log.ts so that validation (which masks the values it quotes) does not load the logger.

/** Account numbers, IBANs and the like in logs and problems: the last 4 characters. */
export function maskAccount(value: string): string {
  const v = value.replace(/\s+/g, '');
  if (v.length <= 4) return '*'.repeat(v.length);
  return '*'.repeat(Math.min(v.length - 4, 8)) + v.slice(-4);
}

/** IBAN-shaped (printed in groups of 4 or not) and 8 or more digits standing alone, not an amount's or an id's. */
const QUOTED_ACCOUNT = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b|(?<![\w.,-])\d{8,}(?![\w-]|[.,]\d)/g;

/** A text from elsewhere (a service's refusal) as a log quotes it: each account number in it masked. */
export const maskAccountsIn = (text: string): string => text.replace(QUOTED_ACCOUNT, maskAccount);

/**
 * A URL as a message quotes it: what comes before an "@" (a user and password) and any query or fragment (often a token)
 * as ***; also in a text that does not parse (an "@" in a path masks too much, never too little).
 */
export const maskUrl = (url: string): string => url.replace(/^([a-z][\w+.-]*:\/\/)?[^]*@/i, '$1***@').replace(/[?#][^]*$/, '?***');

/** The error of a path given where a secret's file goes that names no file: the path may be the secret itself, never quoted. */
export const namesNoFile = (code: string): boolean => /^ENO(ENT|TDIR)$/.test(code);

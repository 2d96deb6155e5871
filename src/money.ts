// Exact decimal money: amounts travel as JSON numbers (spec), every sum is decimal.js. No faster
// second path: a key pays about 5,000 rows a month (spec §8), and it would be one more place for a
// wrong sum to hide.
import { Decimal } from 'decimal.js';
import currencyCodes from 'currency-codes';

/** 40 significant digits: sums of amounts with at most 4 decimals (ISO 4217's most) are exact up to 10^36. */
export const Dec: typeof Decimal = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -30, toExpPos: 40 });
export type Dec = Decimal;

const MINOR_UNITS = new Map(currencyCodes.data.map((c) => [c.code, c.digits]));

/** JPY 0, USD 2, KWD 3, in any case; undefined for a code that is not ISO 4217. */
export function minorUnits(currency: string): number | undefined {
  return MINOR_UNITS.get(currency.toUpperCase());
}

export type ApiAmount = number | string;

/** An amount as ISO 20022 writes it (xs:decimal, not negative: 1500. .5 +1.50), or undefined for other text ("1,500.00"). */
export const xsDecimal = (text: string): Decimal | undefined => (/^\+?(\d+(\.\d*)?|\.\d+)$/.test(text) ? new Dec(text) : undefined);

export const isCurrencyCode = (code: string): boolean => /^[A-Z]{3}$/.test(code) && minorUnits(code) !== undefined;

/** A JSON number's shortest decimal text is what was sent. */
export function fromApi(n: ApiAmount): Decimal {
  return new Dec(typeof n === 'number' ? String(n) : n);
}

/** Up to 15 significant digits a decimal survives a double and back unchanged: the service reads our exact value. */
export function toApi(d: Decimal): number {
  if (d.precision(true) > 15) throw new RangeError(`amount ${d.toFixed()} has more than 15 significant digits`);
  return Number(d.toFixed());
}

/** To the currency's minor units (half up), as the sandbox settles converted amounts. */
export function roundTo(d: Decimal, currency: string): Decimal {
  return d.toDecimalPlaces(minorUnits(currency) ?? 2, Dec.ROUND_HALF_UP);
}

/** Exactly the currency's minor units (half up). */
export function formatAmount(d: Decimal, currency: string): string {
  return d.toFixed(minorUnits(currency) ?? 2);
}

/** Padded with zeros, never rounded. */
export const atLeastDecimals = (d: Decimal, decimals: number): string => d.toFixed(Math.max(decimals, d.decimalPlaces()));

/** As reports show it: minor units, half up (`exact`: padded, never cut); as it is for a non-ISO code; never "-0". */
export function amountText(d: Decimal, currency: string | undefined, { exact = false } = {}): string {
  const v = d.isZero() ? d.abs() : d;
  const units = currency === undefined ? undefined : minorUnits(currency);
  if (units === undefined) return v.toFixed();
  return exact ? atLeastDecimals(v, units) : v.toFixed(units);
}

export function formatApiAmount(n: ApiAmount, currency: string): string {
  return formatAmount(fromApi(n), currency);
}

/** An amount and its fee, summed exactly. */
export function formatApiSum(a: ApiAmount, b: ApiAmount, currency: string): string {
  return formatAmount(fromApi(a).plus(fromApi(b)), currency);
}

/** "-1234567.50" → "-1,234,567.50"; anything but a decimal text unchanged. */
export function groupThousands(amount: string): string {
  const m = /^([-+]?)(\d+)(\.\d+)?$/.exec(amount);
  return m ? m[1]! + m[2]!.replace(/\B(?=(\d{3})+$)/g, ',') + (m[3] ?? '') : amount;
}

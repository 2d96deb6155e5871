// Exact decimal money. Amounts travel as JSON numbers in the spec, but every sum, fee and
// balance is computed with decimal.js: binary floating point never touches arithmetic.
// One implementation and no shortcut: a key pays at most about 5,000 rows a month (spec §8), so
// the CPU time of a Decimal per amount does not matter, and a second, faster path would be one
// more place for a wrong sum to hide.
import { Decimal } from 'decimal.js';
import currencyCodes from 'currency-codes';

/**
 * 40 significant digits: any sum of amounts with at most 4 decimals (the most an ISO 4217
 * currency has) is exact up to 10^36.
 */
export const Dec: typeof Decimal = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -30, toExpPos: 40 });
export type Dec = Decimal;

/** ISO 4217 code → its minor units, from the maintained table (built once: it is fixed). */
const MINOR_UNITS = new Map(currencyCodes.data.map((c) => [c.code, c.digits]));

/** ISO 4217 minor units (JPY 0, USD 2, KWD 3), in any case; undefined for a code that is not ISO 4217. */
export function minorUnits(currency: string): number | undefined {
  return MINOR_UNITS.get(currency.toUpperCase());
}

/** An amount as the service wrote it: a JSON number, or a decimal string (read exactly by fromApi). */
export type ApiAmount = number | string;

export const isCurrencyCode = (code: string): boolean => /^[A-Z]{3}$/.test(code) && minorUnits(code) !== undefined;

/** A JSON number from the API as an exact decimal: its shortest decimal text is what was sent. */
export function fromApi(n: ApiAmount): Decimal {
  return new Dec(typeof n === 'number' ? String(n) : n);
}

/**
 * A decimal as a JSON number. Up to 15 significant digits every decimal survives the trip
 * through a double and back to text unchanged, so the JSON the service reads is our exact value.
 */
export function toApi(d: Decimal): number {
  if (d.precision(true) > 15) throw new RangeError(`amount ${d.toFixed()} has more than 15 significant digits`);
  return Number(d.toFixed());
}

/** Round to the currency's minor units (half up), the way the sandbox settles converted amounts. */
export function roundTo(d: Decimal, currency: string): Decimal {
  return d.toDecimalPlaces(minorUnits(currency) ?? 2, Dec.ROUND_HALF_UP);
}

/** Text with exactly the currency's minor units (half up), for plans, summaries and results. */
export function formatAmount(d: Decimal, currency: string): string {
  return d.toFixed(minorUnits(currency) ?? 2);
}

/** Text with at least `decimals` decimals: padded with zeros, never rounded. */
export const atLeastDecimals = (d: Decimal, decimals: number): string => d.toFixed(Math.max(decimals, d.decimalPlaces()));

/**
 * An amount as reports show it: the currency's minor units, half up (`exact`: padded to them,
 * never cut: more decimals are kept); as it is for a code that is not ISO 4217; never "-0".
 */
export function amountText(d: Decimal, currency: string | undefined, { exact = false } = {}): string {
  const v = d.isZero() ? d.abs() : d;
  const units = currency === undefined ? undefined : minorUnits(currency);
  if (units === undefined) return v.toFixed();
  return exact ? atLeastDecimals(v, units) : v.toFixed(units);
}

/** An API amount as text with the currency's minor units. */
export function formatApiAmount(n: ApiAmount, currency: string): string {
  return formatAmount(fromApi(n), currency);
}

/** The exact sum of two API amounts (an amount and its fee) as text with the currency's minor units. */
export function formatApiSum(a: ApiAmount, b: ApiAmount, currency: string): string {
  return formatAmount(fromApi(a).plus(fromApi(b)), currency);
}

/** "-1234567.50" → "-1,234,567.50", "+158225.01" → "+158,225.01": digits grouped, the decimal text otherwise as it is (anything else unchanged). */
export function groupThousands(amount: string): string {
  const m = /^([-+]?)(\d+)(\.\d+)?$/.exec(amount);
  return m ? m[1]! + m[2]!.replace(/\B(?=(\d{3})+$)/g, ',') + (m[3] ?? '') : amount;
}

/** A running total of many amounts (a batch's amounts and fees), in decimal.js. */
export class ExactSum {
  private total: Decimal = new Dec(0);

  /** Adds an API amount (as fromApi reads it). */
  addApi(n: ApiAmount): this {
    return this.add(fromApi(n));
  }

  add(d: Decimal): this {
    this.total = this.total.plus(d);
    return this;
  }

  value(): Decimal {
    return this.total;
  }
}

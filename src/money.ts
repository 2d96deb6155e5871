// Exact decimal money. Amounts travel as JSON numbers in the spec, but every sum, fee and
// balance is computed with decimal.js: binary floating point never touches arithmetic.
import { Decimal } from 'decimal.js';
import currencyCodes from 'currency-codes';

export const Dec: typeof Decimal = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -30, toExpPos: 40 });
export type Dec = Decimal;

/** ISO 4217 minor units (JPY 0, USD 2, KWD 3); undefined for a code that is not ISO 4217. */
export function minorUnits(currency: string): number | undefined {
  return currencyCodes.code(currency.toUpperCase())?.digits;
}

export const isCurrencyCode = (code: string): boolean =>
  /^[A-Z]{3}$/.test(code) && minorUnits(code) !== undefined;

/** A JSON number from the API as an exact decimal: its shortest decimal text is what was sent. */
export function fromApi(n: number | string): Decimal {
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

/** Text with exactly the currency's minor units, for plans, summaries and results. */
export function formatAmount(d: Decimal, currency: string): string {
  return d.toFixed(minorUnits(currency) ?? 2);
}

export const sum = (values: Decimal[]): Decimal => values.reduce((a, b) => a.plus(b), new Dec(0));

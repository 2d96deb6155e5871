// Exact decimal money. Amounts travel as JSON numbers in the spec, but every sum, fee and
// balance is computed with decimal.js: binary floating point never touches arithmetic.
import { Decimal } from 'decimal.js';
import currencyCodes from 'currency-codes';

export const Dec: typeof Decimal = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -30, toExpPos: 40 });
export type Dec = Decimal;

const UNITS = new Map<string, number | undefined>();

/** ISO 4217 minor units (JPY 0, USD 2, KWD 3); undefined for a code that is not ISO 4217. */
export function minorUnits(currency: string): number | undefined {
  // the table is fixed: look each code up once (a results file asks for every row)
  if (UNITS.has(currency)) return UNITS.get(currency);
  const digits = currencyCodes.code(currency.toUpperCase())?.digits;
  UNITS.set(currency, digits);
  return digits;
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

// ---------------------------------------------------------------- API numbers as text, exactly

/** A plain decimal as String(number) writes it: sign, digits, maybe a fraction; no exponent. */
const PLAIN = /^(-?)(\d+)(?:\.(\d+))?$/;

/**
 * An API number (a JSON number: the shortest decimal that reads as its double) as a scaled integer
 * of `places` decimals, exactly, or undefined when its text has an exponent or more decimals than
 * `places` (then the caller takes decimal.js, which rounds). No binary arithmetic: the digits of
 * String(n) are the decimal fromApi reads.
 */
function scaled(n: number, places: number): bigint | undefined {
  const m = PLAIN.exec(String(n));
  if (!m) return undefined;
  const fraction = m[3] ?? '';
  if (fraction.length > places) return undefined;
  const v = BigInt(m[2]! + fraction + '0'.repeat(places - fraction.length));
  return m[1] ? -v : v;
}

/** A scaled integer as text with exactly `places` decimals, as Decimal.toFixed(places) writes it. */
function scaledText(v: bigint, places: number): string {
  const negative = v < 0n;
  let digits = (negative ? -v : v).toString();
  if (places > 0) {
    if (digits.length <= places) digits = '0'.repeat(places - digits.length + 1) + digits;
    digits = `${digits.slice(0, -places)}.${digits.slice(-places)}`;
  }
  return negative ? `-${digits}` : digits;
}

/**
 * formatAmount(fromApi(n), currency), without building a Decimal when the number's text already
 * has no more decimals than the currency (padding is then all toFixed does). The same text, always:
 * anything else goes through decimal.js.
 */
export function formatApiAmount(n: number, currency: string): string {
  const places = minorUnits(currency) ?? 2;
  const v = scaled(n, places);
  return v === undefined ? fromApi(n).toFixed(places) : scaledText(v, places);
}

/** formatAmount(fromApi(a).plus(fromApi(b)), currency), summed exactly in integers of the minor unit when both fit it. */
export function formatApiSum(a: number, b: number, currency: string): string {
  const places = minorUnits(currency) ?? 2;
  const x = scaled(a, places);
  const y = x === undefined ? undefined : scaled(b, places);
  return x === undefined || y === undefined ? fromApi(a).plus(fromApi(b)).toFixed(places) : scaledText(x + y, places);
}

/** Under this many units (30 digits) every partial sum of an ExactSum is exact in decimal.js too. */
const LIMIT = 10n ** 30n;

/**
 * An exact running sum for many terms (100,000 rows' amounts and fees): the terms' own decimal
 * digits summed as one scaled integer (BigInt), instead of a new Decimal per addition. Its value
 * equals the Decimal sum's: while every partial sum has at most 30 significant digits (bounded by
 * the sum of the terms' magnitudes), decimal.js at 40 digits is exact too; past that, or for a term
 * written with an exponent, it carries on in decimal.js from the exact partial sum, as a Decimal
 * sum would have.
 */
export class ExactSum {
  private units = 0n;
  /** Sum of the terms' magnitudes, in the same units: bounds every partial sum's digits. */
  private magnitude = 0n;
  private places = 0;
  private dec: Decimal | undefined;

  /** Adds an API number (as fromApi reads it). */
  addApi(n: number): this {
    return this.addText(String(n));
  }

  /** Adds a Decimal. */
  add(d: Decimal): this {
    if (this.dec) this.dec = this.dec.plus(d);
    else this.addText(d.toFixed());
    return this;
  }

  private addText(text: string): this {
    // String(number) and Decimal.toFixed() write [-]digits[.digits], or use an exponent (e),
    // Infinity or NaN: those three go to decimal.js
    if (this.dec || /[eIN]/.test(text)) {
      this.dec = this.value().plus(new Dec(text));
      return this;
    }
    const dot = text.indexOf('.');
    const decimals = dot === -1 ? 0 : text.length - dot - 1;
    const places = Math.max(this.places, decimals);
    let digits = dot === -1 ? text : text.slice(0, dot) + text.slice(dot + 1);
    if (decimals < places) digits += '0'.repeat(places - decimals);
    const term = BigInt(digits); // signed
    const k = places === this.places ? 1n : 10n ** BigInt(places - this.places);
    const magnitude = (k === 1n ? this.magnitude : this.magnitude * k) + (term < 0n ? -term : term);
    if (magnitude >= LIMIT) {
      // The sum so far is exact (under 30 digits); from here decimal.js rounds as a Decimal sum would.
      this.dec = this.value().plus(new Dec(text));
      return this;
    }
    this.units = (k === 1n ? this.units : this.units * k) + term;
    this.magnitude = magnitude;
    this.places = places;
    return this;
  }

  value(): Decimal {
    return this.dec ?? new Dec(scaledText(this.units, this.places));
  }
}

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

/** An amount as the service wrote it: a JSON number, or a decimal string (read exactly by fromApi). */
export type ApiAmount = number | string;

export const isCurrencyCode = (code: string): boolean => /^[A-Z]{3}$/.test(code) && minorUnits(code) !== undefined;

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

/** 2^53 - 1: integer Numbers up to this are exact, and so is any sum or product of them that stays up to it. */
const SAFE = Number.MAX_SAFE_INTEGER;
/** 10^0 .. 10^22, the powers of ten a double holds exactly (parsed from text: `10 ** k` need not be exact). */
const POW10 = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));

/** Digits (0-9) and '.' as char codes. */
const ZERO = 48;
const DOT = 46;
const MINUS = 45;

/** The decimals of the term parsePlain last read. */
let readDecimals = 0;

/**
 * [-]digits[.digits] (what String(number) and Decimal.toFixed() write when there is no exponent,
 * Infinity or NaN) as the signed integer of all its digits, with its decimals in readDecimals; NaN
 * for anything else. Exact up to 2^53 - 1; past that it may be rounded, but stays past it, and
 * its callers' bound on 2^53 - 1 refuses it. One pass over the characters: no regex, slicing or BigInt.
 */
function parsePlain(text: string): number {
  const length = text.length;
  const negative = text.charCodeAt(0) === MINUS;
  let i = negative ? 1 : 0;
  const first = i;
  let v = 0;
  let dot = -1;
  for (; i < length; i++) {
    const c = text.charCodeAt(i) - ZERO;
    if (c >= 0 && c <= 9) v = v * 10 + c;
    else if (c === DOT - ZERO && dot < 0 && i > first) dot = i;
    else return NaN;
  }
  if (i === first || dot === length - 1) return NaN;
  readDecimals = dot < 0 ? 0 : length - dot - 1;
  return negative ? -v : v;
}

/**
 * An API number as the signed integer of its units of 10^-places, when it has at most `places`
 * decimals, without String(n) (most of the cost of a 100,000-row resume's amounts): r / 10^places
 * is the double nearest the decimal r/10^places, and of the decimals of at most 15 significant
 * digits only that one reads as that double, so it is the value String(n) writes. Undefined for
 * anything else (more decimals, 16 digits or more, NaN, Infinity): the caller reads String(n).
 */
function scaledExactly(n: number, places: number): number | undefined {
  const k = POW10[places];
  if (k === undefined) return undefined;
  const r = Math.round(n * k);
  return r > -1e15 && r < 1e15 && r / k === n ? r : undefined;
}

/** A scaled integer as text with exactly `places` decimals, as Decimal.toFixed(places) writes it. */
function scaledText(v: bigint | number, places: number): string {
  const negative = v < 0;
  let digits = (negative ? -v : v).toString();
  if (places > 0) {
    if (digits.length <= places) digits = '0'.repeat(places - digits.length + 1) + digits;
    digits = `${digits.slice(0, -places)}.${digits.slice(-places)}`;
  }
  return negative ? `-${digits}` : digits;
}

/**
 * formatAmount(fromApi(n), currency), without building a Decimal when the number's text already
 * has no more decimals than the currency: padding with zeros is then all toFixed does. The same
 * text, always: anything else (more decimals, an exponent, NaN, Infinity) goes through decimal.js.
 */
export function formatApiAmount(n: ApiAmount, currency: string): string {
  const places = minorUnits(currency) ?? 2;
  if (typeof n === 'string') return fromApi(n).toFixed(places);
  const scaled = scaledExactly(n, places);
  if (scaled !== undefined) return scaledText(scaled, places);
  const text = String(n);
  const dot = text.indexOf('.');
  const decimals = dot === -1 ? 0 : text.length - dot - 1;
  if (decimals > places || !Number.isFinite(n) || text.indexOf('e') !== -1) return fromApi(n).toFixed(places);
  if (decimals === places) return text;
  return (dot === -1 ? `${text}.` : text) + '0'.repeat(places - decimals);
}

/**
 * formatAmount(fromApi(a).plus(fromApi(b)), currency), summed exactly in integers of the minor unit
 * while both fit it and the terms and the sum stay safe integers; decimal.js (exact for two API
 * numbers at its 40 digits) otherwise.
 */
export function formatApiSum(a: ApiAmount, b: ApiAmount, currency: string): string {
  const places = minorUnits(currency) ?? 2;
  if (typeof a === 'string' || typeof b === 'string') return fromApi(a).plus(fromApi(b)).toFixed(places);
  const sa = scaledExactly(a, places);
  const sb = scaledExactly(b, places);
  if (sa !== undefined && sb !== undefined) return scaledText(sa + sb, places); // each under 10^15: the sum is exact
  const x = parsePlain(String(a));
  const dx = readDecimals;
  const y = parsePlain(String(b));
  const dy = readDecimals;
  if (x === x && y === y && dx <= places && dy <= places) {
    // each product and the sum are exact while the magnitudes' sum is a safe integer
    const sx = x * (POW10[places - dx] ?? Infinity);
    const sy = y * (POW10[places - dy] ?? Infinity);
    if (Math.abs(sx) + Math.abs(sy) <= SAFE) return scaledText(sx + sy, places);
  }
  return fromApi(a).plus(fromApi(b)).toFixed(places);
}

/** Under this many units (30 digits) every partial sum of an ExactSum is exact in decimal.js too. */
const LIMIT = 10n ** 30n;

/**
 * An exact running sum for many terms (100,000 rows' amounts and fees): the terms' own decimal
 * digits summed as one scaled integer, instead of a new Decimal per addition. Its value equals the
 * Decimal sum's: while every partial sum has at most 30 significant digits (bounded by the sum of
 * the terms' magnitudes), decimal.js at 40 digits is exact too; past that, or for a term written
 * with an exponent, it carries on in decimal.js from the exact partial sum, as a Decimal sum would have.
 *
 * The scaled integer is a plain Number while it and the magnitude bound stay within 2^53 - 1 (the
 * usual case: integer additions there are exact, and a BigInt, a string slice and a regex per term
 * cost most of the time on a 100,000-row resume); the first term that could leave that range, or
 * that is not a plain decimal, moves the same state to BigInt and the path below, unchanged. Both
 * paths keep the same units, magnitude and places, so the switch to decimal.js happens at the
 * same term with the same partial sum (2^53 is far under LIMIT). (A term in cents may be kept with
 * two places where its text has fewer: the same value, in units ten times smaller. The sum is exact
 * up to LIMIT whichever places it is kept in, and decimal.js exact below its 40 digits, so where the
 * switch happens never changes the value.)
 */
export class ExactSum {
  /** While true: the sum and its magnitude bound are in `small` and `smallMagnitude` (safe integers). */
  private isSmall = true;
  private small = 0;
  private smallMagnitude = 0;
  private units = 0n;
  /** Sum of the terms' magnitudes, in the same units: bounds every partial sum's digits. */
  private magnitude = 0n;
  private places = 0;
  private dec: Decimal | undefined;

  /** Adds an API amount (as fromApi reads it). */
  addApi(n: ApiAmount): this {
    if (typeof n === 'string') return this.add(fromApi(n));
    if (this.isSmall) {
      // String(n) of a safe integer is its digits, exactly
      if (Number.isSafeInteger(n) && this.addSmall(n, 0)) return this;
      // cents, the usual amount, without String(n)
      const cents = scaledExactly(n, 2);
      if (cents !== undefined && this.addSmall(cents, 2)) return this;
      const text = String(n);
      const v = parsePlain(text);
      if (v === v && this.addSmall(v, readDecimals)) return this;
      return this.toBig().addText(text);
    }
    return this.addText(String(n));
  }

  /** Adds a Decimal. */
  add(d: Decimal): this {
    if (this.dec) {
      this.dec = this.dec.plus(d);
      return this;
    }
    const text = d.toFixed();
    if (this.isSmall) {
      const v = parsePlain(text);
      if (v === v && this.addSmall(v, readDecimals)) return this;
      return this.toBig().addText(text);
    }
    return this.addText(text);
  }

  /**
   * Adds a term of `decimals` decimals, given as the signed integer of its digits, in Numbers, when
   * the new magnitude bound is within 2^53 - 1; false (nothing changed) otherwise. A product or sum
   * of safe integers is exact when the true result is safe, and at least 2^53 when it is not (and so
   * is anything added to it after), so the one check on the computed bound is exact; NaN (0 times a
   * power of ten past the table) fails it too. Every other value is at most the bound: exact.
   */
  private addSmall(term: number, decimals: number): boolean {
    let units = this.small;
    let magnitude = this.smallMagnitude;
    let places = this.places;
    if (decimals > places) {
      const k = POW10[decimals - places] ?? Infinity;
      magnitude *= k;
      units *= k;
      places = decimals;
    } else if (decimals < places) {
      term *= POW10[places - decimals] ?? Infinity;
    }
    magnitude += term < 0 ? -term : term;
    if (!(magnitude <= SAFE)) return false;
    this.small = units + term;
    this.smallMagnitude = magnitude;
    this.places = places;
    return true;
  }

  /** Moves the sum to BigInt for good: its magnitude bound only grows, so it would not fit Numbers again. */
  private toBig(): this {
    this.units = BigInt(this.small);
    this.magnitude = BigInt(this.smallMagnitude);
    this.isSmall = false;
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
    return this.dec ?? new Dec(scaledText(this.isSmall ? BigInt(this.small) : this.units, this.places));
  }
}

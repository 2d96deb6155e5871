// Amounts as exact decimals from what people type ("1,234.56", "1.234,56", "1 234,56", "1'234.56"):
// a reading is taken only when it is the only one; otherwise the problem names the readings.
import { Dec, minorUnits, xsDecimal } from '../money.ts';
import type { ProblemCode } from './problems.ts';
import { plural } from '../text.ts';

export type AmountResult =
  | { ok: true; value: Dec }
  | {
      ok: false;
      code: Extract<ProblemCode, 'INVALID_AMOUNT' | 'AMBIGUOUS_AMOUNT' | 'AMOUNT_PRECISION'>;
      message: string;
      expected: string;
    };

const EXPECTED = 'a positive amount such as 1234.56 (a dot for decimals; "1,234.56" and "1.234,56" are accepted)';
const GROUP_CHARS = new Set([' ', "'", ',', '.']);
const invalid = (message: string) => ({ ok: false, code: 'INVALID_AMOUNT', message, expected: EXPECTED }) as const;
const ambiguous = (message: string, expected: string) => ({ ok: false, code: 'AMBIGUOUS_AMOUNT', message, expected }) as const;

function validGrouping(intPart: string, sep: string): boolean {
  const groups = intPart.split(sep);
  return /^\d{1,3}$/.test(groups[0]!) && groups.slice(1).every((g) => /^\d{3}$/.test(g));
}

/** Reads amount text to a canonical decimal string ("1234.56"), or says why it cannot. */
export function readAmountText(raw: string): { ok: true; text: string; dotMayGroup?: true } | Extract<AmountResult, { ok: false }> {
  let s = raw.trim().replace(/[\u00a0\u202f\u2009]/g, ' ');
  if (s === '') return invalid('the amount is empty');
  if (s.startsWith('-') || (s.startsWith('(') && s.endsWith(')'))) {
    return invalid('the amount is negative; a payout amount must be more than zero');
  }
  if (s.startsWith('+')) s = s.slice(1).trim();
  if (/^\d(\.\d+)?e[+-]?\d+$/i.test(s)) {
    return invalid('the amount is in scientific notation');
  }
  if (/^[.,]\d/.test(s)) s = '0' + s;
  if (!/^\d[\d ,.']*$/.test(s) || !/\d$/.test(s)) {
    return invalid("not a number: only digits and the separators , . space and ' are allowed (no currency symbol)");
  }
  const dots = s.split('.').length - 1;
  const commas = s.split(',').length - 1;
  const spacey = /[ ']/.test(s);
  let decimal: '.' | ',' | undefined;
  if (dots && commas) {
    decimal = s.lastIndexOf('.') > s.lastIndexOf(',') ? '.' : ',';
  } else if (dots === 1) {
    decimal = '.';
  } else if (commas === 1) {
    const [intPart, frac] = s.split(',') as [string, string];
    const bare = intPart.replace(/[ ']/g, '');
    if (!spacey && frac.length === 3 && /^[1-9]\d{0,2}$/.test(bare)) {
      return ambiguous(
        `"${raw.trim()}" reads as ${bare}${frac} (comma groups thousands) or ${bare}.${frac} (comma is the decimal mark)`,
        `${bare}${frac} or ${bare}.${frac}, written without the comma`,
      );
    }
    decimal = ',';
  }
  // with a single kind of separator repeated ("1.234.567", "1,234,567") it groups thousands
  const [intRaw, fracRaw = ''] = decimal ? (s.split(decimal) as [string, string?]) : [s];
  if (decimal && s.split(decimal).length > 2) {
    return invalid(`"${decimal}" appears twice as the decimal mark`);
  }
  if (!/^\d*$/.test(fracRaw)) {
    return invalid('separators after the decimal mark');
  }
  const groupSeps = [...new Set([...intRaw].filter((c) => GROUP_CHARS.has(c)))];
  if (groupSeps.length > 1) return invalid(`digits grouped with both ${groupSeps.map((g) => `"${g}"`).join(' and ')}`);
  if (groupSeps.length === 1 && !validGrouping(intRaw, groupSeps[0]!)) {
    return invalid(`"${raw.trim()}" groups digits irregularly (thousands groups have 3 digits)`);
  }
  const intDigits = groupSeps.length ? intRaw.split(groupSeps[0]!).join('') : intRaw;
  const text = fracRaw ? `${intDigits}.${fracRaw}` : intDigits;
  // "1.500": a lone dot before 3 digits may group thousands (parseAmount decides with the currency)
  const dotMayGroup = decimal === '.' && dots === 1 && !commas && !spacey && fracRaw.length === 3 && /^[1-9]\d{0,2}$/.test(intDigits);
  return dotMayGroup ? { ok: true, text, dotMayGroup } : { ok: true, text };
}

/** A batch's amount cell as a run read it ("1.234,56", "1'234.56", "12,34"), for totals of rows sent; undefined when it reads as none. */
export function amountAsRead(raw: string): Dec | undefined {
  const read = readAmountText(raw);
  return read.ok ? new Dec(read.text) : undefined;
}

/** Positive, within the currency's minor units (if known), at most 15 significant digits: the JSON number sent is exactly this. */
export function parseAmount(raw: string, currency?: string, options: { fromNumber?: boolean; xsDecimal?: boolean } = {}): AmountResult {
  const read = readAmountText(raw);
  if (!read.ok) return read;
  if (options.xsDecimal && !xsDecimal(raw.trim()))
    return { ...invalid(`"${raw.trim()}" is not an ISO 20022 amount`), expected: 'an xs:decimal such as 1234.56: no thousands separator' };
  const value = new Dec(read.text);
  const units = currency ? minorUnits(currency) : undefined;
  // "1.500" in USD: 1500 written the European way, or 1.5? Refused as "1,500" is, unless the
  // currency has 3 decimals (KWD, BHD: 1.500 is 1.5) or the value was a number (Excel's, or pain.001's xs:decimal).
  if (read.dotMayGroup && !options.fromNumber && !(units !== undefined && units >= 3)) {
    const places = units ?? 2;
    // Both readings are named only when both are amounts of the currency: a lone suggestion a
    // thousand times the decimal reading ("100.555" EUR -> 100555.00) would pay 1,000 times the intent.
    if (value.decimalPlaces() > places) return tooManyDecimals('AMBIGUOUS_AMOUNT', `"${raw.trim()}"`, 3, value, currency, places);
    const thousands = read.text.replace('.', '');
    return ambiguous(
      `"${raw.trim()}" reads as ${thousands} (dot groups thousands) or ${value.toFixed()} (dot is the decimal mark)`,
      `${new Dec(thousands).toFixed(places)} or ${value.toFixed(places)}, written without a thousands separator`,
    );
  }
  if (value.isZero()) return invalid('the amount is zero; a payout amount must be more than zero');
  if (value.precision(true) > 15) {
    const message = `the amount has ${value.precision(true)} significant digits; at most 15 can be sent exactly`;
    return { ...invalid(message), expected: 'at most 15 significant digits' };
  }
  if (units !== undefined && value.decimalPlaces() > units)
    return tooManyDecimals('AMOUNT_PRECISION', value.toFixed(), value.decimalPlaces(), value, currency, units);
  return { ok: true, value };
}

/** More decimals than the currency has: the hint rounds either way ("100.555" EUR: 100.56 or 100.55), never shifts by ten. */
function tooManyDecimals(
  code: 'AMBIGUOUS_AMOUNT' | 'AMOUNT_PRECISION',
  shown: string,
  /** the decimals `shown` has as written ("1.500": 3) */
  written: number,
  value: Dec,
  currency: string | undefined,
  places: number,
): Extract<AmountResult, { ok: false }> {
  const name = currency ?? 'the currency';
  const up = value.toDecimalPlaces(places, Dec.ROUND_UP).toFixed(places);
  const down = value.toDecimalPlaces(places, Dec.ROUND_DOWN).toFixed(places);
  return {
    ok: false,
    code,
    message: `${shown} has ${plural(written, 'decimal')}; ${name} has ${places ? places : 'none'}: round it to ${up} or ${down} yourself`,
    expected: `at most ${plural(places, 'decimal')} for ${name}`,
  };
}

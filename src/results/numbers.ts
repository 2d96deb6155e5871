// Numeric result cells. Amounts and rates arrive as exact decimal strings; no arithmetic is done
// on them in binary. An XLSX numeric cell holds a double, so a value becomes one only when the
// double gives back exactly the same decimal (checked with decimal.js, which holds for up to 15
// significant digits); the cell's number format carries the count of decimals, so "1.50" reads
// back as "1.50", not "1.5". Anything else is written as text and read back as text.
import { Dec } from '../money.ts';

/** A canonical plain decimal: no exponent, no plus sign, no leading zeros. */
const PLAIN_DECIMAL = /^-?(0|[1-9]\d*)(\.\d+)?$/;

/** Excel's number formats allow up to 30 decimals. */
const MAX_DECIMALS = 30;

export const isPlainDecimal = (text: string): boolean => PLAIN_DECIMAL.test(text);

/** The numeric XLSX cell for a decimal string, or undefined when it must stay text. */
export function numericCell(text: string): { v: number; z: string } | undefined {
  if (!PLAIN_DECIMAL.test(text)) return undefined;
  const d = new Dec(text);
  if (d.isZero() && text[0] === '-') return undefined; // -0 would come back as 0
  if (d.precision(true) > 15) return undefined;
  const v = Number(text);
  if (!Number.isFinite(v) || !new Dec(String(v)).eq(d)) return undefined;
  const decimals = text.length - 1 - text.indexOf('.');
  const dp = text.includes('.') ? decimals : 0;
  if (dp > MAX_DECIMALS) return undefined;
  return { v, z: dp ? `0.${'0'.repeat(dp)}` : '0' };
}

const FIXED_FORMAT = /^0(?:\.(0+))?$/;

/**
 * The exact decimal text of a numeric cell: the shortest decimal that reads as the double (what
 * was written, for a value numericCell accepted), padded to the decimals of a 0.00-style format.
 */
export function numberText(v: number, z?: string): string {
  const d = new Dec(String(v));
  const m = z === undefined ? null : FIXED_FORMAT.exec(z);
  const formatDp = m ? (m[1]?.length ?? 0) : 0;
  return d.toFixed(Math.max(formatDp, d.decimalPlaces()));
}

// Numeric result cells. Amounts and rates arrive as exact decimal strings; no arithmetic is done
// on them in binary. An XLSX numeric cell holds a double, so a value becomes one only when the
// double gives back exactly the same decimal (checked with decimal.js): a decimal of more than 15
// significant digits, which a double cannot hold exactly, stays a text cell and reads back as
// text. The cell's number format carries the count of decimals, so "1.50" reads back as "1.50",
// not "1.5".
import { atLeastDecimals, Dec, groupThousands } from '../money.ts';

/** A canonical plain decimal: no exponent, no plus sign, no leading zeros. */
const PLAIN_DECIMAL = /^-?(0|[1-9]\d*)(\.\d+)?$/;
/** The same with thousands separators, as SheetJS shows an Excel amount formatted #,##0.00. */
const GROUPED_DECIMAL = /^-?[1-9]\d{0,2}(,\d{3})+(\.\d+)?$/;

/** Excel's number formats allow up to 30 decimals. */
const MAX_DECIMALS = 30;

export const isPlainDecimal = (text: string): boolean => PLAIN_DECIMAL.test(text);

const decimalsOf = (text: string): number => (text.includes('.') ? text.length - 1 - text.indexOf('.') : 0);

/** The number a decimal text stands for when a double holds it exactly, else undefined. */
function exactDouble(text: string): number | undefined {
  const d = new Dec(text);
  if (d.isZero() && text[0] === '-') return undefined; // -0 would come back as 0
  if (d.precision(true) > 15) return undefined;
  const v = Number(text);
  if (!Number.isFinite(v) || !new Dec(String(v)).eq(d)) return undefined;
  return v;
}

/**
 * The numeric XLSX cell for a decimal string, or undefined when it must stay text. A rate's format
 * is 0 with its own decimals (0.0000 for "1.0850"); an amount's (`money`) is a money format with the amount's own decimals (#,##0.00 for
 * "1234.50", #,##0 for "1234"): every amount the service gives is written with its currency's
 * minor units (formatApiAmount), so the sheet shows EUR as #,##0.00, JPY as #,##0, KWD as
 * #,##0.000; a batch cell typed with other decimals ("100" for EUR) keeps its own, so that it
 * reads back as the same text.
 *
 * A batch's amount read from a workbook with thousands separators ("1,234.50") is a number too,
 * written with the format repeated for negatives ("#,##0.00;-#,##0.00"): Excel shows it the same,
 * and the reader (numberText) gives back the separators from it.
 */
export function numberCell(text: string, money: boolean): { t: 'n'; v: number; z: string } | undefined {
  const grouped = money && GROUPED_DECIMAL.test(text);
  if (!grouped && !PLAIN_DECIMAL.test(text)) return undefined;
  const dp = decimalsOf(text);
  if (dp > MAX_DECIMALS) return undefined;
  const v = exactDouble(grouped ? text.replace(/,/g, '') : text);
  if (v === undefined) return undefined;
  const z = `${money ? '#,##0' : '0'}${dp ? `.${'0'.repeat(dp)}` : ''}`;
  return { t: 'n', v, z: grouped ? `${z};-${z}` : z };
}

const FIXED_FORMAT = /^(#,##)?0(?:\.(0+))?$/;

/**
 * The exact decimal text of a numeric cell: the shortest decimal that reads as the double (what
 * was written, for a value numberCell accepted), padded to the decimals of a 0.00
 * or #,##0.00 format, with thousands separators for the format numberCell writes for them.
 */
export function numberText(v: number, z?: string): string {
  const d = new Dec(String(v));
  const sections = z === undefined ? [] : z.split(';');
  const m = sections.length ? FIXED_FORMAT.exec(sections[0]!) : null;
  const formatDp = m ? (m[2]?.length ?? 0) : 0;
  const text = atLeastDecimals(d, formatDp);
  const grouped = m?.[1] !== undefined && sections.length === 2 && sections[1] === `-${sections[0]}`;
  return grouped ? groupThousands(text) : text;
}

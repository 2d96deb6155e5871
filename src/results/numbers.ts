// Numeric result cells: an exact decimal string becomes an XLSX number only when the double gives
// back exactly the same decimal (else it stays text); the number format carries the count of
// decimals, so "1.50" reads back as "1.50".
import { atLeastDecimals, Dec, groupThousands } from '../money.ts';

/** A canonical plain decimal: no exponent, no plus sign, no leading zeros. */
const PLAIN_DECIMAL = /^-?(0|[1-9]\d*)(\.\d+)?$/;
/** The same with thousands separators, as SheetJS shows an Excel amount formatted #,##0.00. */
const GROUPED_DECIMAL = /^-?[1-9]\d{0,2}(,\d{3})+(\.\d+)?$/;

/** Excel's number formats allow up to 30 decimals. */
const MAX_DECIMALS = 30;

export const isPlainDecimal = (text: string): boolean => PLAIN_DECIMAL.test(text);

/**
 * The numeric XLSX cell for a decimal string, or undefined when it must stay text. Its format has
 * the text's own decimals (0.0000 for a rate "1.0850"; #,##0.00 for an amount "1234.50"), so it
 * reads back as the same text; an amount with thousands separators ("1,234.50") gets the format
 * repeated for negatives ("#,##0.00;-#,##0.00"), from which numberText gives them back.
 */
export function numberCell(text: string, money: boolean): { t: 'n'; v: number; z: string } | undefined {
  const grouped = money && GROUPED_DECIMAL.test(text);
  if (!grouped && !PLAIN_DECIMAL.test(text)) return undefined;
  const dp = text.includes('.') ? text.length - 1 - text.indexOf('.') : 0;
  if (dp > MAX_DECIMALS) return undefined;
  // only when a double holds the decimal exactly (-0 would come back as 0)
  const plain = grouped ? text.replace(/,/g, '') : text;
  const d = new Dec(plain);
  const v = Number(plain);
  if ((d.isZero() && plain[0] === '-') || d.precision(true) > 15 || !Number.isFinite(v) || !new Dec(String(v)).eq(d)) return undefined;
  const z = `${money ? '#,##0' : '0'}${dp ? `.${'0'.repeat(dp)}` : ''}`;
  return { t: 'n', v, z: grouped ? `${z};-${z}` : z };
}

const FIXED_FORMAT = /^(#,##)?0(?:\.(0+))?$/;

/** The exact decimal text of a numeric cell: the shortest decimal of the double, padded to its format's decimals. */
export function numberText(v: number, z?: string): string {
  const sections = z === undefined ? [] : z.split(';');
  const m = sections.length ? FIXED_FORMAT.exec(sections[0]!) : null;
  const text = atLeastDecimals(new Dec(String(v)), m ? (m[2]?.length ?? 0) : 0);
  const grouped = m?.[1] !== undefined && sections.length === 2 && sections[1] === `-${sections[0]}`;
  return grouped ? groupThousands(text) : text;
}

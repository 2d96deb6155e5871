import { groupThousands } from './money.ts';

/** 3 -> "3 rows", 1 -> "1 row", 12000 -> "12,000 rows". */
export const plural = (n: number, word: string) => `${groupThousands(String(n))} ${word}${n === 1 ? '' : 's'}`;

/**
 * What a terminal or a reader would not show as written: C0 and C1 controls, DEL, and the invisible
 * or direction-changing format characters (ESC starts a terminal command; U+202E turns the text
 * after it around). `\t\n\r` are the first three, so a results file can leave them out.
 */
const HIDDEN =
  '\\t\\n\\r\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f\\u061c\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u2069\\ufeff';
const HIDDEN_ALL = new RegExp(`[${HIDDEN}]`, 'g');
/** The same without tab, line feed and carriage return, which a cell may hold. */
export const HIDDEN_IN_CELLS = HIDDEN.slice('\\t\\n\\r'.length);

/**
 * JSON with keys sorted at every level, no whitespace and no undefined (an undefined array item is
 * null): one text for one value, so that equal values sign, digest and compare the same.
 */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJson(x === undefined ? null : x)).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(',')}}`;
}

/** A character as its escape, visibly: ESC -> "\u001B". */
export const escapeCharacter = (c: string) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

/** A text from a file or the service, fit for one line on a terminal: each hidden character as its escape. */
export const visible = (s: string) => s.replace(HIDDEN_ALL, escapeCharacter);

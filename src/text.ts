import { createRequire } from 'node:module';
import { groupThousands } from './money.ts';

const requireCjs = createRequire(import.meta.url);
let homoglyphs: ((text: string) => string) | undefined;
/** Unicode TR39's confusable skeleton (unhomoglyph), loaded when first asked for, not bundled: only screening and approvers' names need its 118 KB table, which it makes a regex of as it loads. */
export const unhomoglyph = (text: string): string => (homoglyphs ??= requireCjs('unhomoglyph') as (text: string) => string)(text);

/** 3 -> "3 rows", 1 -> "1 row", 12000 -> "12,000 rows", 2 -> "2 batches". */
export const plural = (n: number, word: string) =>
  `${groupThousands(String(n))} ${word}${n === 1 ? '' : /(s|x|ch|sh)$/.test(word) ? 'es' : 's'}`;

const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const;

/** Code-unit order, as `.sort()` has it; never `localeCompare`, whose order is the host's LANG's (cs_CZ sorts CHF after HKD). */
export const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** An ISO 8601 date (its UTC midnight), or time naming its zone (Z, +02:00), in ms; else undefined: never read in the host's zone. */
export function zonedTime(text: string | undefined): number | undefined {
  const t = /^\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d))?$/.test(text ?? '') ? Date.parse(text!) : NaN;
  return Number.isNaN(t) ? undefined : t;
}

/** A time another side wrote (the service's createdAt, a workbook's cell): one naming no zone is UTC, never the host's. */
export function utcTime(text: string | undefined): number | undefined {
  const zoneless = /^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d([.,]\d+)?)?$/.test(text ?? '');
  const t = Date.parse(zoneless ? `${text}Z` : (text ?? ''));
  return Number.isNaN(t) ? undefined : t;
}

/** "30m", "24h", "7d" in milliseconds; undefined when it is not one. */
export function durationMs(text: string): number | undefined {
  const m = /^\s*(\d+)\s*([dhm])\s*$/i.exec(text);
  return m ? Number(m[1]) * UNIT_MS[m[2]!.toLowerCase() as keyof typeof UNIT_MS] : undefined;
}

/** "7d", "12h", "90m", never 0 */
export function parseDuration(text: string): number {
  const ms = durationMs(text);
  if (!ms) throw new RangeError(`${text}: write a duration such as 7d, 12h or 90m`);
  return ms;
}

/** The shortest of those for `ms`. */
export const durationText = (ms: number): string =>
  ms % UNIT_MS.d === 0 ? `${ms / UNIT_MS.d}d` : ms % UNIT_MS.h === 0 ? `${ms / UNIT_MS.h}h` : `${ms / UNIT_MS.m}m`;

/** C0 and C1 controls, DEL, invisible and direction-changing characters; `\t\n\r` first, so cells can leave them out. */
const HIDDEN =
  '\\t\\n\\r\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f\\u061c\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u2069\\ufeff';
const HIDDEN_ALL = new RegExp(`[${HIDDEN}]`, 'g');
export const HIDDEN_IN_CELLS = HIDDEN.slice('\\t\\n\\r'.length);

/** Keys sorted at every level, no whitespace, no undefined: equal values sign, digest and compare the same. */
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

/** ESC -> "\u001B". */
export const escapeCharacter = (c: string) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * One word a POSIX shell reads back as itself, for a command we suggest: as is when every character is plainly inert, else in
 * single quotes (a `'` as `'\''`). `=` is not among them: zsh expands a word that begins with it.
 */
export const shellWord = (x: string): string => (/^[\w@%+:,./-]+$/.test(x) ? x : `'${x.replaceAll("'", `'\\''`)}'`);

/** Fit for one line on a terminal. */
export const visible = (s: string) => s.replace(HIDDEN_ALL, escapeCharacter);

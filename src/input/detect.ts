// Telling what a file is from its first bytes: Excel or text, which text encoding, which delimiter.
import iconv from 'iconv-lite';
import { attempt } from '../files/attempt.ts';

const startsWith = (buf: Uint8Array, bytes: number[]) => bytes.every((b, i) => buf[i] === b);

/** By content, never by name alone: a .csv that is really a workbook is read as one. */
export function sniffKind(head: Uint8Array): 'xlsx' | 'xls' | 'csv' | 'binary' {
  if (startsWith(head, [0x50, 0x4b, 0x03, 0x04])) return 'xlsx'; // zip container (xlsx)
  if (startsWith(head, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) return 'xls'; // OLE2 (BIFF .xls)
  if (bomEncoding(head) || utf16WithoutBom(head)) return 'csv';
  // Text has no NUL bytes and few control characters besides tab, CR, LF, form feed and ESC.
  const n = Math.min(head.length, 8192);
  let control = 0;
  for (let i = 0; i < n; i++) {
    const b = head[i]!;
    if (b === 0) return 'binary';
    if (b < 0x20 && b !== 9 && b !== 10 && b !== 13 && b !== 12 && b !== 27) control++;
  }
  return n > 0 && control / n > 0.02 ? 'binary' : 'csv';
}

/** The encodings we read, under the names iconv-lite uses. */
export type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252' | 'windows-1250' | 'windows-1251' | 'macintosh';

function bomEncoding(head: Uint8Array): { encoding: TextEncoding; bomBytes: number } | undefined {
  if (startsWith(head, [0xef, 0xbb, 0xbf])) return { encoding: 'utf-8', bomBytes: 3 };
  if (startsWith(head, [0xff, 0xfe])) return { encoding: 'utf-16le', bomBytes: 2 };
  if (startsWith(head, [0xfe, 0xff])) return { encoding: 'utf-16be', bomBytes: 2 };
  return undefined;
}

/** UTF-16 text without a BOM: ASCII characters leave every other byte NUL. */
function utf16WithoutBom(head: Uint8Array): TextEncoding | undefined {
  const n = Math.min(head.length, 4096) & ~1;
  if (n < 8) return undefined;
  let evenZero = 0;
  let oddZero = 0;
  for (let i = 0; i < n; i += 2) {
    if (head[i] === 0) evenZero++;
    if (head[i + 1] === 0) oddZero++;
  }
  const half = n / 2;
  if (oddZero > half * 0.6 && evenZero === 0) return 'utf-16le';
  if (evenZero > half * 0.6 && oddZero === 0) return 'utf-16be';
  return undefined;
}

/** How detectEncoding says it guessed Windows-1252: text of another code page read so is refused (misreadCodePage). */
export const GUESSED_1252 = 'not valid UTF-8';

/** A BOM, else UTF-16 by its NUL pattern, else UTF-8 if valid, else Windows-1252 (Excel's western "CSV"); a later bad byte is U+FFFD. */
export function detectEncoding(head: Uint8Array): { encoding: TextEncoding; bomBytes: number; detectedBy: string } {
  const bom = bomEncoding(head);
  if (bom) return { ...bom, detectedBy: 'byte order mark' };
  const u16 = utf16WithoutBom(head);
  if (u16) return { encoding: u16, bomBytes: 0, detectedBy: 'NUL byte pattern' };
  // a multi-byte sequence cut at the end of the sample is allowed (`stream`)
  if (attempt(() => new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true })) !== undefined)
    return { encoding: 'utf-8', bomBytes: 0, detectedBy: 'valid UTF-8' };
  return { encoding: 'windows-1252', bomBytes: 0, detectedBy: GUESSED_1252 };
}

/** The --encoding names of each encoding we read, lower case, letters and digits only. */
const ENCODING_NAMES: Record<TextEncoding, string[]> = {
  'utf-8': ['utf8'],
  'utf-16le': ['utf16le', 'utf16', 'ucs2', 'unicode'],
  'utf-16be': ['utf16be'],
  'windows-1252': ['windows1252', 'cp1252', 'win1252', 'latin1', 'iso88591', 'ansi'],
  'windows-1250': ['windows1250', 'cp1250', 'win1250'],
  'windows-1251': ['windows1251', 'cp1251', 'win1251'],
  macintosh: ['macintosh', 'mac', 'macroman'],
};

export const TEXT_ENCODINGS = Object.keys(ENCODING_NAMES) as TextEncoding[];

/** --encoding value → our name; undefined when not one we read. latin1 reads as Windows-1252, its superset. */
export function parseEncodingName(name: string): TextEncoding | undefined {
  const n = name.toLowerCase().replace(/[^a-z0-9]/g, '');
  return TEXT_ENCODINGS.find((e) => ENCODING_NAMES[e].includes(n));
}

/** Windows-1252's symbols that Mac Roman, Windows-1250 or -1251 use for letters ("Zo‘", "£ukasz"), as NBSP, °, ², · and « » are not. */
const SYMBOL = '[€‚„…†‡ˆ‰‹‘’“”•–—˜™›¡¢£¤¥¦§¨©ª¬®¯±³´¶¸¹º¼½¾¿]';
/** Their Western uses beside letters: O’Brien (or O´Brien), Jan–Q4, Mª José, nº 5, “Acme” Ltd, ‘Zoë’, Acme™, etc…, ¿Qué? */
const WESTERN = /(?<=\p{L})[’´](?=\p{L})|[–—](?!\p{Ll})|(?<=(?:^|\P{L})\p{L})[ªº](?!\p{L})|(?<!\p{L})[“„‘‹¿¡]|[”“’›…™®©](?!\p{L})/gu;
const MISREAD = new RegExp(`\\p{L}${SYMBOL}|${SYMBOL}\\p{L}|\\p{Ll}[ŠŒŽŸ]|Ÿ\\p{Ll}|(?<!\\p{L})[\\u00C0-\\u00FF]{3,}(?!\\p{L})`, 'u');

/** Text that reads like Mac Roman, Windows-1250 or -1251 read as Windows-1252: a symbol in a word ("Zo‘"), a capital after a
 * small letter ("JosŽ", Mac Roman's é), or a word of À-ÿ only ("Èâàí", Cyrillic). */
export const misreadCodePage = (text: string): boolean => MISREAD.test(text.replace(WESTERN, ' '));

export const DELIMITERS = [',', ';', '\t', '|'] as const;
export type Delimiter = (typeof DELIMITERS)[number];

/** Each candidate delimiter counted outside quotes, per line, over the first 50 lines (the last, maybe cut, left out). */
function delimitersPerLine(sample: string): Partial<Record<Delimiter, number>>[] {
  const lines: Partial<Record<Delimiter, number>>[] = [{}];
  for (const [token] of sample.matchAll(/"[^"]*(?:"|$)|\r\n?|\n|[,;\t|]/g)) {
    const line = lines.at(-1)!;
    if (token === '\n' || token[0] === '\r') {
      if (lines.push({}) > 50) break;
    } else if (token[0] !== '"') line[token as Delimiter] = (line[token as Delimiter] ?? 0) + 1;
  }
  return lines.length > 1 ? lines.slice(0, -1) : lines;
}

/**
 * The candidate of the header line (the first with any) that splits the most following lines into as many cells; ties
 * go to more header cells, then to the order , ; tab |. A header with none is one column: ",".
 */
export function detectDelimiter(sample: string): Delimiter {
  const lines = delimitersPerLine(sample);
  // blank lines above the header are skipped (records.ts), never read as the header
  const first = lines.findIndex((l) => Object.keys(l).length > 0);
  if (first > 0) lines.splice(0, first);
  let best = { d: ',' as Delimiter, score: -1, header: 0 };
  for (const d of DELIMITERS) {
    const header = lines[0]![d] ?? 0;
    const rest = lines.slice(1).flatMap((l) => l[d] ?? []);
    const score = rest.length === 0 ? 0 : rest.filter((c) => c === header).length / rest.length;
    if (header > 0 && (score > best.score || (score === best.score && header > best.header))) best = { d, score, header };
  }
  return best.d;
}

/** Excel's "sep=;" first line names the delimiter and is not part of the table. */
export function sepLine(sample: string): Delimiter | undefined {
  const m = /^sep=(.)\r?\n/i.exec(sample);
  return m && (DELIMITERS as readonly string[]).includes(m[1]!) ? (m[1] as Delimiter) : undefined;
}

/** The UTF-8 text that `s` is when read as Windows-1252 (a non-UTF-8 file's guess: "MÃ¼ller" is "Müller"), else undefined. */
export function utf8ReadAs1252(s: string): string | undefined {
  // a lead byte of a 2-, 3- or 4-byte sequence but "ß" (a word's end before a no-break space is valid UTF-8)
  if (!/[\u00C2-\u00DE\u00E0-\u00F4]/.test(s)) return undefined;
  const bytes = iconv.encode(s, 'windows-1252');
  if (iconv.decode(bytes, 'windows-1252') !== s) return undefined; // not all Windows-1252
  return attempt(() => new TextDecoder('utf-8', { fatal: true }).decode(bytes));
}

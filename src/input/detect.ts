// Telling what a file is from its first bytes: Excel or text, which text encoding, which delimiter.

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
export type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';

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

/** Is this byte prefix valid UTF-8? A multi-byte sequence cut at the end of the sample is allowed (`stream`). */
function isValidUtf8Prefix(buf: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(buf, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/**
 * The encoding of a text file from its first bytes: a BOM decides; otherwise UTF-16 by its NUL
 * pattern; otherwise UTF-8 when the sample is valid UTF-8, else Windows-1252 (what Excel on
 * Windows writes for "CSV" in western locales). The sample is the first 1 MiB; a later invalid
 * byte shows up as U+FFFD in a cell, which validation reports.
 */
export function detectEncoding(head: Uint8Array): { encoding: TextEncoding; bomBytes: number; detectedBy: string } {
  const bom = bomEncoding(head);
  if (bom) return { ...bom, detectedBy: 'byte order mark' };
  const u16 = utf16WithoutBom(head);
  if (u16) return { encoding: u16, bomBytes: 0, detectedBy: 'NUL byte pattern' };
  if (isValidUtf8Prefix(head)) return { encoding: 'utf-8', bomBytes: 0, detectedBy: 'valid UTF-8' };
  return { encoding: 'windows-1252', bomBytes: 0, detectedBy: 'not valid UTF-8' };
}

const ENCODING_NAMES: Record<string, TextEncoding> = {
  utf8: 'utf-8',
  utf16le: 'utf-16le',
  utf16be: 'utf-16be',
  utf16: 'utf-16le',
  ucs2: 'utf-16le',
  unicode: 'utf-16le',
  windows1252: 'windows-1252',
  cp1252: 'windows-1252',
  win1252: 'windows-1252',
  latin1: 'windows-1252',
  iso88591: 'windows-1252',
  ansi: 'windows-1252',
};

/** --encoding value → our name; undefined when not one we read. latin1 reads as Windows-1252, its superset. */
export function parseEncodingName(name: string): TextEncoding | undefined {
  const n = name.toLowerCase().replace(/[^a-z0-9]/g, '');
  return Object.hasOwn(ENCODING_NAMES, n) ? ENCODING_NAMES[n] : undefined;
}

export const DELIMITERS = [',', ';', '\t', '|'] as const;
export type Delimiter = (typeof DELIMITERS)[number];

/** Counts each candidate delimiter outside double quotes, per line, over the first lines. */
function countsPerLine(text: string, maxLines: number): Map<Delimiter, number[]> {
  const counts = new Map<Delimiter, number[]>(DELIMITERS.map((d) => [d, [0]]));
  let inQuotes = false;
  let lines = 0;
  for (let i = 0; i < text.length && lines < maxLines; i++) {
    const c = text[i]!;
    if (c === '"') inQuotes = !inQuotes;
    else if (!inQuotes && (c === '\n' || c === '\r')) {
      if (c === '\r' && text[i + 1] === '\n') i++;
      lines++;
      for (const arr of counts.values()) arr.push(0);
    } else if (!inQuotes && (DELIMITERS as readonly string[]).includes(c)) {
      const arr = counts.get(c as Delimiter)!;
      arr[arr.length - 1]!++;
    }
  }
  return counts;
}

/**
 * The delimiter of a CSV from its first lines: the candidate found in the header line that splits
 * the most following lines into the same number of cells; ties go to the one with more cells in
 * the header, then to the order , ; tab |. A header with none of them is a one-column file: ",".
 */
export function detectDelimiter(sample: string): Delimiter {
  const counts = countsPerLine(sample, 50);
  let best: Delimiter = ',';
  let bestScore = -1;
  let bestHeader = 0;
  for (const d of DELIMITERS) {
    const perLine = counts.get(d)!;
    // the last line of the sample may be cut short: ignore it
    const lines = perLine.length > 1 ? perLine.slice(0, -1) : perLine;
    const header = lines[0] ?? 0;
    if (header === 0) continue;
    const rest = lines.slice(1).filter((c) => c > 0);
    const consistent = rest.filter((c) => c === header).length;
    const score = rest.length === 0 ? 0 : consistent / rest.length;
    if (score > bestScore || (score === bestScore && header > bestHeader)) {
      best = d;
      bestScore = score;
      bestHeader = header;
    }
  }
  return best;
}

/** Excel's "sep=;" first line names the delimiter and is not part of the table. */
export function sepLine(sample: string): Delimiter | undefined {
  const m = /^sep=(.)\r?\n/i.exec(sample);
  return m && (DELIMITERS as readonly string[]).includes(m[1]!) ? (m[1] as Delimiter) : undefined;
}

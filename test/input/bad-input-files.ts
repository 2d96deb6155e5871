// The malformed batch files of the bad-input campaign (test/input/bad-input-campaign.e2e.test.ts),
// generated into a folder: nothing large is committed. Each case says what a user would have done
// to get such a file, and what payout-batch must answer: the exit code and the InputError code
// (file-level cases) or the row problem (cases where every row is refused offline).
import { deflateRawSync, crc32, constants as zconst } from 'node:zlib';
import { mkdirSync, writeFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import * as XLSX from 'xlsx';
import { HEADER, generateCsv } from '../engine/helpers.ts';

export interface BadCase {
  /** File name inside the campaign folder (what the CLI is given). */
  name: string;
  /** What it stands for. */
  what: string;
  /** Exit code of both `validate` and `run` (README "Exit codes"). */
  exit: 1 | 2;
  /** The InputError code on stderr (exit 2), or a problem code in validate's output (exit 1). */
  code: string;
  /** Run with NODE_OPTIONS=--max-old-space-size=256 (the big ones). */
  big?: boolean;
  /** The message is about a flag, not the file (an unknown --encoding): it need not name the file. */
  flagOnly?: boolean;
  /** Extra CLI arguments (both commands). */
  args?: string[];
  /** What the one stderr line must say besides the file and code (file-level cases). */
  message?: RegExp;
  write(path: string): void;
}

const MB = 1024 * 1024;
/** A valid batch of n rows, as text. */
const valid = (n = 3, prefix = 'BAD') => generateCsv({ rows: n, prefix });
/** valid(n) as a sheet's rows of cells. */
const validCells = (n = 3) =>
  valid(n)
    .trimEnd()
    .split('\n')
    .map((l) => l.split(','));
const col = (name: string) => HEADER.indexOf(name);
const text = (s: string | Buffer) => (path: string) => writeFileSync(path, s);

/** Valid rows with one column of every row replaced (row-level problems on every row). */
function everyRow(column: string, value: (i: number) => string, n = 3): string {
  const lines = valid(n).trimEnd().split('\n');
  return (
    lines
      .map((l, i) => {
        if (i === 0) return l;
        const c = l.split(',');
        c[col(column)] = value(i);
        return c.join(',');
      })
      .join('\n') + '\n'
  );
}

/** A tiny zip writer (stored or deflated entries), enough for fake and hostile workbooks. */
export interface ZipEntry {
  name: string;
  data: Buffer;
  deflated?: Buffer;
  crc?: number;
  size?: number;
}
export function zip(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const body = e.deflated ?? deflateRawSync(e.data);
    const crc = e.crc ?? crc32(e.data);
    const size = e.size ?? e.data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0, 6);
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt32LE(0, 10);
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, name, body);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(0, 12);
    central.writeUInt32LE(crc >>> 0, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += 30 + name.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

const xml = (s: string) => Buffer.from(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n${s}`);
/** The parts of a minimal workbook around one sheet's XML. */
function workbookParts(sheet: ZipEntry): ZipEntry[] {
  return [
    {
      name: '[Content_Types].xml',
      data: xml(
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>',
      ),
    },
    {
      name: '_rels/.rels',
      data: xml(
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>',
      ),
    },
    {
      name: 'xl/workbook.xml',
      data: xml(
        '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>',
      ),
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      data: xml(
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
      ),
    },
    sheet,
  ];
}

const escapeXml = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
/**
 * A workbook of text cells whose sheet declares the range `dimension` (Excel writes the used
 * range there; a broken or hostile file may claim all of A1:XFD1048576, 17 billion cells).
 */
export function xlsxWithDimension(rows: string[][], dimension: string): Buffer {
  const body = rows
    .map(
      (cells, r) =>
        `<row r="${r + 1}">${cells
          .map((v, c) => (v === '' ? '' : `<c r="${XLSX.utils.encode_cell({ r, c })}" t="inlineStr"><is><t>${escapeXml(v)}</t></is></c>`))
          .join('')}</row>`,
    )
    .join('');
  const sheet = xml(
    `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="${dimension}"/><sheetData>${body}</sheetData></worksheet>`,
  );
  return zip(workbookParts({ name: 'xl/worksheets/sheet1.xml', data: sheet }));
}

/** A workbook written by SheetJS from an array of rows. */
function xlsxOf(rows: string[][]): Buffer {
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(rows), 'Sheet1');
  return XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer;
}

/** Streams `total` bytes of `unit` repeated (for the 50 MB line), without holding them. */
function writeRepeated(path: string, prefix: string, unit: string, total: number, suffix: string): void {
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, prefix);
    const chunk = Buffer.from(unit.repeat(Math.ceil(MB / unit.length)));
    for (let written = 0; written < total; written += chunk.length) writeSync(fd, chunk);
    writeSync(fd, suffix);
  } finally {
    closeSync(fd);
  }
}

const header = HEADER.join(',');
const rowsOnly = valid(3).split('\n').slice(1).join('\n');

export const BAD_CASES: BadCase[] = [
  // ---- nothing to read
  { name: 'empty.csv', what: 'an empty file (0 bytes)', exit: 2, code: 'EMPTY_FILE', write: text('') },
  { name: 'bom-only.csv', what: 'a UTF-8 byte order mark and nothing else', exit: 2, code: 'EMPTY_FILE', write: text('\uFEFF') },
  { name: 'blank-lines.csv', what: 'only blank lines', exit: 2, code: 'EMPTY_FILE', write: text('\r\n\r\n\n\n') },
  {
    name: 'delimiters-only.csv',
    what: 'only delimiters: a header of empty cells',
    exit: 2,
    code: 'EMPTY_FILE',
    write: text(',,,,,,\n,,,,,,\n'),
  },
  { name: 'header-only.csv', what: 'the header row and no row', exit: 2, code: 'EMPTY_FILE', write: text(header + '\n') },
  {
    name: 'header-only-crlf-bom.csv',
    what: 'a BOM, the header and CRLF, no row',
    exit: 2,
    code: 'EMPTY_FILE',
    write: text('\uFEFF' + HEADER.join(',') + '\r\n'),
  },
  {
    name: 'header-only.xlsx',
    what: 'a workbook whose sheet has the header only',
    exit: 2,
    code: 'EMPTY_FILE',
    write: (p) => writeFileSync(p, xlsxOf([HEADER])),
  },
  {
    name: 'empty-sheet.xlsx',
    what: 'a workbook with one empty sheet',
    exit: 2,
    code: 'EMPTY_FILE',
    write: (p) => writeFileSync(p, xlsxOf([])),
  },
  // ---- truncated
  {
    name: 'truncated-in-quotes.csv',
    what: 'cut off inside a quoted cell (a copy interrupted)',
    exit: 2,
    code: 'MALFORMED_CSV',
    write: text(valid(5).replace(/\n$/, '') + '\nBAD-9999,12.00,USD,USD,USA,ACH,"Jane Do'),
  },
  {
    name: 'truncated-header.csv',
    what: 'cut off inside the header row',
    exit: 2,
    code: 'MISSING_COLUMNS',
    write: text(header.slice(0, 40)),
  },
  {
    name: 'truncated.xlsx',
    what: 'a workbook cut in half',
    exit: 2,
    code: 'UNSUPPORTED_FORMAT',
    write: (p) => {
      const b = xlsxOf(validCells(20));
      writeFileSync(p, b.subarray(0, b.length >> 1));
    },
  },
  {
    name: 'truncated-zip-header.xlsx',
    what: 'only the first bytes of a workbook',
    exit: 2,
    code: 'UNSUPPORTED_FORMAT',
    write: (p) => writeFileSync(p, xlsxOf([HEADER]).subarray(0, 64)),
  },
  // ---- binary, or not a batch at all
  {
    name: 'random.csv',
    what: 'random bytes',
    exit: 2,
    code: 'UNSUPPORTED_FORMAT',
    write: (p) => {
      let x = 12345;
      const b = Buffer.alloc(64 * 1024);
      for (let i = 0; i < b.length; i++) {
        x = (x * 1103515245 + 12345) >>> 0;
        b[i] = x >>> 24;
      }
      writeFileSync(p, b);
    },
  },
  {
    name: 'image.csv',
    what: 'a PNG image named .csv',
    exit: 2,
    code: 'UNSUPPORTED_FORMAT',
    write: (p) =>
      writeFileSync(
        p,
        Buffer.concat([
          Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
          Buffer.from('IHDR'),
          Buffer.alloc(2000, 0),
        ]),
      ),
  },
  {
    name: 'gzipped.csv',
    what: 'a gzip-compressed CSV named .csv',
    exit: 2,
    code: 'UNSUPPORTED_FORMAT',
    write: (p) =>
      writeFileSync(p, Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]), deflateRawSync(Buffer.from(valid(50)))])),
  },
  {
    name: 'nul-in-header.csv',
    what: 'a header with NUL bytes in it',
    exit: 2,
    code: 'UNSUPPORTED_FORMAT',
    write: text(header.replace('sourceAmount', 'source\0Amount\0\0') + '\n' + rowsOnly),
  },
  {
    name: 'not-a-workbook.zip.xlsx',
    what: 'a zip archive of a text file named .xlsx',
    exit: 2,
    code: 'UNSUPPORTED_FORMAT',
    write: (p) => writeFileSync(p, zip([{ name: 'readme.txt', data: Buffer.from('hello') }])),
  },
  {
    name: 'bad-ole.xls',
    what: 'an OLE2 (.xls) signature and then garbage',
    exit: 2,
    code: 'UNSUPPORTED_FORMAT',
    write: (p) =>
      writeFileSync(p, Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(1024, 0xab)])),
  },
  { name: 'renamed-csv.xlsx', what: 'a CSV renamed .xlsx', exit: 2, code: 'UNSUPPORTED_FORMAT', write: text(valid(3)) },
  {
    name: 'html-export.xls',
    what: 'an HTML table saved as .xls (a web export)',
    exit: 2,
    code: 'UNSUPPORTED_FORMAT',
    write: text(`<html><body><table><tr>${HEADER.map((h) => `<td>${h}</td>`).join('')}</tr></table></body></html>\n`),
  },
  {
    name: 'json.csv',
    what: 'a JSON document named .csv',
    exit: 2,
    code: 'NO_HEADER',
    write: text(JSON.stringify([{ reference: 'A', sourceAmount: '1.00' }], null, 2) + '\n'),
  },
  { name: 'folder.csv', what: 'a folder named .csv', exit: 2, code: 'UNREADABLE', write: (p) => mkdirSync(p) },
  { name: 'missing.csv', what: 'a file that does not exist', exit: 2, code: 'FILE_NOT_FOUND', write: () => undefined },
  // ---- delimiters and columns
  {
    name: 'colon-delimited.csv',
    what: 'a delimiter we do not read (:)',
    exit: 2,
    code: 'NO_HEADER',
    write: text(valid(3).replaceAll(',', ':')),
  },
  {
    name: 'wrong-sep-line.csv',
    what: 'an Excel "sep=;" line over a comma-separated file',
    exit: 2,
    code: 'NO_HEADER',
    write: text('sep=;\n' + valid(3)),
  },
  {
    name: 'missing-narration.csv',
    what: 'a required column missing (narration)',
    exit: 2,
    code: 'MISSING_COLUMNS',
    write: text(
      valid(3)
        .split('\n')
        .map((l) =>
          l
            .split(',')
            .filter((_, i) => i !== col('narration'))
            .join(','),
        )
        .join('\n'),
    ),
  },
  {
    name: 'unknown-headers.csv',
    what: 'a header of names we do not know',
    exit: 2,
    code: 'NO_HEADER',
    write: text('Kolonne1,Kolonne2,Kolonne3\n1,2,3\n'),
  },
  {
    name: 'duplicate-headers-alias.csv',
    what: 'two aliases of one field and no exact name (Amount, Net Pay)',
    exit: 2,
    code: 'DUPLICATE_COLUMNS',
    write: text(
      valid(3)
        .split('\n')
        .map((l, i) => (i === 0 ? l.replace('sourceAmount', 'Amount') + ',Net Pay' : l ? l + ',1.00' : l))
        .join('\n'),
    ),
  },
  {
    name: 'duplicate-headers-ref.csv',
    what: 'two aliases of reference and no exact name (Ref, Payment Reference)',
    exit: 2,
    code: 'DUPLICATE_COLUMNS',
    write: text(
      valid(3)
        .split('\n')
        .map((l, i) => (i === 0 ? l.replace('reference', 'Ref') + ',Payment Reference' : l ? l + ',P-1' : l))
        .join('\n'),
    ),
  },
  {
    name: 'duplicate-headers-exact.csv',
    what: 'the same header twice (reference, ..., reference)',
    exit: 2,
    code: 'DUPLICATE_COLUMNS',
    message: /"reference" \(column 1\) and "reference" \(column 33\) both name reference/,
    write: text(
      valid(3)
        .split('\n')
        .map((l, i) => (i === 0 ? l + ',reference' : l ? l + ',P-1' : l))
        .join('\n'),
    ),
  },
  {
    name: 'ten-thousand-aliases.csv',
    what: '10,000 columns, all aliases of the amount (Amount, Net Pay, ...) and no exact name',
    exit: 2,
    code: 'DUPLICATE_COLUMNS',
    big: true,
    write: text(
      valid(3)
        .split('\n')
        .map((l, i) =>
          i === 0
            ? l.replace('sourceAmount', 'Amount') +
              ',Net Pay,Send Amount,Payment Amount,Debit Amount'.repeat(2500).slice(0, -'Debit Amount'.length - 1)
            : l
              ? l + ',1.00'.repeat(9_999)
              : l,
        )
        .join('\n'),
    ),
  },
  {
    name: 'ten-thousand-columns.csv',
    what: '10,000 columns, none of them ours',
    exit: 2,
    code: 'NO_HEADER',
    big: true,
    write: text(
      Array.from({ length: 10_000 }, (_, i) => `c${i}`).join(',') +
        '\n' +
        Array.from({ length: 10_000 }, (_, i) => String(i)).join(',') +
        '\n',
    ),
  },
  // ---- encodings
  {
    name: 'utf16-bom-utf8-body.csv',
    what: 'a UTF-16 LE byte order mark over UTF-8 text',
    exit: 2,
    code: 'NO_HEADER',
    write: (p) => writeFileSync(p, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(valid(3))])),
  },
  {
    name: 'utf16be-bom-le-body.csv',
    what: 'a UTF-16 BE byte order mark over UTF-16 LE text',
    exit: 2,
    code: 'NO_HEADER',
    write: (p) => writeFileSync(p, Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(valid(3), 'utf16le')])),
  },
  {
    name: 'unknown-encoding.csv',
    what: '--encoding of an encoding we do not read (EBCDIC)',
    exit: 2,
    code: 'ENCODING',
    flagOnly: true,
    args: ['--encoding', 'ebcdic'],
    write: text(valid(3)),
  },
  {
    name: 'encoding-on-xlsx.xlsx',
    what: '--encoding given for a workbook',
    exit: 2,
    code: 'ENCODING',
    args: ['--encoding', 'utf-8'],
    write: (p) => writeFileSync(p, xlsxOf([HEADER])),
  },
  {
    name: 'mixed-encodings.csv',
    what: 'a UTF-8 file (BOM) whose rows were pasted from a Windows-1252 file (names with é in every row)',
    exit: 1,
    code: 'ENCODING',
    write: (p) => {
      const [head, ...rows] = everyRow('accountName', (i) => `Zoé Ærø ${i}`, 4).split('\n');
      writeFileSync(p, Buffer.concat([Buffer.from('\uFEFF' + head + '\n'), Buffer.from(rows.join('\n'), 'latin1')]));
    },
  },
  {
    name: 'utf8-bom-utf16-body.csv',
    what: 'a UTF-8 byte order mark over UTF-16 LE text (NUL in every cell)',
    exit: 1,
    code: 'INVALID_TEXT',
    write: (p) => writeFileSync(p, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(valid(3), 'utf16le')])),
  },
  // ---- quotes
  {
    name: 'unclosed-quote.csv',
    what: 'a quote opened in a row and never closed',
    exit: 2,
    code: 'MALFORMED_CSV',
    write: text(
      valid(3)
        .replace('GEN', 'X')
        .replace(/\n(BAD-0002,)/, '\n"$1'),
    ),
  },
  {
    name: 'unclosed-quote-header.csv',
    what: 'a quote opened in the header and never closed',
    exit: 2,
    code: 'MALFORMED_CSV',
    write: text('"' + valid(3)),
  },
  // ---- size
  {
    name: 'fifty-mb-line.csv',
    what: 'one line of 50 MB (no line end, no delimiter)',
    exit: 2,
    code: 'MALFORMED_CSV',
    big: true,
    message: /: row 1: a record longer than 1 MB: is a quote missing\?/,
    write: (p) => writeRepeated(p, '', 'abcdefghij', 50 * MB, ''),
  },
  {
    name: 'fifty-mb-quoted-cell.csv',
    what: 'the header, then a row whose quoted cell runs 50 MB to the end of the file',
    exit: 2,
    code: 'MALFORMED_CSV',
    big: true,
    message: /: row 2: a record longer than 1 MB: is a quote missing\?/,
    write: (p) => writeRepeated(p, header + '\nBIG-1,"', 'abcdefghij', 50 * MB, ''),
  },
  {
    name: 'thirty-mb-of-commas.csv',
    what: 'the header, then a line of 30 MB of delimiters',
    exit: 2,
    code: 'MALFORMED_CSV',
    big: true,
    message: /: row 2: more than 16,384 cells \(a spreadsheet's most columns\): is the delimiter "," right\?/,
    write: (p) => writeRepeated(p, header + '\n', ',', 30 * MB, '\n'),
  },
  {
    name: 'zip-bomb.xlsx',
    what: 'a 417 KB workbook whose sheet inflates to 400 MB (a zip bomb)',
    exit: 2,
    code: 'TOO_LARGE',
    big: true,
    message: /: the workbook unpacks to more than 200 MB; save the sheet as CSV or split it\. \[TOO_LARGE\]$/,
    write: (p) => writeFileSync(p, zipBomb()),
  },
  {
    name: 'zip-bomb-lying.xlsx',
    what: 'the zip bomb with its sizes declared as 1 KB (a lie): counted as it inflates',
    exit: 2,
    code: 'TOO_LARGE',
    big: true,
    message: /: the workbook unpacks to more than 200 MB/,
    write: (p) => writeFileSync(p, zipBomb(400, 1000)),
  },
  // ---- sheets
  {
    name: 'no-such-sheet.xlsx',
    what: '--sheet naming a sheet the workbook does not have',
    exit: 2,
    code: 'SHEET_NOT_FOUND',
    args: ['--sheet', 'February'],
    write: (p) => writeFileSync(p, xlsxOf(validCells(3))),
  },
  {
    name: 'sheet-on-csv.csv',
    what: '--sheet given for a CSV',
    exit: 2,
    code: 'UNSUPPORTED_FORMAT',
    args: ['--sheet', 'Sheet1'],
    write: text(valid(3)),
  },
  {
    name: 'documents-on-csv.csv',
    what: '--documents given for a CSV (its rows name their own in the documents column)',
    exit: 2,
    code: 'UNSUPPORTED_FORMAT',
    args: ['--documents', 'docs'],
    message: /--documents applies to pain\.001 files only; this is a CSV file: .*documents column/,
    write: text(valid(3)),
  },
  {
    name: 'documents-on-xlsx.xlsx',
    what: '--documents given for a workbook',
    exit: 2,
    code: 'UNSUPPORTED_FORMAT',
    args: ['--documents', 'docs'],
    message: /--documents applies to pain\.001 files only; this is an Excel workbook: .*documents column/,
    write: (p) => writeFileSync(p, xlsxOf(validCells(3))),
  },
  // ---- every row refused offline: exit 1, and still nothing sent
  {
    name: 'formula-cells.csv',
    what: 'formula cells (=, +, -, @) in the amount of every row',
    exit: 1,
    code: 'INVALID_AMOUNT',
    write: text(everyRow('sourceAmount', (i) => ['=100*2', '@SUM(A1:A2)', '-100', '=1+1'][i % 4]!, 4)),
  },
  {
    name: 'dot-thousands.csv',
    what: 'amounts of a European payroll with a dot grouping thousands (1.500, 12.000, 100.000)',
    exit: 1,
    code: 'AMBIGUOUS_AMOUNT',
    write: text(everyRow('sourceAmount', (i) => ['1.500', '12.000', '100.000'][i % 3]!, 3)),
  },
  {
    name: 'date-amounts.xlsx',
    what: 'amounts in cells formatted as dates (German Excel made "1.5" the date 1 May, shown 5/1/26)',
    exit: 1,
    code: 'EXCEL_DATE',
    write: (p) => {
      const rows = validCells(3);
      const ws = XLSX.utils.aoa_to_sheet(rows);
      for (let r = 1; r < rows.length; r++) ws[XLSX.utils.encode_cell({ r, c: col('sourceAmount') })] = { t: 'n', v: 46143, z: 'm/d/yy' };
      const wb = XLSX.utils.book_new();
      XLSX.utils.book_append_sheet(wb, ws, 'Sheet1');
      writeFileSync(p, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);
    },
  },
  {
    name: 'huge-dimension.xlsx',
    what: 'a 2 KB workbook whose sheet claims A1:XFD1048576 (17 billion cells) for 3 rows, amounts 1,234',
    exit: 1,
    code: 'AMBIGUOUS_AMOUNT',
    write: (p) =>
      writeFileSync(
        p,
        xlsxWithDimension(
          valid(3)
            .trimEnd()
            .split('\n')
            .map((l, i) => l.split(',').map((v, c) => (i > 0 && c === col('sourceAmount') ? '1,234' : v))),
          'A1:XFD1048576',
        ),
      ),
  },
  {
    name: 'formula-injection.csv',
    what: 'a DDE formula as the reference and amount of every row',
    exit: 1,
    code: 'INVALID_AMOUNT',
    write: text(everyRow('sourceAmount', () => `=cmd|' /C calc'!A0`, 3)),
  },
];

/** Writes every case into `dir`; returns the path of each. */
export function writeBadCases(dir: string, cases = BAD_CASES): Map<string, string> {
  const out = new Map<string, string>();
  for (const c of cases) {
    const p = join(dir, c.name);
    c.write(p);
    out.set(c.name, p);
  }
  return out;
}

/**
 * A "zip bomb" workbook: a valid xlsx whose sheet XML inflates to `inflatedMb` MB (one header row,
 * then spaces) from about 1 KB per MB on disk. Built without holding the inflated bytes: 1 MiB of
 * spaces deflated once with a sync flush (a byte-aligned, non-final block that refers only to
 * itself) is repeated, then a final block; the CRC is carried across the copies.
 * `declaredSize`, when given, is the uncompressed size its zip headers claim (a lie: 0 or small).
 */
export function zipBomb(inflatedMb = 400, declaredSize?: number): Buffer {
  const head = Buffer.from(
    `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1">${HEADER.map((h, i) => `<c r="${XLSX.utils.encode_col(i)}1" t="inlineStr"><is><t>${h}</t></is></c>`).join('')}</row>`,
  );
  const tail = Buffer.from('</sheetData></worksheet>');
  const pad = Buffer.alloc(MB, 0x20);
  const flush = { finishFlush: zconst.Z_SYNC_FLUSH };
  const padDeflated = deflateRawSync(pad, { level: 9, ...flush });
  const parts = [deflateRawSync(head, flush)];
  let crc = crc32(head);
  for (let i = 0; i < inflatedMb; i++) {
    parts.push(padDeflated);
    crc = crc32(pad, crc);
  }
  parts.push(deflateRawSync(tail));
  crc = crc32(tail, crc);
  const size = declaredSize ?? head.length + inflatedMb * MB + tail.length;
  return zip(workbookParts({ name: 'xl/worksheets/sheet1.xml', data: Buffer.alloc(0), deflated: Buffer.concat(parts), crc, size }));
}

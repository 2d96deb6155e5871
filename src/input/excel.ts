// Excel (.xlsx and .xls) through SheetJS, handed out row by row like CSV records. An .xlsx sheet is
// streamed from the zip (SheetJS reads the shared strings and styles only), so memory does not grow
// with the rows; an .xls, or an .xlsx this cannot stream, is read whole by SheetJS.
import { createInflateRaw } from 'node:zlib';
import { SaxesParser } from 'saxes';
import * as XLSX from 'xlsx';
import { InputError, type Refuse } from './input-errors.ts';
import { utcTime } from '../text.ts';
import { checkWorkbook, unreadable, zipParts } from './zip-guard.ts';
import type { SourceRecord } from './records.ts';

/** A sheet's most columns (XFD): a hidden range wider than that names none beyond it. */
const MAX_COLUMNS = 16384;

/** Rows read between two turns of the event loop (blank ones included): Ctrl-C is heard only on a turn. */
const YIELD_EVERY = 2000;

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

// SheetJS's number-format helpers, which its type declarations leave untyped.
const SSF = XLSX.SSF as {
  is_date(format: string): boolean;
  parse_date_code(
    serial: number,
    opts?: { date1904?: boolean },
  ): { y: number; m: number; d: number; H: number; M: number; S: number } | null;
  format(format: string | number, value: unknown, opts?: { date1904?: boolean }): string;
};

/** A serial number in a date format as an ISO date (2025-01-31, or 2025-01-31T09:30:00); else undefined. */
function excelDateText(serial: number, format: string | undefined, date1904: boolean): string | undefined {
  if (format === undefined || !SSF.is_date(format)) return undefined;
  const d = SSF.parse_date_code(serial, { date1904 });
  if (!d) return undefined;
  const date = `${pad(d.y, 4)}-${pad(d.m)}-${pad(d.d)}`;
  return d.H || d.M || d.S ? `${date}T${pad(d.H)}:${pad(d.M)}:${pad(Math.floor(d.S))}` : date;
}

type Cell = Pick<XLSX.CellObject, 't' | 'v' | 'w' | 'z'>;

// Each cell is the text the user sees (`w`; a formula its cached value), but a date cell is its ISO
// date, with what it shows handed over too (so validation can refuse a date in an amount or
// identifier column), and a numeric cell hands over its raw number (the Excel traps). Shared with the results reader;
// `date1904`: the workbook's date system (date1904Of), never assumed.
export function excelCell(cell: Cell | undefined, date1904: boolean): { text: string; number?: number; date?: string } {
  if (!cell || cell.t === 'z' || cell.v === undefined || cell.v === null) return { text: '' };
  if (cell.t === 'n') {
    const v = cell.v as number;
    const text = excelDateText(v, cell.z === undefined ? undefined : String(cell.z), date1904);
    if (text !== undefined) return { text, date: cell.w ?? text };
    return { text: cell.w ?? String(v), number: v };
  }
  if (cell.t === 'b') return { text: cell.w ?? (cell.v ? 'TRUE' : 'FALSE') };
  if (cell.t === 'e') return { text: cell.w ?? '#ERROR' };
  return { text: cell.w ?? String(cell.v) };
}

/** The sheet named (exactly, else ignoring case), else the first shown: a hidden sheet is read only by its name. */
function pickSheet({ SheetNames: sheets, Workbook }: XLSX.WorkBook, file: string, sheetName: string | undefined, refuse: Refuse): number {
  if (sheets.length === 0) throw refuse('EMPTY_FILE', `${file}: the workbook has no sheet.`);
  const shown = sheets.findIndex((_, i) => !Workbook?.Sheets?.[i]?.Hidden);
  if (sheetName === undefined) return Math.max(0, shown);
  let i = sheets.indexOf(sheetName);
  if (i < 0) i = sheets.findIndex((s) => s.toLowerCase() === sheetName.toLowerCase());
  if (i < 0)
    throw refuse('SHEET_NOT_FOUND', `${file}: no sheet named "${sheetName}"; the workbook has ${sheets.map((s) => `"${s}"`).join(', ')}.`);
  return i;
}

function readWorkbook(buf: Buffer, file: string, refuse: Refuse, opts: XLSX.ParsingOptions = {}): XLSX.WorkBook {
  try {
    // cellNF: each cell's number format, without which a date cell is only its serial number;
    // cellDates false: a date cell is that number (t 'n', never 'd'), read by excelCell.
    // dense: rows as arrays of the cells present, so the rows walked are those of the cells, not of
    // the sheet's <dimension>, which may claim A1:XFD1048576 (17 billion cells) for a few rows.
    return XLSX.read(buf, { type: 'buffer', cellNF: true, cellDates: false, cellFormula: false, cellHTML: false, dense: true, ...opts });
  } catch (e) {
    throw refuse('UNSUPPORTED_FORMAT', `${file}: not a readable Excel workbook (${(e as Error).message}).`);
  }
}

/** The workbook's date system: serial 0 is 1904-01-01 (old Mac Excel), not 1899-12-30. */
const date1904Of = (wb: XLSX.WorkBook) => !!wb.Workbook?.WBProps?.date1904;

/** A workbook's sheet read whole, the first or the one named: for the results reader, which refuses with its own errors. */
export function readSheet(buf: Buffer, file: string, sheetName: string | undefined, refuse: Refuse) {
  const wb = readWorkbook(buf, file, refuse);
  const name = wb.SheetNames[pickSheet(wb, file, sheetName, refuse)]!;
  return { name, ws: wb.Sheets[name]!, workbook: wb, date1904: date1904Of(wb) };
}

/** A row of cells; `hidden`: the sheet hides it (Hide, or a filter). */
type Row = [row: number, cells: (Cell | undefined)[], hidden?: boolean];
/** Where a sheet starts (its <dimension>), the columns it hides (before its rows), and its merged cells (after its rows in the XML). */
type SheetLayout = { start?: XLSX.CellAddress; hiddenColumns?: Uint8Array; merges?: XLSX.Range[] };
/** A sheet without a valid <dimension>: where it starts is known only once it is read whole. */
class NoDimension extends Error {}

/** The sheet read whole (an .xls), each row released once handed out. */
async function* wholeRows(ws: XLSX.WorkSheet): AsyncIterable<Row> {
  const data = (ws['!data'] ?? []) as ((Cell | undefined)[] | undefined)[];
  for (let r = 0; r < data.length; r++) {
    const cells = data[r];
    data[r] = undefined;
    if (cells) yield [r, cells, ws['!rows']?.[r]?.hidden];
  }
}

/** What streaming an .xlsx sheet needs: its zip part, shared strings, number format ids by style and formats; undefined for .xlsb. */
function xlsxBook(buf: Buffer, wb: XLSX.WorkBook, index: number, file: string) {
  const w = wb as XLSX.WorkBook & {
    Directory?: { workbooks?: string[] };
    files?: Record<string, { content?: Uint8Array }>;
    Strings?: { t?: string }[];
    Styles?: { CellXf?: { numFmtId?: number }[] };
    SSF?: Record<number, string>;
  };
  const book = (w.Directory?.workbooks?.[0] ?? '').replace(/^\//, '');
  if (!book.endsWith('.xml')) return undefined;
  const dir = book.slice(0, book.lastIndexOf('/') + 1);
  const rels = new TextDecoder().decode(w.files?.[`${dir}_rels/${book.slice(dir.length)}.rels`]?.content ?? new Uint8Array());
  const id = (w.Workbook?.Sheets?.[index] as { id?: string } | undefined)?.id;
  const rel = [...rels.matchAll(/<(?:\w+:)?Relationship\b[^>]*>/g)].map((m) => m[0]).find((tag) => tag.includes(`Id="${id}"`));
  const target = rel && /Target="([^"]+)"/.exec(rel)?.[1];
  if (!id || !target) return undefined;
  const path = target.startsWith('/') ? target.slice(1) : `${dir}${target}`.replace(/[^/]+\/\.\.\//g, '');
  const part = zipParts(buf, file).find((p) => p.name === path && (p.method === 0 || p.method === 8));
  if (!part) return undefined;
  return {
    part,
    strings: (w.Strings ?? []).map((s) => s.t ?? ''),
    formats: (w.Styles?.CellXf ?? []).map((x) => x.numFmtId ?? 0),
    table: w.SSF ?? {},
    date1904: date1904Of(wb),
    // written by a program (XlsxWriter stores 0 as every formula's result) for Excel to compute when opened
    recalc: /^(1|true)$/.test(String((w.Workbook as { CalcPr?: { fullCalcOnLoad?: unknown } } | undefined)?.CalcPr?.fullCalcOnLoad)),
  };
}

type XlsxBook = NonNullable<ReturnType<typeof xlsxBook>>;

/** OOXML's escapes in cell text (`_x000D_`), and CR LF as LF, as SheetJS reads them. */
const unescapeText = (s: string) =>
  s.replace(/_x([\da-fA-F]{4})_/g, (_, c: string) => String.fromCharCode(parseInt(c, 16))).replace(/\r\n/g, '\n');

/** The built-in date and time formats of other locales (CJK 27-36 and 50-58, Thai 71-81), which no workbook writes out. */
const isLocaleDateFormat = (id: number) => (id >= 27 && id <= 36) || (id >= 50 && id <= 58) || (id >= 71 && id <= 81);

/** A `<c>` of the sheet's XML as read: where, its type `t` and style `s`, its `<v>`, its inline text, whether it has an `<f>`. */
type XmlCell = XLSX.CellAddress & { t?: string; s?: string; v?: string; inline: string; formula: boolean };

/** A cell of the sheet's XML as SheetJS makes it (its `t`, `v`, the format `z` and the text `w`); undefined when it holds nothing. */
function xmlCell(book: XlsxBook, { t, s: style, v, inline, formula }: XmlCell) {
  const cell: Cell = { t: 'n' };
  if (t === undefined && v === undefined) {
    if (!formula) return undefined;
    cell.v = 0;
  } else if (t === 'str' || t === 'inlineStr') {
    // a copy: the parser's text is a slice of its whole chunk of XML, which a kept reference would keep alive
    Object.assign(cell, { t: 's', v: (' ' + unescapeText(t === 'str' ? (v ?? '') : inline)).slice(1) });
  } else if (v === undefined || (v === '' && !['s', 'b', 'e', 'd'].includes(t!))) {
    return undefined;
  } else if (t === 's') {
    Object.assign(cell, { t: 's', v: book.strings[parseInt(v, 10)] ?? '' });
  } else if (t === 'b') {
    Object.assign(cell, { t: 'b', v: v === '1' || v === 'true' });
  } else if (t === 'e') {
    Object.assign(cell, { t: 'e', v, w: v });
  } else if (t === 'd') {
    const epoch = book.date1904 ? Date.UTC(1904, 0, 1) : Date.UTC(1899, 11, 30);
    cell.v = ((utcTime(v) ?? NaN) - epoch) / 864e5;
  } else {
    cell.v = parseFloat(v);
  }
  const fmt = style === undefined ? 0 : (book.formats[parseInt(style, 10)] ?? 0);
  cell.z = book.table[fmt] ?? (isLocaleDateFormat(fmt) ? 'm/d/yy' : undefined);
  if (cell.t === 'e') return cell;
  try {
    if (cell.t === 's') cell.w = fmt === 0 ? (cell.v as string) : SSF.format(cell.z ?? 'General', cell.v);
    else cell.w = SSF.format(fmt === 0 ? 'General' : (cell.z ?? 'General'), cell.v, { date1904: book.date1904 });
  } catch {
    // SheetJS leaves such a cell unformatted too: excelCell shows its value
  }
  return cell;
}

/** The sheet's rows, inflated and parsed as they come (saxes): only one chunk of XML and its rows at a time. */
async function* streamedRows(buf: Buffer, book: XlsxBook, file: string, sheet: SheetLayout): AsyncIterable<Row> {
  const parser = new SaxesParser();
  const ready: Row[] = [];
  let hidden = false;
  let row = 0; // 1-based, as in the XML
  let col = -1;
  let cells: (Cell | undefined)[] | undefined;
  let cellAt: XmlCell | undefined;
  let inText: 'v' | 't' | undefined;
  let phonetic = false;
  let inData = false;
  let rowOfCells = -1;
  let lastRow = -1;
  const flush = () => {
    if (!cells) return;
    if (rowOfCells <= lastRow) throw unreadable(file, 'its rows are out of order');
    ready.push([(lastRow = rowOfCells), cells, hidden]);
    cells = undefined;
  };
  parser.on('opentag', (tag) => {
    const name = tag.name.slice(tag.name.indexOf(':') + 1);
    const a = tag.attributes as Record<string, string>;
    if (name === 'dimension' && !inData) {
      const ref = XLSX.utils.decode_range(a.ref ?? '');
      if (ref.s.r >= 0 && ref.s.c >= 0 && ref.s.r <= ref.e.r && ref.s.c <= ref.e.c) sheet.start = ref.s;
    } else if (name === 'sheetData') {
      if (!sheet.start) throw new NoDimension();
      inData = true;
    } else if (name === 'col' && !inData && (a.hidden === '1' || a.hidden === 'true')) {
      // (min and max are 1-based and inclusive)
      (sheet.hiddenColumns ??= new Uint8Array(MAX_COLUMNS)).fill(1, parseInt(a.min ?? '', 10) - 1, parseInt(a.max ?? '', 10));
    } else if (name === 'mergeCell' && !inData) {
      (sheet.merges ??= []).push(XLSX.utils.decode_range(a.ref ?? ''));
    } else if (!inData) {
      return;
    } else if (name === 'row') {
      row = a.r ? parseInt(a.r, 10) : row + 1;
      hidden = a.hidden === '1' || a.hidden === 'true';
      col = -1;
    } else if (name === 'c') {
      const at = a.r ? XLSX.utils.decode_cell(a.r) : { r: row - 1, c: col + 1 };
      col = at.c;
      cellAt = { ...at, t: a.t, s: a.s, inline: '', formula: false };
    } else if (name === 'v' || (name === 't' && !phonetic)) {
      inText = name;
      if (name === 'v' && cellAt) cellAt.v = '';
    } else if (name === 'f' && cellAt) {
      cellAt.formula = true;
    } else if (name === 'rPh') {
      phonetic = true;
    }
  });
  const onText = (text: string) => {
    if (inText === 'v' && cellAt) cellAt.v += text;
    else if (inText === 't' && cellAt) cellAt.inline += text;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  parser.on('closetag', (tag) => {
    const name = tag.name.slice(tag.name.indexOf(':') + 1);
    if (name === 'v' || name === 't') inText = undefined;
    else if (name === 'rPh') phonetic = false;
    else if (name === 'sheetData') inData = false;
    else if (name === 'c' && cellAt) {
      // (a formula written with no result, or an empty one but a text's "", would read as 0 or as nothing: Excel shows its value)
      const noValue = cellAt.formula && !cellAt.v && cellAt.t !== 'str';
      if ((cellAt.formula && book.recalc) || noValue)
        throw unreadable(
          file,
          `${noValue ? 'it was written by a program' : 'it is to be recalculated when opened'}, so its formulas (the first in ${XLSX.utils.encode_cell(cellAt)}) hold no computed value yet: open and save it in Excel, or paste the values`,
        );
      const cell = xmlCell(book, cellAt);
      if (cell) {
        if (cells && cellAt.r !== rowOfCells) flush();
        rowOfCells = cellAt.r;
        (cells ??= [])[cellAt.c] = cell;
      }
      cellAt = undefined;
    } else if (name === 'row') {
      flush();
    }
  });

  const { part } = book;
  const data = buf.subarray(part.dataStart, part.dataStart + part.packed);
  const decoder = new TextDecoder();
  const CHUNK = 64 * 1024;
  const chunks: Iterable<Buffer> | AsyncIterable<Buffer> =
    part.method === 8
      ? createInflateRaw({ chunkSize: CHUNK }).end(data)
      : Array.from({ length: Math.ceil(data.length / CHUNK) }, (_, i) => data.subarray(i * CHUNK, (i + 1) * CHUNK));
  try {
    for await (const chunk of chunks) {
      parser.write(decoder.decode(chunk, { stream: true }));
      while (ready.length) yield ready.shift()!;
    }
    parser.write(decoder.decode()).close();
  } catch (e) {
    if (e instanceof InputError || e instanceof NoDimension) throw e;
    throw unreadable(file, (e as Error).message);
  }
  flush();
  yield* ready;
}

/** Opens a workbook. Throws InputError TOO_LARGE, before SheetJS sees a byte, for one over the limits. */
export async function openExcel(buf: Buffer, file: string, sheetName?: string) {
  const refuse: Refuse = (code, message) => new InputError(code, file, message);
  const zip = buf.length >= 4 && buf.readUInt32LE(0) === 0x04034b50;
  if (zip) await checkWorkbook(buf, file); // (an .xls, OLE2, has nothing compressed: the file size bounds it)
  // an .xlsx: the workbook without its sheets (all parts are unpacked, then let go with `wb`)
  const wb = readWorkbook(buf, file, refuse, zip ? { sheets: [], bookFiles: true } : { cellStyles: true }); // (cellStyles: hidden rows)
  const sheets = wb.SheetNames;
  const index = pickSheet(wb, file, sheetName, refuse);
  const name = sheets[index]!;
  const book = zip ? xlsxBook(buf, wb, index, file) : undefined;
  const date1904 = date1904Of(wb);
  let whole = zip ? undefined : wb;

  async function* records(): AsyncGenerator<SourceRecord> {
    const sheet: SheetLayout = {};
    let rows: AsyncIterator<Row> | undefined;
    let next: IteratorResult<Row> | undefined;
    if (book) {
      rows = streamedRows(buf, book, file, sheet)[Symbol.asyncIterator]();
      try {
        next = await rows.next();
      } catch (e) {
        if (!(e instanceof NoDimension)) throw e;
      }
    }
    if (!next) {
      whole ??= readWorkbook(buf, file, refuse, { cellStyles: true });
      const ws = whole.Sheets[name]!;
      whole = undefined;
      // The declared range gives only where the sheet starts; its end is where the cells end.
      const ref = ws['!ref'];
      sheet.start = ref ? XLSX.utils.decode_range(ref).s : { r: 0, c: 0 };
      sheet.merges = ws['!merges'];
      (ws['!cols'] ?? []).forEach((col, c) => col?.hidden && ((sheet.hiddenColumns ??= new Uint8Array(MAX_COLUMNS))[c] = 1));
      rows = wholeRows(ws)[Symbol.asyncIterator]();
      next = await rows.next();
    }
    const start = sheet.start ?? { r: 0, c: 0 };
    // The header's width, once read: a later row's cells beyond it are only counted (EXTRA_CELLS),
    // so a row with one cell in column XFD costs that cell, not 16,384 empty ones.
    let width: number | undefined;
    let header = Infinity;
    const record = (r: number, cells: (Cell | undefined)[], hidden?: boolean): SourceRecord => {
      const values: string[] = [];
      let numbers: (number | undefined)[] | undefined;
      let dates: (string | undefined)[] | undefined;
      let hiddenCells: number[] | undefined;
      const end = width === undefined ? cells.length : Math.min(cells.length, start.c + width);
      for (let c = start.c; c < end; c++) {
        const { text, number, date } = excelCell(cells[c], date1904);
        values.push(text);
        if (number !== undefined) (numbers ??= [])[c - start.c] = number;
        if (date !== undefined) (dates ??= [])[c - start.c] = date;
        if (text.trim() !== '' && sheet.hiddenColumns?.[c]) (hiddenCells ??= []).push(c - start.c);
      }
      if (end < cells.length) {
        // beyond the header: the cells present only (the keys of a sparse array), packed after it
        for (const k of Object.keys(cells)) if (Number(k) >= end) values.push(excelCell(cells[Number(k)], date1904).text);
      }
      if (width === undefined && values.some((v) => v.trim() !== '')) [width, header] = [values.length, r];
      return {
        rowNumber: r + 1,
        values,
        ...(numbers && { numbers }),
        ...(dates && { dates }),
        ...(hidden && { hidden }),
        ...(hiddenCells && { hiddenCells }),
      };
    };
    let r = start.r;
    for (; !next.done; next = await rows!.next()) {
      const [at, cells, hidden] = next.value;
      for (; r <= at; r++) {
        if ((r - start.r + 1) % YIELD_EVERY === 0) await new Promise<void>((resolve) => setImmediate(resolve));
        yield r === at ? record(r, cells, hidden) : record(r, []);
      }
    }
    // known once the sheet is read: a merge over rows shows its value on each, but only its first row holds it
    const merged = sheet.merges?.find((m) => m.e.r > m.s.r && m.e.r > header);
    if (merged)
      throw new InputError(
        'MERGED_CELLS',
        file,
        `${file}: cells ${XLSX.utils.encode_range(merged)} are merged: ${merged.e.r > merged.s.r + 1 ? `rows ${merged.s.r + 2}-${merged.e.r + 1} show` : `row ${merged.e.r + 1} shows`} the value of row ${merged.s.r + 1} but hold none. Unmerge them and fill each row.`,
        merged.s.r + 1,
      );
  }
  // (a sheet other than the one read by default is a batch of its own: engine/identity.ts)
  return { sheet: name, sheets, ownSheet: index === pickSheet(wb, file, undefined, refuse) ? undefined : name, records: records() };
}

// A results workbook read back (read.ts loads this file only for a workbook: SheetJS is 650 KB): every
// cell as the text the CSV would hold, the batch's swaps of the Swaps sheet, a person's own sheets kept.
import * as XLSX from 'xlsx';
import { excelCell, readSheet } from '../input/excel.ts';
import type { Refuse } from '../input/input-errors.ts';
import type { SourceRecord } from '../input/records.ts';
import { unneutralise } from '../input/neutralise.ts';
import { numberText } from './numbers.ts';
import { SWAP_COLUMNS, SWAPS_SHEET, type SwapLine } from './swap-summary.ts';

/** The sheet's records, and its workbook's swaps and other sheets when there are any. */
export function readResultsSheet(buf: Buffer, file: string, sheet: string | undefined, refuse: Refuse) {
  const { ws, name, workbook, date1904 } = readSheet(buf, file, sheet, refuse);
  const swapsWs = name === SWAPS_SHEET ? undefined : workbook.Sheets[SWAPS_SHEET];
  const swaps = swapsWs ? swapsOfSheet(sheetRecords(swapsWs, date1904)) : [];
  // (a person's own sheets go back into the workbook when it is written again)
  const others = workbook.SheetNames.filter((n) => n !== name && n !== SWAPS_SHEET);
  const otherSheets = others.map((n): [string, XLSX.WorkSheet] => [n, writable(workbook.Sheets[n]!)]);
  const kept = others.length ? { otherSheets, ...(date1904 && { date1904: true as const }) } : {};
  return { records: sheetRecords(ws, date1904), ...(swaps.length ? { swaps } : {}), ...kept };
}

/** XML text of a string (entities, end-of-line normalisation), then OOXML's _xHHHH_ escapes, once. */
function decodeOoxmlText(xml: string): string {
  return xml
    .replace(/\r\n?/g, '\n')
    .replace(
      /&(?:(amp|lt|gt|quot|apos)|#(\d+)|#x([0-9a-fA-F]+));/g,
      (m, name: string | undefined, dec: string | undefined, hex: string | undefined) => {
        if (name) return ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" } as Record<string, string>)[name]!;
        const cp = dec !== undefined ? parseInt(dec, 10) : parseInt(hex!, 16);
        return cp <= 0x10ffff ? String.fromCodePoint(cp) : m;
      },
    )
    .replace(/_x([0-9a-fA-F]{4})_/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

const RUN_TEXT = /<(?:\w+:)?t(?:\s[^>]*)?>([\s\S]*?)<\/(?:\w+:)?t>/g;
const PHONETIC = /<(?:\w+:)?rPh\b[\s\S]*?<\/(?:\w+:)?rPh>/g;

/** A cell's text as the CSV would hold it: as readBatch reads it (excel.ts: a date an ISO date), but a string and a number exactly. */
function cellText(cell: XLSX.CellObject | undefined, read: ReturnType<typeof excelCell>): string {
  if (cell?.t === 's') {
    // the exact text of a shared-string cell, from its raw XML (SheetJS's own text turns CR LF into LF)
    const raw = (cell as { r?: unknown }).r;
    if (typeof raw !== 'string' || !raw.includes('<')) return String(cell.v ?? '');
    let out = '';
    for (const m of raw.replace(PHONETIC, '').matchAll(RUN_TEXT)) out += m[1] ?? '';
    return decodeOoxmlText(out);
  }
  return read.number === undefined ? read.text : numberText(read.number, typeof cell?.z === 'string' ? cell.z : undefined);
}

/** The batch's swaps of a Swaps sheet (write.ts), by its header; lines without a currency are skipped. */
function swapsOfSheet(records: readonly SourceRecord[]): SwapLine[] {
  const [header, ...lines] = records.map((r) => r.values);
  const at = SWAP_COLUMNS.map((c) => header?.indexOf(c) ?? -1);
  return lines.flatMap((values) => {
    const cell = (k: number) => (at[k]! < 0 ? '' : unneutralise(values[at[k]!] ?? ''));
    if (!cell(0)) return [];
    const s: SwapLine = { currency: cell(0), reference: cell(1), status: cell(3) };
    for (const [k, c] of SWAP_COLUMNS.entries()) if (cell(k)) s[c] = cell(k);
    return [s];
  });
}

/** A sheet as read made writable again: each row an array (SheetJS leaves out rows without cells), its range its cells'. */
function writable(ws: XLSX.WorkSheet): XLSX.WorkSheet {
  const rows = (ws as { '!data'?: (XLSX.CellObject[] | undefined)[] })['!data'] ?? [];
  const data = Array.from({ length: Math.max(1, rows.length) }, (_, r) => rows[r] ?? []);
  const lastCol = data.reduce((last, line) => Math.max(last, line.length - 1), 0);
  return { '!data': data, '!ref': XLSX.utils.encode_range({ s: { r: 0, c: 0 }, e: { r: data.length - 1, c: lastCol } }) };
}

/** Every line of a sheet's cells as text, its dates in the workbook's date system (1900 or 1904). */
function sheetRecords(ws: XLSX.WorkSheet, date1904: boolean): SourceRecord[] {
  const ref = ws['!ref'];
  if (!ref) return [];
  const range = XLSX.utils.decode_range(ref);
  const data = (ws as { '!data'?: (XLSX.CellObject | undefined)[][] })['!data'] ?? [];
  // (bounded by the cells present, never by the declared <dimension>: it may claim 17 billion cells, or fewer than are there)
  const lastRow = data.length - 1;
  const lastCol = data.reduce((last, line) => Math.max(last, (line?.length ?? 0) - 1), -1);
  const out: SourceRecord[] = [];
  for (let r = range.s.r; r <= lastRow; r++) {
    const line = data[r];
    const cells = Array.from({ length: lastCol - range.s.c + 1 }, (_, k) => line?.[range.s.c + k]);
    // (a number cell's value unless it shows a date, and what a date cell shows: for validation's Excel traps, as readBatch hands them over)
    const read = cells.map((c) => excelCell(c, date1904));
    const values = cells.map((c, k) => cellText(c, read[k]!));
    out.push({ rowNumber: r + 1, values, numbers: read.map((c) => c.number), dates: read.map((c) => c.date) });
  }
  return out;
}

// The XLSX results file (SheetJS): text cells neutralised as in CSV (a sheet saved as CSV stays
// safe, and both formats read back the same); rates and amounts numeric when exact (numbers.ts).
// The batch's swaps go on a second sheet, "Swaps".
import type * as XLSX from 'xlsx';
import { matchHeader } from '../input/batch-columns.ts';
import { MONEY_RESULT_COLUMNS, NUMERIC_RESULT_COLUMNS } from '../input/result-columns.ts';
import { inRowOrder, resultsHeader, resultsOf } from './layout.ts';
import { neutralise } from '../input/neutralise.ts';
import { numberCell } from './numbers.ts';
import type { ResultsSource, ResultsWriter } from './types.ts';
import { SWAP_AMOUNT_COLUMNS, SWAP_COLUMNS, SWAPS_SHEET, type SwapLine } from './swap-summary.ts';

const NUMERIC = new Set<string>(NUMERIC_RESULT_COLUMNS);
const MONEY = new Set<string>(MONEY_RESULT_COLUMNS);
/** Excel's limit on the text of one cell. */
const XLSX_MAX_TEXT = 32767;
const RESULTS_SHEET = 'Results';

/** Written for a workbook batch (.xls included: never BIFF), and for --results *.xlsx. */
export const xlsxWriter: ResultsWriter = {
  format: 'xlsx',
  extensions: ['.xlsx'],
  forBatches: { formats: ['xlsx', 'xls'], extensions: ['.xlsx', '.xls', '.xlsm'] },
  // (SheetJS, 650 KB, loaded only when a workbook is written)
  chunks: async function* (table) {
    yield xlsxBytes(await import('xlsx'), table);
  },
};

export function textCell(text: string): XLSX.CellObject | undefined {
  if (text === '') return undefined;
  let v = neutralise(text);
  // Excel refuses longer text; cut rather than lose the whole file (never happens to ids or amounts)
  if (v.length > XLSX_MAX_TEXT) v = `${v.slice(0, XLSX_MAX_TEXT - 1)}…`;
  // what SheetJS does not escape for an exact round trip: a literal "_x0041_" (as _x005F_x0041_) and CR (as _x000D_)
  return { t: 's', v: v.replace(/_(?=x[0-9a-fA-F]{4}_)/g, '_x005F_').replace(/\r/g, '_x000D_') };
}

/** The whole workbook (SheetJS writes it whole). */
function xlsxBytes({ utils, write }: typeof XLSX, table: ResultsSource): Uint8Array {
  const { input, header, result } = resultsHeader(table.inputColumns, resultsOf(table));
  const amount = input.map((h) => matchHeader(h)?.field === 'sourceAmount');
  const data: (XLSX.CellObject | undefined)[][] = [header.map((h) => textCell(h))];
  for (const i of inRowOrder(table.rows)) {
    const cells = table.rows.at(i)!.cells;
    const values = table.resultAt(i);
    data.push([
      // the batch's amount column (sourceAmount or an alias, e.g. "Amount"): a number as result amounts are, else text as the batch had it
      ...input.map((c, k) => (amount[k] && numberCell(cells[c] ?? '', true)) || textCell(cells[c] ?? '')),
      ...result.map((c) => (NUMERIC.has(c) && numberCell(values[c] ?? '', MONEY.has(c))) || textCell(values[c] ?? '')),
    ]);
  }
  const wb = utils.book_new();
  if (table.date1904) wb.Workbook = { WBProps: { date1904: true } }; // (ours hold no date: the other sheets' keep theirs)
  utils.book_append_sheet(wb, sheetOf(utils, header, data), RESULTS_SHEET);
  if (table.swaps?.length) utils.book_append_sheet(wb, swapsSheet(utils, table.swaps), SWAPS_SHEET);
  for (const [name, sheet] of table.otherSheets ?? []) utils.book_append_sheet(wb, sheet, name);
  return write(wb, { type: 'buffer', bookType: 'xlsx', bookSST: true, compression: true }) as Uint8Array;
}

/** The second sheet "Swaps": the batch's swaps, after the results sheet so `retry` still reads the rows first. */
function swapsSheet(utils: typeof XLSX.utils, swaps: readonly SwapLine[]): XLSX.WorkSheet {
  const cell = (c: (typeof SWAP_COLUMNS)[number], text = '') =>
    (c === 'exchangeRate' || SWAP_AMOUNT_COLUMNS.includes(c) ? numberCell(text, c !== 'exchangeRate') : undefined) ?? textCell(text);
  return sheetOf(utils, SWAP_COLUMNS, [SWAP_COLUMNS.map((c) => textCell(c)), ...swaps.map((s) => SWAP_COLUMNS.map((c) => cell(c, s[c])))]);
}

/** A sheet of `data` (its first line `header`'s cells); a column's width in characters: its header's, widened to the longest of the first 200 rows, at most 60. */
function sheetOf(utils: typeof XLSX.utils, header: readonly string[], data: (XLSX.CellObject | undefined)[][]): XLSX.WorkSheet {
  const widths = header.map((h) => Math.min(60, Math.max(8, h.length + 2)));
  for (const line of data.slice(1, 201))
    for (const [k, cell] of line.entries()) if (cell) widths[k] = Math.min(60, Math.max(widths[k]!, String(cell.v).length + 2));
  return {
    '!data': data,
    '!ref': utils.encode_range({ s: { r: 0, c: 0 }, e: { r: data.length - 1, c: header.length - 1 } }),
    '!cols': widths.map((wch) => ({ wch })),
  } as XLSX.WorkSheet;
}

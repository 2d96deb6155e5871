// The CSV results file (csv-stringify): UTF-8 with a BOM (Excel then reads the accents right), CRLF
// line endings, the input's delimiter; a field is quoted when it holds the delimiter, a quote, CR
// or LF, or starts or ends with a space (a spreadsheet would trim it).
import { stringify } from 'csv-stringify/sync';
import { NUMERIC_RESULT_COLUMNS } from '../input/result-columns.ts';
import { inRowOrder, resultsHeader, resultsOf } from './layout.ts';
import { neutralise } from '../input/neutralise.ts';
import { isPlainDecimal } from './numbers.ts';
import type { ResultsSource, ResultsWriter } from './types.ts';

export const csvWriter: ResultsWriter = {
  format: 'csv',
  extensions: ['.csv', '.tsv', '.txt'],
  forBatches: { formats: ['csv'], extensions: [] },
  chunks: csvChunks,
};

const EDGE_SPACE = /^ | $/;
/** Rows per chunk written: the file is never held whole, and a chunk's rows die young (issue 44: at 1,000, 100,000 rows peaked 200 MB higher). */
const CHUNK_ROWS = 100;

export function* csvChunks(table: ResultsSource): Generator<string> {
  const { input, header, result } = resultsHeader(table.inputColumns, resultsOf(table));
  const text = (lines: string[][], bom = false) =>
    stringify(lines, {
      bom,
      delimiter: table.delimiter ?? ',',
      record_delimiter: '\r\n',
      quote_record_delimiter: true, // a lone CR or LF in a cell too, not only CRLF
      quoted_match: EDGE_SPACE,
    });
  yield text([header.map(neutralise)], true);
  let lines: string[][] = [];
  for (const i of inRowOrder(table.rows)) {
    const cells = table.rows.at(i)!.cells;
    const values = table.resultAt(i);
    lines.push([
      ...input.map((c) => neutralise(cells[c] ?? '')),
      // a plain decimal in a numeric column stays a number: "-12.50" is not neutralised
      ...result.map((c) => {
        const v = values[c] ?? '';
        return NUMERIC_RESULT_COLUMNS.includes(c) && isPlainDecimal(v) ? v : neutralise(v);
      }),
    ]);
    if (lines.length < CHUNK_ROWS) continue;
    yield text(lines);
    lines = [];
  }
  if (lines.length) yield text(lines);
}

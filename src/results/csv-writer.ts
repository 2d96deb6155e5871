// The CSV results file (csv-stringify): UTF-8 with a BOM (Excel then reads the accents right), CRLF
// line endings, the input's delimiter; a field is quoted when it holds the delimiter, a quote, CR
// or LF, or starts or ends with a space (a spreadsheet would trim it).
import { stringify } from 'csv-stringify/sync';
import { NUMERIC_RESULT_COLUMNS } from './result-columns.ts';
import { byRowNumber, resultsHeader } from './layout.ts';
import { neutralise } from './neutralise.ts';
import { isPlainDecimal } from './numbers.ts';
import type { ResultsTable, ResultsWriter } from './types.ts';

const NUMERIC = new Set<string>(NUMERIC_RESULT_COLUMNS);

export const csvWriter: ResultsWriter = {
  format: 'csv',
  extensions: ['.csv', '.tsv', '.txt'],
  forBatches: { formats: ['csv'], extensions: [] },
  bytes: (table) => csvText(table),
};

/** A cell starting or ending with a space is quoted, so that a spreadsheet keeps the space. */
const EDGE_SPACE = /^ | $/;

/** The whole CSV text, BOM and a CRLF after every line included. */
export function csvText(table: ResultsTable): string {
  const { input, header, result } = resultsHeader(table.inputColumns, table.rows);
  const lines = byRowNumber(table.rows).map((row) => [
    ...input.map((c) => neutralise(row.cells[c] ?? '')),
    // a plain decimal in a numeric column stays a number: "-12.50" is not neutralised
    ...result.map((c) => {
      const v = row.result[c] ?? '';
      return NUMERIC.has(c) && isPlainDecimal(v) ? v : neutralise(v);
    }),
  ]);
  return stringify([header.map(neutralise), ...lines], {
    bom: true,
    delimiter: table.delimiter ?? ',',
    record_delimiter: '\r\n',
    quote_record_delimiter: true, // a lone CR or LF in a cell too, not only CRLF
    quoted_match: EDGE_SPACE,
  });
}

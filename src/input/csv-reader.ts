// CSV, streamed: bytes → (iconv-lite for any but UTF-8) → csv-parse → records. A record
// over MAX_RECORD_BYTES is refused: memory grew with the longest line (a 50 MB line took ~510 MB),
// and such a record is almost always a quote left open.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { parse, CsvError } from 'csv-parse';
import iconv from 'iconv-lite';
import { InputError } from './input-errors.ts';
import {
  detectDelimiter,
  detectEncoding,
  misreadCodePage,
  sepLine,
  utf8ReadAs1252,
  sniffKind,
  type Delimiter,
  type TextEncoding,
} from './detect.ts';
import { shapeRows, type SourceRecord } from './records.ts';
import { MAX_RECORD_BYTES, MAX_RECORD_CELLS, mb } from './size-limits.ts';
import type { BatchReader } from './reader.ts';

/** Bytes read at a time: csv-parse makes a chunk's records at once, so a small one keeps them young (not promoted). */
const READ_CHUNK = 64 * 1024;

/** How both readers, of batches and of results files, parse a CSV: every record as it is, rows of any length, a lone CR or LF ends one. */
export const CSV_OPTIONS = {
  relax_column_count: true,
  relax_quotes: true,
  skip_empty_lines: false,
  record_delimiter: ['\r\n', '\n', '\r'],
  max_record_size: MAX_RECORD_BYTES,
  // past MAX_RECORD_CELLS cells, the delimiters are text of one last cell, counted by max_record_size
  ignore_last_delimiters: MAX_RECORD_CELLS + 1,
};

export const csvReader: BatchReader = {
  formatOf: (head) => (sniffKind(head) === 'csv' ? 'csv' : undefined),
  async open({ file, path, head, encoding }) {
    const { detected, delimiter, sepLineFirst } = csvLayout(head, encoding);
    const fileStream = createReadStream(path, { start: detected.bomBytes, highWaterMark: READ_CHUNK });
    const input = detected.encoding === 'utf-8' ? fileStream : fileStream.pipe(iconv.decodeStream(detected.encoding, { stripBOM: true }));

    const parser = parse({
      ...CSV_OPTIONS,
      delimiter,
      bom: true,
      from_line: sepLineFirst ? 2 : 1, // the "sep=;" line is not a record
      encoding: detected.encoding === 'utf-8' ? 'utf8' : undefined,
    });
    fileStream.on('error', (e) => parser.destroy(e));
    input.pipe(parser);

    const close = async () => {
      fileStream.destroy();
      parser.destroy();
    };
    const refusal = csvRefusals(file, delimiter);
    async function* records(): AsyncGenerator<SourceRecord> {
      let rowNumber = 0;
      try {
        for await (const values of parser as AsyncIterable<string[]>) {
          if (values.length > MAX_RECORD_CELLS) throw refusal.tooWide(rowNumber + 1);
          yield { rowNumber: ++rowNumber, values };
        }
      } catch (e) {
        throw refusal.of(e, rowNumber);
      } finally {
        await close();
      }
    }
    const shaped = await shapeRows(file, records());
    return { file, format: 'csv', encoding: detected.encoding, encodingDetectedBy: detected.detectedBy, delimiter, ...shaped, close };
  },
};

export function csvLayout(head: Buffer, encoding?: TextEncoding) {
  const found = detectEncoding(head);
  const detected = encoding ? { encoding, bomBytes: found.encoding === encoding ? found.bomBytes : 0, detectedBy: '--encoding' } : found;
  // UTF-8 as the file stream reads it, without iconv-lite: most files never load its tables.
  const sampleText =
    detected.encoding === 'utf-8'
      ? new TextDecoder('utf-8').decode(head.subarray(detected.bomBytes))
      : iconv.decode(head.subarray(detected.bomBytes), detected.encoding, { stripBOM: true });
  const sep = sepLine(sampleText);
  return { detected, delimiter: sep ?? detectDelimiter(sampleText), sepLineFirst: sep !== undefined };
}

export function csvRefusals(file: string, delimiter: Delimiter) {
  const malformed = (row: number, message: string) => new InputError('MALFORMED_CSV', file, `${file}: ${message}`, row);
  const tooLong = (row: number) => malformed(row, `row ${row}: a record longer than ${mb(MAX_RECORD_BYTES)}: is a quote missing?`);
  const tooWide = (row: number) =>
    malformed(
      row,
      `row ${row}: more than ${MAX_RECORD_CELLS.toLocaleString('en')} cells (a spreadsheet's most columns): is the delimiter "${delimiter === '\t' ? '\\t' : delimiter}" right?`,
    );
  /** csv-parse's error (or the file's) as the InputError the user is shown; `rowNumber`: records read so far. */
  const of = (e: unknown, rowNumber: number): InputError => {
    if (e instanceof InputError) return e;
    if (e instanceof CsvError && e.code === 'CSV_MAX_RECORD_SIZE') {
      // csv-parse counts the records it has given, which may be more than those read yet
      const { records, index } = e as CsvError & { records?: number; index?: number };
      const row = Math.max(rowNumber, records ?? 0) + 1;
      // in the cell past the last one: the delimiters of a too wide record made it too long
      return index === MAX_RECORD_CELLS ? tooWide(row) : tooLong(row);
    }
    if (e instanceof CsvError) {
      const line = (e as CsvError & { lines?: number }).lines;
      const why = e.message.replace(/^Invalid Record Length: |^Quote Not Closed: /, '');
      return malformed(rowNumber + 1, `cannot read the CSV${line ? ` at line ${line}` : ''}: ${why}`);
    }
    return new InputError('UNREADABLE', file, `${file}: cannot read the file: ${(e as Error).message}`);
  };
  return { tooWide, of };
}

/** In a file guessed to be Windows-1252, the first line that reads like another code page (streamed): every letter beyond ASCII in it is then suspect. */
export async function firstMisreadLine(file: string): Promise<number | undefined> {
  const lines = createInterface({ input: createReadStream(file).pipe(iconv.decodeStream('windows-1252')), crlfDelay: Infinity });
  let n = 0;
  // (a line of UTF-8 in it is another problem, said on its own: ENCODING, "the file mixes the two")
  for await (const line of lines) if ((n++, misreadCodePage(line) && utf8ReadAs1252(line) === undefined)) return n;
}

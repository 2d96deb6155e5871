// CSV, streamed: bytes → (iconv-lite for UTF-16 and Windows-1252) → csv-parse → records.
// Memory stays flat however long the file: only the records of the last chunk read are held, and
// no record longer than MAX_RECORD_BYTES (csv-parse's max_record_size): memory would otherwise
// grow with the longest line (a 50 MB line took ~510 MB of RSS), and such a record is almost
// always a quote left open that swallows the rest of the file.
import { createReadStream } from 'node:fs';
import { Transform } from 'node:stream';
import { parse, CsvError } from 'csv-parse';
import iconv from 'iconv-lite';
import { InputError } from './errors.ts';
import { detectDelimiter, detectEncoding, sepLine, type Delimiter, type TextEncoding } from './detect.ts';
import type { SourceRecord } from './rows.ts';
import { MAX_RECORD_BYTES, MAX_RECORD_CELLS, mb } from './limits.ts';

/**
 * Bytes read at a time. csv-parse turns a whole chunk into records at once; the smaller the chunk,
 * the sooner those records are used and dropped (young, not promoted to V8's old space).
 */
const READ_CHUNK = 64 * 1024;

export interface CsvOpen {
  encoding: TextEncoding;
  encodingDetectedBy: string;
  delimiter: Delimiter;
  records: AsyncIterable<SourceRecord>;
  close: () => void;
}

/**
 * Opens a CSV for streaming. `head` is the first bytes of the file (up to 1 MiB), used to detect
 * the encoding (unless given) and the delimiter. Row numbers count records, not lines: a record
 * whose quoted cell spans several lines is one row, as a spreadsheet shows it.
 */
export function openCsv(path: string, file: string, head: Buffer, encoding?: TextEncoding): CsvOpen {
  const detected = encoding
    ? { encoding, bomBytes: detectEncoding(head).encoding === encoding ? detectEncoding(head).bomBytes : 0, detectedBy: '--encoding' }
    : detectEncoding(head);
  // UTF-8 as the file stream reads it below, without iconv-lite: most files never load its tables.
  const sampleText =
    detected.encoding === 'utf-8'
      ? new TextDecoder('utf-8').decode(head.subarray(detected.bomBytes))
      : iconv.decode(head.subarray(detected.bomBytes), detected.encoding, { stripBOM: true });
  const sep = sepLine(sampleText);
  const delimiter = sep ?? detectDelimiter(sampleText);

  const fileStream = createReadStream(path, { start: detected.bomBytes, highWaterMark: READ_CHUNK });
  let input: NodeJS.ReadableStream = fileStream;
  if (detected.encoding !== 'utf-8') input = fileStream.pipe(iconv.decodeStream(detected.encoding, { stripBOM: true }));
  const skipFirst = sep !== undefined; // the "sep=;" line is not a record

  /** A read that failed: its own InputError, or the file is unreadable. */
  const unreadable = (e: unknown): InputError =>
    e instanceof InputError ? e : new InputError('UNREADABLE', file, `${file}: cannot read the file: ${(e as Error).message}`);
  const tooLong = (row: number) =>
    new InputError('MALFORMED_CSV', file, `${file}: row ${row}: a record longer than ${mb(MAX_RECORD_BYTES)}: is a quote missing?`, row);
  const tooWide = (row: number) =>
    new InputError(
      'MALFORMED_CSV',
      file,
      `${file}: row ${row}: more than ${MAX_RECORD_CELLS.toLocaleString('en')} cells (a spreadsheet's most columns): is the delimiter "${delimiter === '\t' ? '\\t' : delimiter}" right?`,
      row,
    );

  const parser = parse({
    delimiter,
    bom: true,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: false,
    record_delimiter: ['\r\n', '\n', '\r'],
    from_line: skipFirst ? 2 : 1,
    encoding: detected.encoding === 'utf-8' ? 'utf8' : undefined,
    max_record_size: MAX_RECORD_BYTES,
  });
  fileStream.on('error', (e) => parser.destroy(e));
  const guard = cellGuard(delimiter, skipFirst, tooWide);
  guard.on('error', (e) => parser.destroy(e));
  input.pipe(guard).pipe(parser);

  const closeParser = () => {
    fileStream.destroy();
    parser.destroy();
  };

  /** csv-parse's error (or the file's) as the InputError the user is shown; `rowNumber`: records read so far. */
  const failure = (e: unknown, rowNumber: number): InputError => {
    if (e instanceof CsvError && e.code === 'CSV_MAX_RECORD_SIZE') {
      // csv-parse counts the records it has given, which may be more than those read yet
      return tooLong(Math.max(rowNumber, (e as CsvError & { records?: number }).records ?? 0) + 1);
    }
    if (e instanceof CsvError) {
      const line = (e as CsvError & { lines?: number }).lines;
      return new InputError(
        'MALFORMED_CSV',
        file,
        `${file}: cannot read the CSV${line ? ` at line ${line}` : ''}: ${e.message.replace(/^Invalid Record Length: |^Quote Not Closed: /, '')}`,
        rowNumber + 1,
      );
    }
    return unreadable(e);
  };

  async function* records(): AsyncGenerator<SourceRecord> {
    let rowNumber = 0;
    try {
      for await (const values of parser as AsyncIterable<string[]>) yield { rowNumber: ++rowNumber, values };
    } catch (e) {
      throw failure(e, rowNumber);
    } finally {
      closeParser();
    }
  }
  return { encoding: detected.encoding, encodingDetectedBy: detected.detectedBy, delimiter, records: records(), close: closeParser };
}

/**
 * The text passed on to csv-parse unchanged, while the cells of the record in progress are
 * counted: csv-parse has no limit on them and would build a record of millions of empty cells
 * from a line of delimiters. Quotes are followed as csv-parse reads them (a doubled quote opens
 * and closes again), delimiters and line ends inside quotes do not count. It sees UTF-8 bytes
 * (text decoded from another encoding is written to it as a string, which a Transform encodes),
 * and every character it looks at is ASCII.
 */
function cellGuard(delimiter: Delimiter, skipFirst: boolean, tooWide: (row: number) => Error): Transform {
  const D = delimiter.charCodeAt(0);
  let quoted = false;
  let cells = 1;
  let record = skipFirst ? 0 : 1; // the "sep=" line is not a row
  let afterCR = false;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const n = chunk.length;
      for (let i = 0; i < n; i++) {
        const c = chunk[i]!;
        if (c === 0x22) quoted = !quoted;
        else if (quoted) continue;
        else if (c === D) {
          if (++cells > MAX_RECORD_CELLS) return done(tooWide(record));
        } else if (c === 0x0a || c === 0x0d) {
          if (!(c === 0x0a && afterCR)) {
            record++;
            cells = 1;
          }
        }
        afterCR = c === 0x0d && !quoted;
      }
      done(null, chunk);
    },
  });
}

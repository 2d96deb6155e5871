// CSV, streamed: bytes → (iconv-lite for UTF-16 and Windows-1252) → csv-parse → records.
// Memory stays flat however long the file: only the current record is held.
import { createReadStream } from 'node:fs';
import { parse, CsvError } from 'csv-parse';
import iconv from 'iconv-lite';
import { InputError } from './errors.ts';
import { detectDelimiter, detectEncoding, sepLine, type Delimiter, type TextEncoding } from './detect.ts';
import type { SourceRecord } from './rows.ts';

export interface CsvOpen {
  encoding: TextEncoding;
  encodingDetectedBy: string;
  delimiter: Delimiter;
  records: AsyncIterator<SourceRecord>;
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
  const sampleText = iconv.decode(head.subarray(detected.bomBytes), detected.encoding, { stripBOM: true });
  const sep = sepLine(sampleText);
  const delimiter = sep ?? detectDelimiter(sampleText);

  const fileStream = createReadStream(path, { start: detected.bomBytes, highWaterMark: 256 * 1024 });
  let input: NodeJS.ReadableStream = fileStream;
  if (detected.encoding !== 'utf-8') input = fileStream.pipe(iconv.decodeStream(detected.encoding, { stripBOM: true }));
  const parser = parse({
    delimiter,
    bom: true,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: false,
    record_delimiter: ['\r\n', '\n', '\r'],
    from_line: sep ? 2 : 1,
    encoding: detected.encoding === 'utf-8' ? 'utf8' : undefined,
  });
  fileStream.on('error', (e) => parser.destroy(e));
  input.pipe(parser);

  const close = () => {
    fileStream.destroy();
    parser.destroy();
  };

  async function* records(): AsyncGenerator<SourceRecord> {
    let rowNumber = 0;
    try {
      for await (const values of parser as AsyncIterable<string[]>) {
        rowNumber++;
        yield { rowNumber, values };
      }
    } catch (e) {
      if (e instanceof CsvError) {
        const line = (e as CsvError & { lines?: number }).lines;
        throw new InputError('MALFORMED_CSV', file, `${file}: cannot read the CSV${line ? ` at line ${line}` : ''}: ${e.message.replace(/^Invalid Record Length: |^Quote Not Closed: /, '')}`, rowNumber + 1);
      }
      if (e instanceof InputError) throw e;
      throw new InputError('UNREADABLE', file, `${file}: cannot read the file: ${(e as Error).message}`);
    } finally {
      close();
    }
  }
  return { encoding: detected.encoding, encodingDetectedBy: detected.detectedBy, delimiter, records: records(), close };
}

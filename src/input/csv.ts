// CSV, streamed: bytes → (iconv-lite for UTF-16 and Windows-1252) → csv-parse → records.
// Memory stays flat however long the file: only the records of the last chunk read are held, and
// no record longer than MAX_RECORD_BYTES (csv-parse's max_record_size): memory would otherwise
// grow with the longest line (a 50 MB line took ~510 MB of RSS), and such a record is almost
// always a quote left open that swallows the rest of the file.
//
// A file with no quote character anywhere is read without csv-parse (quoteFreeRecords): with no
// quotes, a record is a line and a cell is the text between two delimiters, so splitting gives
// csv-parse's own records (test/input/quote-free.test.ts compares the two on random files) about
// five times faster: csv-parse reads 100,000 rows (12 MB) in about a second, most of `validate`
// and of a resume. Any quote, anywhere, and csv-parse reads the whole file.
import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { Transform } from 'node:stream';
import { parse, CsvError } from 'csv-parse';
import iconv from 'iconv-lite';
import { InputError } from './errors.ts';
import { detectDelimiter, detectEncoding, sepLine, type Delimiter, type TextEncoding } from './detect.ts';
import { NEED_MORE, type RecordSource } from './rows.ts';
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
  records: RecordSource;
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
  const close = () => fileStream.destroy();
  if (!hasQuote(path, detected.bomBytes)) {
    if (detected.encoding === 'utf-8') fileStream.setEncoding('utf8'); // split characters are joined across reads
    const records = quoteFreeRecords(
      input,
      delimiter,
      skipFirst,
      (row) => {
        close();
        return tooLong(row);
      },
      (e) => {
        close();
        return unreadable(e);
      },
      (row) => {
        close();
        return tooWide(row);
      },
    );
    return { encoding: detected.encoding, encodingDetectedBy: detected.detectedBy, delimiter, records, close };
  }

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

  // Records are taken with parser.read(), synchronously while csv-parse has some buffered, and a
  // promise is awaited only when it has none: not one promise (or three generator steps) per row.
  let rowNumber = 0;
  let ended = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  parser.on('readable', notify);
  parser.on('end', () => {
    ended = true;
    notify();
  });
  parser.on('close', () => {
    ended = true;
    notify();
  });
  parser.on('error', (e) => {
    failure ??= e;
    notify();
  });

  const closeParser = () => {
    close();
    parser.destroy();
  };

  const fail = (e: unknown): never => {
    closeParser();
    if (e instanceof CsvError && e.code === 'CSV_MAX_RECORD_SIZE') {
      // csv-parse counts the records it has given, which may be more than those read yet
      throw tooLong(Math.max(rowNumber, (e as CsvError & { records?: number }).records ?? 0) + 1);
    }
    if (e instanceof CsvError) {
      const line = (e as CsvError & { lines?: number }).lines;
      throw new InputError(
        'MALFORMED_CSV',
        file,
        `${file}: cannot read the CSV${line ? ` at line ${line}` : ''}: ${e.message.replace(/^Invalid Record Length: |^Quote Not Closed: /, '')}`,
        rowNumber + 1,
      );
    }
    throw unreadable(e);
  };

  const records: RecordSource = {
    next() {
      if (failure !== undefined) fail(failure);
      const values = parser.read() as string[] | null;
      if (values !== null) return { rowNumber: ++rowNumber, values };
      if (failure !== undefined) fail(failure);
      return ended ? undefined : NEED_MORE;
    },
    wait() {
      if (ended || failure !== undefined) return Promise.resolve();
      return new Promise<void>((resolve) => {
        wake = resolve;
      });
    },
  };
  return { encoding: detected.encoding, encodingDetectedBy: detected.detectedBy, delimiter, records, close: closeParser };
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

/** Does the file hold a quote byte after `start`? (In UTF-16 a 0x22 byte may be half of another character: read by csv-parse then, to be safe.) */
function hasQuote(path: string, start: number): boolean {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (let at = start; ;) {
      const n = readSync(fd, buf, 0, buf.length, at);
      if (n === 0) return false;
      if (buf.subarray(0, n).indexOf(0x22) !== -1) return true;
      at += n;
    }
  } finally {
    closeSync(fd);
  }
}

const RECORD_END = /\r\n|\n|\r/;

/**
 * The records of a text with no quote, as csv-parse gives them with our options: a record ends at
 * CRLF, LF or CR, an empty line is one empty cell, nothing follows the last record delimiter, a
 * BOM at the start is dropped, `skipFirst` drops the first record. A record whose cells hold more
 * than MAX_RECORD_BYTES characters is refused as csv-parse refuses it, and never held whole: a
 * line without its end is given up once longer than that.
 */
export function quoteFreeRecords(
  input: NodeJS.ReadableStream,
  delimiter: Delimiter,
  skipFirst: boolean,
  tooLong: (row: number) => Error,
  failed: (e: unknown) => Error,
  tooWide: (row: number) => Error,
): RecordSource {
  let rowNumber = 0;
  let parsed = 0; // records cut so far (rowNumber counts those handed out)
  let skip = skipFirst;
  let pending = ''; // text after the last record end
  let pendingCells = 0; // its characters less its delimiters: what csv-parse counts
  let pendingDelimiters = 0;
  const delimitersIn = (text: string) => {
    let delimiters = 0;
    for (let i = text.indexOf(delimiter); i !== -1; i = text.indexOf(delimiter, i + 1)) delimiters++;
    return delimiters;
  };
  /** The pending text grew by `text`: refused once too long or too wide. */
  const grow = (text: string) => {
    const d = delimitersIn(text);
    pendingDelimiters += d;
    pendingCells += text.length - d;
    if (pendingCells > MAX_RECORD_BYTES + 1) throw tooLong(parsed + 1);
    if (pendingDelimiters >= MAX_RECORD_CELLS) throw tooWide(parsed + 1);
  };
  let first = true; // the BOM check
  let ended = false;
  let failure: Error | undefined;
  let queue: string[][] = [];
  let at = 0;
  // One read at a time: the stream is paused after each chunk and resumed when its records are used up.
  let chunk: string | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  input.on('data', (c: string | Buffer) => {
    input.pause();
    chunk = typeof c === 'string' ? c : c.toString('utf8');
    notify();
  });
  input.on('end', () => {
    ended = true;
    notify();
  });
  input.on('error', (e) => {
    failure ??= failed(e);
    notify();
  });

  const cut = (text: string, last: boolean) => {
    let body = text;
    let held = '';
    // a CR at the end of a read may be the first half of a CRLF
    if (!last && body.length > 0 && body.charCodeAt(body.length - 1) === 0x0d) {
      body = body.slice(0, -1);
      held = '\r';
    }
    const lines = body.split(RECORD_END);
    pending = lines.pop()! + held;
    if (last) {
      if (pending !== '') lines.push(pending); // the last record, without its end
      pending = '';
    }
    const out: string[][] = [];
    for (const line of lines) {
      if (skip) {
        skip = false;
        continue;
      }
      // (split no further than one cell too many: a line of a million delimiters is not made into cells)
      const cells = line.split(delimiter, MAX_RECORD_CELLS + 1);
      if (cells.length > MAX_RECORD_CELLS) throw tooWide(parsed + 1);
      // csv-parse counts the characters of the cells, not the delimiters between them
      if (line.length - (cells.length - 1) > MAX_RECORD_BYTES + 1) throw tooLong(parsed + 1);
      parsed++;
      out.push(cells);
    }
    pendingCells = 0;
    pendingDelimiters = 0;
    grow(pending);
    queue = out;
    at = 0;
  };

  return {
    next() {
      for (;;) {
        if (at < queue.length) return { rowNumber: ++rowNumber, values: queue[at++]! };
        if (failure) throw failure;
        if (chunk === undefined) {
          if (!ended) {
            input.resume();
            return NEED_MORE;
          }
          if (pending === '') return undefined;
          const rest = pending;
          try {
            cut(rest, true);
          } catch (e) {
            failure = e as Error;
          }
          continue;
        }
        let text = chunk;
        chunk = undefined;
        if (first) {
          first = false;
          if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // as csv-parse's bom option
        }
        if (text.indexOf('\n') === -1 && text.indexOf('\r') === -1 && pending.charCodeAt(pending.length - 1) !== 0x0d) {
          // the middle of a long line: kept, not cut again with each read
          pending += text;
          try {
            grow(text);
          } catch (e) {
            failure = e as Error;
          }
          continue;
        }
        try {
          cut(pending + text, false);
        } catch (e) {
          failure = e as Error;
        }
      }
    },
    wait() {
      if (chunk !== undefined || ended || failure) return Promise.resolve();
      return new Promise<void>((resolve) => {
        wake = resolve;
      });
    },
  };
}

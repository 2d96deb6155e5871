// A file with no quote is read by splitting (quoteFreeRecords), not by csv-parse: the records
// must be csv-parse's own, whatever the line ends, blank lines, BOM, "sep=" line, delimiter and
// however the text is cut into reads. And through readBatch, a file reads the same with one quote
// added far away (csv-parse then reads it all).
import { Readable } from 'node:stream';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { quoteFreeRecords } from '../../src/input/csv.ts';
import { MAX_RECORD_BYTES } from '../../src/input/limits.ts';
import { NEED_MORE, type RecordSource } from '../../src/input/rows.ts';
import { readBatch, type Delimiter } from '../../src/input/index.ts';
import { generateCsv } from '../engine/helpers.ts';

/** csv-parse with the options of src/input/csv.ts. */
function byCsvParse(text: string, delimiter: Delimiter, skipFirst: boolean): string[][] | 'too long' {
  try {
    const records: string[][] = parse(Buffer.from(text, 'utf8'), {
      delimiter,
      bom: true,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: false,
      record_delimiter: ['\r\n', '\n', '\r'],
      from_line: skipFirst ? 2 : 1,
      encoding: 'utf8',
      max_record_size: MAX_RECORD_BYTES,
    });
    return records;
  } catch (e) {
    if ((e as { code?: string }).code === 'CSV_MAX_RECORD_SIZE') return 'too long';
    throw e;
  }
}

/** The text handed over in reads of the lengths given (the next one only once the last is used up), then the end. */
async function bySplitting(text: string, cuts: number[], delimiter: Delimiter, skipFirst: boolean): Promise<string[][] | 'too long'> {
  const stream = new Readable({ read() {}, encoding: 'utf8', highWaterMark: 1 }); // a push is one read
  const source: RecordSource = quoteFreeRecords(
    stream,
    delimiter,
    skipFirst,
    () => new Error('too long'),
    (e) => e as Error,
    () => new Error('too wide'),
  );
  const reads: string[] = [];
  let at = 0;
  for (const n of cuts) {
    if (at >= text.length) break;
    reads.push(text.slice(at, at + n));
    at += n;
  }
  if (at < text.length) reads.push(text.slice(at));
  const out: string[][] = [];
  try {
    for (;;) {
      const r = source.next();
      if (r === undefined) return out;
      if (r === NEED_MORE) {
        const next = reads.shift();
        stream.push(next === undefined ? null : next);
        await source.wait();
      } else {
        expect(r.rowNumber).toBe(out.length + 1);
        out.push(r.values);
      }
    }
  } catch (e) {
    if ((e as Error).message === 'too long') return 'too long';
    throw e;
  }
}

describe('records of a file with no quote', () => {
  it('are the records csv-parse gives, however the text is cut into reads', async () => {
    const piece = fc.constantFrom('a', 'bc', 'é', '€', '😀', ' ', '', '\r', '\n', '\r\n', ',', ';', '\t', '|', '\uFEFF', 'x y', '0');
    await fc.assert(
      fc.asyncProperty(
        fc.array(piece, { maxLength: 40 }).map((a) => a.join('')),
        fc.constantFrom<Delimiter>(',', ';', '\t', '|'),
        fc.boolean(),
        fc.array(fc.integer({ min: 1, max: 7 }), { maxLength: 30 }),
        async (text, delimiter, skipFirst, cuts) => {
          expect(await bySplitting(text, cuts, delimiter, skipFirst)).toEqual(byCsvParse(text, delimiter, skipFirst));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('refuses a record longer than csv-parse allows, and reads one just under', async () => {
    for (const cells of [MAX_RECORD_BYTES - 10, MAX_RECORD_BYTES, MAX_RECORD_BYTES + 1, MAX_RECORD_BYTES + 2, MAX_RECORD_BYTES + 50]) {
      const long = `${'x'.repeat(cells - 3)},a,b`; // `cells` characters of cells, two delimiters
      for (const text of [`h\n${long}\nlast\n`, `h\n${long}`]) {
        const expected = byCsvParse(text, ',', false);
        expect(await bySplitting(text, [65536, 65536], ',', false), `${cells} ${JSON.stringify(text.slice(-6))}`).toEqual(expected);
      }
    }
  });
});

describe('a batch read by splitting or by csv-parse', () => {
  it('gives the same rows (a quote in a cell far below makes csv-parse read the whole file)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-quote-free-'));
    const text = generateCsv({ rows: 3000, prefix: 'Q' }).replace(/\n/g, '\r\n');
    const at = text.lastIndexOf('Salary January 2025,'); // the last row's narration
    const quoted = `${text.slice(0, at)}Salary "January" 2025${text.slice(at + 'Salary January 2025'.length)}`;
    const rowsOf = async (name: string, content: string) => {
      const p = join(dir, name);
      writeFileSync(p, `\uFEFF${content}`);
      const s = await readBatch(p);
      const rows = [];
      for await (const r of s.rows) rows.push(r);
      return { rows, columns: s.columns, delimiter: s.delimiter };
    };
    const plain = await rowsOf('plain.csv', text);
    const withQuote = await rowsOf('quoted.csv', quoted);
    expect(plain.rows).toHaveLength(3000);
    expect(withQuote.rows[2999]!.cells.narration).toBe('Salary "January" 2025'); // relax_quotes: a quote inside a cell is text
    withQuote.rows[2999]!.cells.narration = 'Salary January 2025';
    expect(withQuote).toEqual(plain);
  });
});

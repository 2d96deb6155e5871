import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import iconv from 'iconv-lite';
import fc from 'fast-check';
import {
  writeResults,
  readResults,
  RESULT_COLUMNS,
  OPTIONAL_RESULT_COLUMNS,
  NUMERIC_RESULT_COLUMNS,
  type ResultRow,
  type ResultsSource,
  type ResultsTable,
  type ResultValues,
} from '../../src/results/results.ts';
import { resultsHeader } from '../../src/results/layout.ts';
import { isPlainDecimal } from '../../src/results/numbers.ts';
import { BATCH_COLUMNS, createdResult, csvLines, csvText, table, tempDir } from './helpers.ts';

const tmp = tempDir('pb-results-csv-');
afterAll(tmp.cleanup);

describe('CSV results', () => {
  it('is UTF-8 with a BOM and CRLF line endings', async () => {
    const p = tmp.path('r.csv');
    await writeResults(p, table('csv', 2));
    const bytes = readFileSync(p);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = bytes.toString('utf8');
    expect(text.endsWith('\r\n')).toBe(true);
    expect(text.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    expect(text).toContain('Zoë Müller 1');
  });

  it.each([',', ';', '\t', '|'])('keeps the input delimiter %j', async (d) => {
    const p = tmp.path('d.csv');
    await writeResults(p, table('csv', 2, d));
    expect(csvLines(p)[0]).toBe([...BATCH_COLUMNS, ...RESULT_COLUMNS].join(d));
    const back = await readResults(p);
    expect(back.delimiter).toBe(d);
    expect(back.rows).toHaveLength(2);
  });

  it('round-trips every cell, quoting delimiters, quotes and newlines', async () => {
    const t = table('csv', 3, ';');
    t.rows[0]!.cells.narration = 'a;b, "c"\r\nd\ne\rf';
    t.rows[1]!.cells.accountName = '  spaced  ';
    t.rows[2]!.result = {
      status: 'REJECTED',
      idempotencyKey: 'k',
      errorCode: 'INSUFFICIENT_FUNDS',
      errorMessage: 'Balance 10.00; needed "12.50"',
      requestId: 'r-1',
    };
    const p = tmp.path('q.csv');
    await writeResults(p, t);
    const back = await readResults(p);
    expect(back.format).toBe('csv');
    expect(back.inputColumns).toEqual(BATCH_COLUMNS);
    expect(back.rows).toEqual(t.rows);
  });

  it('writes an absent result value as an empty cell and reads it back as absent', async () => {
    const p = tmp.path('e.csv');
    await writeResults(p, {
      format: 'csv',
      inputColumns: ['reference'],
      rows: [{ rowNumber: 2, cells: { reference: 'R' }, result: { status: 'INVALID', errorMessage: '' } }],
    });
    expect(csvLines(p)[1]).toBe('R,INVALID' + ','.repeat(RESULT_COLUMNS.length - 1));
    expect((await readResults(p)).rows[0]!.result).toEqual({ status: 'INVALID' });
  });

  it('reads a results file re-saved by Excel as Windows-1252 with a sep= line', async () => {
    const original = tmp.path('orig.csv');
    await writeResults(original, table('csv', 1, ';'));
    const text = readFileSync(original, 'utf8').replace(/^\uFEFF/, '');
    const p = tmp.path('ansi.csv');
    writeFileSync(p, iconv.encode(`sep=;\r\n${text}`, 'windows-1252'));
    const back = await readResults(p);
    expect(back.delimiter).toBe(';');
    expect(back.rows[0]!.cells.accountName).toBe('Zoë Müller 1');
    expect(back.rows[0]!.result).toEqual(createdResult(1));
  });

  it('skips rows with every cell empty and keeps spreadsheet row numbers', async () => {
    const original = tmp.path('o.csv');
    await writeResults(original, table('csv', 2));
    const [header, r1, r2] = csvLines(original);
    const p = tmp.path('gaps.csv');
    writeFileSync(p, `${header}\r\n${r1}\r\n,,,\r\n\r\n${r2}\r\n`);
    const back = await readResults(p);
    expect(back.rows.map((r) => [r.rowNumber, r.cells.reference])).toEqual([
      [2, 'PAY-1'],
      [5, 'PAY-2'],
    ]);
  });
});

// ------------------------------------------------------------ csvText against a reference

// The oracle: the CSV rules written out by hand (quoting, neutralising by a Set of the trigger
// characters, BOM, CRLF after every line), so that csvText through csv-stringify is checked to
// write exactly the bytes of the hand-built writer it replaced.
const ORACLE_TRIGGERS = new Set(['=', '+', '-', '@', '\t', '\r']);
/** Hidden characters, by code point: C0 but tab, LF, CR; DEL and C1; the bidi and invisible format characters. */
const oracleHidden = (c: string | undefined): boolean => {
  const n = c === undefined ? -1 : c.charCodeAt(0);
  const within = (a: number, b: number) => n >= a && n <= b;
  return (
    (within(0, 0x1f) && ![9, 10, 13].includes(n)) ||
    within(0x7f, 0x9f) ||
    [0x61c, 0xfeff].includes(n) ||
    within(0x200b, 0x200f) ||
    within(0x202a, 0x202e) ||
    within(0x2060, 0x2064) ||
    within(0x2066, 0x2069)
  );
};
/** Each hidden character as \uHHHH; a backslash doubled when its run of backslashes comes before uHHHH or a hidden character. */
function oracleEscape(t: string): string {
  let out = '';
  for (let i = 0; i < t.length; i++) {
    const c = t[i]!;
    if (oracleHidden(c)) out += `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
    else if (c !== '\\') out += c;
    else {
      let j = i;
      while (t[j] === '\\') j++;
      out += /^u[0-9A-F]{4}/.test(t.slice(j)) || oracleHidden(t[j]) ? '\\\\' : '\\';
    }
  }
  return out;
}
const oracleNeutralise = (raw: string): string => {
  const t = oracleEscape(raw);
  return t.length > 0 && (ORACLE_TRIGGERS.has(t[0]!) || (t[0] === "'" && t.length > 1 && (ORACLE_TRIGGERS.has(t[1]!) || t[1] === "'")))
    ? `'${t}`
    : t;
};
const ORACLE_NUMERIC = new Set<string>(NUMERIC_RESULT_COLUMNS);
function oracleCsvText(t: ResultsTable): string {
  const delimiter = t.delimiter ?? ',';
  const special = new RegExp(`["\\r\\n${delimiter.replace(/[\\^\]-]/g, '\\$&')}]|^ | $`);
  const quote = (s: string): string => (s === '' || !special.test(s) ? s : `"${s.includes('"') ? s.replace(/"/g, '""') : s}"`);
  const { input, header, result } = resultsHeader(
    t.inputColumns,
    t.rows.map((r) => r.result),
  );
  const lines: string[] = [header.map((h) => quote(oracleNeutralise(h))).join(delimiter)];
  const rows = t.rows.every((r, i) => i === 0 || t.rows[i - 1]!.rowNumber <= r.rowNumber)
    ? t.rows
    : [...t.rows].sort((a, b) => a.rowNumber - b.rowNumber);
  for (const row of rows) {
    const fields: string[] = [];
    for (const c of input) fields.push(quote(oracleNeutralise(row.cells[c] ?? '')));
    for (const c of result) {
      const v = row.result[c] ?? '';
      fields.push(ORACLE_NUMERIC.has(c) && isPlainDecimal(v) ? v : quote(oracleNeutralise(v)));
    }
    lines.push(fields.join(delimiter));
  }
  return '\uFEFF' + lines.join('\r\n') + '\r\n';
}

describe('csvText (fast-check, against a reference written by hand)', () => {
  const DELIMITERS = [',', ';', '\t', '|'] as const;
  // cells: mostly empty or plain, plus every character that neutralising or quoting looks at, at
  // the start, the end or inside: triggers, quotes, CR/LF, spaces, each delimiter, non-ASCII
  const piece = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        '=',
        '+',
        '-',
        '@',
        '\t',
        '\r',
        '\n',
        '\r\n',
        '"',
        "'",
        ' ',
        ',',
        ';',
        '|',
        '0',
        '1.5',
        'é',
        'ß',
        '€',
        '😀',
        '\uFEFF',
        '\uD800',
        '\u001b',
        '\u202e',
        '\\',
        'u0041',
      ),
    },
    { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 4 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 2 }) },
  );
  const cell = fc.oneof(
    { weight: 3, arbitrary: fc.constant('') },
    { weight: 4, arbitrary: fc.string({ unit: piece, minLength: 1, maxLength: 6 }) },
  );
  const decimal = fc
    .tuple(fc.boolean(), fc.nat({ max: 10 ** 9 }), fc.integer({ min: 0, max: 4 }))
    .map(([neg, n, dp]) => `${neg ? '-' : ''}${dp ? (n / 10 ** dp).toFixed(dp) : n}`);
  const RESULT = [...RESULT_COLUMNS, ...OPTIONAL_RESULT_COLUMNS];
  const result: fc.Arbitrary<ResultValues> = fc.record(
    Object.fromEntries(
      RESULT.map((c) => [
        c,
        NUMERIC_RESULT_COLUMNS.includes(c) ? fc.oneof(decimal, cell, fc.constantFrom('-0', '1e5', ' 1.5', '+1', '01')) : cell,
      ]),
    ) as Record<(typeof RESULT)[number], fc.Arbitrary<string>>,
    { requiredKeys: [] },
  );
  // headers: any text, sometimes a result column's name (a results file retried: dropped from the
  // input block, or "documents" of an earlier version's layout), sometimes absent from a row's cells
  const headerName = fc.oneof(
    { weight: 4, arbitrary: fc.string({ unit: piece, minLength: 1, maxLength: 5 }) },
    { weight: 1, arbitrary: fc.constantFrom(...RESULT, 'documents', 'documents (2)') },
  );
  const WIDTH = 6;
  const tables = (rowCount: fc.Arbitrary<number>) =>
    fc
      .record({
        inputColumns: fc.uniqueArray(headerName, { maxLength: WIDTH }),
        delimiter: fc.option(fc.constantFrom(...DELIMITERS), { nil: undefined }),
        // a few distinct rows repeated up to rowCount, so long tables cost little to generate
        distinct: fc.array(
          fc.record({
            values: fc.array(cell, { minLength: WIDTH, maxLength: WIDTH }),
            missing: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat(2 ** WIDTH - 1) }), // bit j: no key for column j
            stray: fc.dictionary(fc.string({ maxLength: 3 }), cell, { maxKeys: 2 }),
            result,
            rowNumber: fc.integer({ min: 2, max: 50 }),
          }),
          { minLength: 1, maxLength: 5 },
        ),
        n: rowCount,
        sorted: fc.boolean(),
      })
      .map(({ inputColumns, delimiter, distinct, n, sorted }): ResultsTable => {
        const rows: ResultRow[] = Array.from({ length: n }, (_, k) => {
          const r = distinct[k % distinct.length]!;
          const own = inputColumns.map((c, j) => [c, r.values[j]!] as const).filter((_, j) => !((r.missing >> j) & 1));
          return { rowNumber: sorted ? k + 2 : r.rowNumber + (k % 7), cells: { ...r.stray, ...Object.fromEntries(own) }, result: r.result };
        });
        return { format: 'csv', inputColumns, rows, ...(delimiter === undefined ? {} : { delimiter }) };
      });

  it('gives exactly the text of the reference, on small tables', async () => {
    await fc.assert(
      fc.asyncProperty(tables(fc.integer({ min: 0, max: 8 })), async (t) => {
        expect(csvText(t)).toBe(oracleCsvText(t));
      }),
      { numRuns: 1000 },
    );
  });

  it("writes the same file when each row's values are made as it is written (a run's table)", async () => {
    await fc.assert(
      fc.asyncProperty(tables(fc.integer({ min: 0, max: 8 })), async (t) => {
        const source: ResultsSource = {
          format: 'csv',
          inputColumns: t.inputColumns,
          delimiter: t.delimiter,
          rows: t.rows.map((r) => ({ rowNumber: r.rowNumber, cells: r.cells })),
          resultAt: (i) => t.rows[i]!.result,
        };
        const p = tmp.path('source.csv');
        await writeResults(p, source);
        expect(readFileSync(p).equals(Buffer.from(oracleCsvText(t)))).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it('keeps the BOM, the CRLF after every line and nothing after the last one', () => {
    const t = table('csv', 2500, ';');
    const text = csvText(t);
    expect(text).toBe(oracleCsvText(t));
    expect(text.startsWith('\uFEFF')).toBe(true);
    expect(text.split('\r\n')).toHaveLength(2502); // header, 2,500 rows, '' after the last CRLF
    expect(text.endsWith('\r\n') && !text.endsWith('\r\n\r\n')).toBe(true);
    expect(csvText({ format: 'csv', inputColumns: ['a'], rows: [] })).toBe(oracleCsvText({ format: 'csv', inputColumns: ['a'], rows: [] }));
  });
});

// write → read is lossless for every string, in both formats: arbitrary text (leading = + - @ tab
// CR, quotes, delimiters, CR/LF, _x0041_-like sequences, any Unicode code point) in the batch's
// cells and in every result column, and exact decimals in the numeric columns.
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  writeResults,
  readResults,
  RESULT_COLUMNS,
  NUMERIC_RESULT_COLUMNS,
  type ResultRow,
  type ResultValues,
} from '../../src/results/results.ts';
import { tempDir } from './helpers.ts';

const tmp = tempDir('pb-results-prop-');
afterAll(tmp.cleanup);

const tricky = fc.constantFrom(
  '=',
  '+',
  '-',
  '@',
  '\t',
  '\r',
  '\n',
  '\r\n',
  "'",
  '"',
  ',',
  ';',
  '|',
  ' ',
  '_x0041_',
  '_x005F_',
  '_',
  'é',
  '😀',
  '\u0000',
  '\uFFFE',
  '\uFEFF',
  'sep=',
);
const unit = fc.oneof(
  { weight: 2, arbitrary: tricky },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
);
const text = fc.string({ unit, maxLength: 12 });
const nonEmpty = fc.string({ unit, minLength: 1, maxLength: 12 });

/** Decimals as the engine produces them (exact, up to 20 digits), and sometimes anything at all. */
const decimal = fc
  .tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.integer({ min: 0, max: 12 }))
  .map(([neg, digits, scale]) => {
    const s = digits.toString().padStart(scale + 1, '0');
    const t = scale ? `${s.slice(0, s.length - scale)}.${s.slice(s.length - scale)}` : s;
    return neg ? `-${t}` : t;
  });

const RESERVED = new Set<string>(RESULT_COLUMNS);
// Headers are trimmed and made unique by every reader, as readBatch does: generate them that way.
const header = nonEmpty.filter((h) => h.trim() === h && !RESERVED.has(h) && !/ \(\d+\)$/.test(h) && !/^\(column \d+\)$/.test(h));

const resultValues: fc.Arbitrary<ResultValues> = fc.record(
  Object.fromEntries(RESULT_COLUMNS.map((c) => [c, NUMERIC_RESULT_COLUMNS.includes(c) ? fc.oneof(decimal, nonEmpty) : nonEmpty])) as Record<
    (typeof RESULT_COLUMNS)[number],
    fc.Arbitrary<string>
  >,
  { requiredKeys: ['status'] },
);

const tables = fc.uniqueArray(header, { minLength: 1, maxLength: 5 }).chain((inputColumns) =>
  fc.record({
    inputColumns: fc.constant(inputColumns),
    rows: fc.array(
      fc.record({
        cells: fc.tuple(...inputColumns.map(() => text)).map((vals) => Object.fromEntries(inputColumns.map((c, i) => [c, vals[i]!]))),
        result: resultValues,
      }),
      { minLength: 1, maxLength: 6 },
    ),
    delimiter: fc.constantFrom(',', ';', '\t', '|'),
  }),
);

describe('lossless round trip (fast-check)', () => {
  it.each(['csv', 'xlsx'] as const)('%s: readResults(writeResults(t)) gives t back', async (format) => {
    const path = tmp.path(`p.${format}`);
    await fc.assert(
      fc.asyncProperty(tables, async ({ inputColumns, rows, delimiter }) => {
        const written: ResultRow[] = rows.map((r, i) => ({ rowNumber: i + 2, ...r }));
        await writeResults(path, { format, inputColumns, rows: written, delimiter });
        const back = await readResults(path);
        expect(back.inputColumns).toEqual(inputColumns);
        expect(back.rows).toEqual(written);
        if (format === 'csv') expect(back.delimiter).toBe(delimiter);
      }),
      { numRuns: format === 'csv' ? 200 : 100 },
    );
  });
});

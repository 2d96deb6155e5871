// trimCell skips the trim() call for most cells: it must give what trim() gives for any text.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { cellsMaker, trimCell } from '../../src/input/rows.ts';

// every character String.prototype.trim removes, and neighbours that it keeps
const WS =
  '\t\n\v\f\r \u0085\u00a0\u1680\u180e\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u200b\u2028\u2029\u202f\u205f\u3000\ufeff\u001f\u0021\u009f';

describe('trimCell', () => {
  it('equals trim() on any text, whitespace of every kind included', () => {
    const ch = fc.oneof(fc.constantFrom(...WS), fc.string({ unit: 'grapheme', maxLength: 1 }), fc.constantFrom('a', '1', 'é', '\uFFFD'));
    fc.assert(
      fc.property(
        fc.array(ch, { maxLength: 8 }).map((a) => a.join('')),
        (v) => {
          expect(trimCell(v)).toBe(v.trim());
        },
      ),
      { numRuns: 5000 },
    );
    for (let c = 0; c <= 0xffff; c++) {
      const v = String.fromCharCode(c);
      expect(trimCell(`${v}x${v}`)).toBe(`${v}x${v}`.trim());
    }
  });
});

// cellsMaker must give what assigning the trimmed cells one by one to {} gives, key order
// included, whatever the headers are.
describe('cellsMaker', () => {
  const reference = (columns: string[], values: (string | undefined)[]) => {
    const cells: Record<string, string> = {};
    columns.forEach((c, i) => {
      if (c !== '__proto__') cells[c] = values[i] === undefined ? '' : values[i].trim();
    });
    return cells;
  };
  const header = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom(
      '__proto__',
      'constructor',
      'toString',
      'hasOwnProperty',
      '1',
      '01',
      '-1',
      '4294967295',
      '"',
      '\\',
      '`${x}`',
      '\u2028',
      '\u2029',
      '});process.exit(1);({',
      'a"b',
      "it's",
      'é',
      '',
    ),
  );
  const value = fc.option(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom(' x ', '\t', '\u00a0a', '=1+2', '"q"')), {
    nil: undefined,
  });

  it('equals assigning the trimmed cells one by one, for any headers (unique, as mapColumns leaves them)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(header, { maxLength: 40 }), fc.array(value, { maxLength: 45 }), (columns, values) => {
        const cells = cellsMaker(columns)(values);
        const want = reference(columns, values);
        expect(cells).toEqual(want);
        expect(Object.keys(cells)).toEqual(Object.keys(want));
        expect(Object.getPrototypeOf(cells)).toBe(Object.prototype);
      }),
      { numRuns: 2000 },
    );
  });

  it('the same past 256 columns (a template copy instead of a literal)', () => {
    const columns = Array.from({ length: 300 }, (_, i) => (i === 7 ? '__proto__' : i === 9 ? 'constructor' : `col ${i}`));
    const values = Array.from({ length: 290 }, (_, i) => (i % 3 === 0 ? ` v${i} ` : i % 3 === 1 ? '' : undefined));
    const cells = cellsMaker(columns)(values);
    expect(cells).toEqual(reference(columns, values));
    expect(Object.keys(cells)).toEqual(Object.keys(reference(columns, values)));
    expect(cells['col 0']).toBe('v0');
    expect(cells['col 299']).toBe('');
  });
});

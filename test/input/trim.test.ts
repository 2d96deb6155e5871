// trimCell skips the trim() call for most cells: it must give what trim() gives for any text.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { trimCell } from '../../src/input/rows.ts';

// every character String.prototype.trim removes, and neighbours that it keeps
const WS = '\t\n\v\f\r \u0085\u00a0\u1680\u180e\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u200b\u2028\u2029\u202f\u205f\u3000\ufeff\u001f\u0021\u009f';

describe('trimCell', () => {
  it('equals trim() on any text, whitespace of every kind included', () => {
    const ch = fc.oneof(fc.constantFrom(...WS), fc.string({ unit: 'grapheme', maxLength: 1 }), fc.constantFrom('a', '1', 'é', '\uFFFD'));
    fc.assert(fc.property(fc.array(ch, { maxLength: 8 }).map((a) => a.join('')), (v) => {
      expect(trimCell(v)).toBe(v.trim());
    }), { numRuns: 5000 });
    for (let c = 0; c <= 0xffff; c++) {
      const v = String.fromCharCode(c);
      expect(trimCell(`${v}x${v}`)).toBe(`${v}x${v}`.trim());
    }
  });
});

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseAmount } from '../../src/validation/amount.ts';
import { Dec } from '../../src/money.ts';

const read = (t: string, c = 'USD') => {
  const r = parseAmount(t, c);
  return r.ok ? r.value.toFixed() : r.code;
};

describe('amounts', () => {
  it('reads the unambiguous spreadsheet forms exactly', () => {
    expect(read('1234.56')).toBe('1234.56');
    expect(read('1,234.56')).toBe('1234.56');
    expect(read('1.234,56', 'EUR')).toBe('1234.56');
    expect(read('1 234,56', 'EUR')).toBe('1234.56');
    expect(read('1\u00a0234,56', 'EUR')).toBe('1234.56');
    expect(read("1'234.56", 'CHF')).toBe('1234.56');
    expect(read('1,234,567')).toBe('1234567');
    expect(read('1.234.567', 'JPY')).toBe('1234567');
    expect(read('1234,5', 'EUR')).toBe('1234.5');
    expect(read('0.1')).toBe('0.1');
  });

  it('refuses "1,234" and says both readings', () => {
    const r = parseAmount('1,234', 'USD');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.code).toBe('AMBIGUOUS_AMOUNT');
      expect(r.message).toContain('1234');
      expect(r.message).toContain('1.234');
    }
  });

  it('refuses "1.500" in a currency of fewer than 3 decimals, and says both readings', () => {
    for (const [t, c] of [
      ['1.500', 'USD'],
      ['12.000', 'EUR'],
      ['100.000', 'USD'],
      ['1.234', 'USD'],
      ['1.500', 'JPY'],
    ] as const) {
      expect(read(t, c), `${t} ${c}`).toBe('AMBIGUOUS_AMOUNT');
    }
    const r = parseAmount('1.500', 'USD');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.message).toBe('"1.500" reads as 1500 (dot groups thousands) or 1.5 (dot is the decimal mark)');
      expect(r.expected).toBe('1500.00 or 1.50, written without a thousands separator');
    }
    // a currency of 3 decimals reads it as a decimal; so does the text of a numeric Excel cell
    expect(read('1.500', 'KWD')).toBe('1.5');
    expect(read('1.500', 'BHD')).toBe('1.5');
    const n = parseAmount('1.5', 'USD', { fromNumber: true });
    expect(n.ok && n.value.toFixed()).toBe('1.5');
    expect(parseAmount('1.234', 'USD', { fromNumber: true }).ok).toBe(false);
    // not a thousands group: read as before
    expect(read('0.500')).toBe('0.5');
    expect(read('1234.500')).toBe('1234.5');
    expect(read('1.50')).toBe('1.5');
    expect(read('1.500,00', 'EUR')).toBe('1500');
    expect(read('1.000.000', 'EUR')).toBe('1000000');
  });

  // Issue 31: "expected 100555.00" for the EUR amount "100.555" was a thousand times the likely intent.
  it('never hints an amount shifted by a power of ten: a value with too many decimals is rounded by the person', () => {
    const hint = (t: string, c: string, o?: { fromNumber?: boolean }) => {
      const r = parseAmount(t, c, o);
      return r.ok ? r.value.toFixed() : [r.code, r.message, r.expected];
    };
    expect(hint('100.555', 'EUR')).toEqual([
      'AMBIGUOUS_AMOUNT',
      '"100.555" has 3 decimals; EUR has 2: round it to 100.56 or 100.55 yourself',
      'at most 2 decimals for EUR',
    ]);
    expect(hint('1.500', 'JPY')).toEqual([
      'AMBIGUOUS_AMOUNT',
      '"1.500" has 3 decimals; JPY has none: round it to 2 or 1 yourself',
      'at most 0 decimals for JPY',
    ]);
    // the text of a numeric Excel cell has no thousands separator: nothing hints that it had one
    expect(hint('100.555', 'EUR', { fromNumber: true })).toEqual([
      'AMOUNT_PRECISION',
      '100.555 has 3 decimals; EUR has 2: round it to 100.56 or 100.55 yourself',
      'at most 2 decimals for EUR',
    ]);
    expect(hint('10.1234', 'USD')).toEqual([
      'AMOUNT_PRECISION',
      '10.1234 has 4 decimals; USD has 2: round it to 10.13 or 10.12 yourself',
      'at most 2 decimals for USD',
    ]);
    expect(hint('100.5', 'JPY')).toEqual([
      'AMOUNT_PRECISION',
      '100.5 has 1 decimal; JPY has none: round it to 101 or 100 yourself',
      'at most 0 decimals for JPY',
    ]);
    // each locale's way of writing 100,555.50 reads as that value, with no hint at all
    for (const t of ['100,555.50', '100.555,50', '100 555,50', '100\u00a0555,50', "100'555.50", '100555.50', '100555,50'])
      expect(hint(t, 'EUR'), t).toBe('100555.5');
    // a reading the tool cannot choose names both, never one of them as the amount expected
    for (const [t, c] of [
      ['1,500', 'USD'],
      ['100,555', 'EUR'],
      ['1.500', 'USD'],
    ] as const) {
      const r = parseAmount(t, c);
      expect(r.ok, t).toBe(false);
      if (!r.ok) expect(r.expected, t).toMatch(/^[\d.]+ or [\d.]+, written without/);
    }
    // no hint of any amount text differs from a reading of it by a power of ten, whatever the currency's digits
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 999 }), fc.integer({ min: 0, max: 999 }), fc.constantFrom('EUR', 'JPY', 'USD'), (i, f, c) => {
        const r = parseAmount(`${i}.${String(f).padStart(3, '0')}`, c);
        if (r.ok || r.code !== 'AMBIGUOUS_AMOUNT' || r.expected.includes(' or ')) return;
        const value = new Dec(`${i}.${String(f).padStart(3, '0')}`);
        const [, up, down] = /round it to ([\d.]+) or ([\d.]+) yourself$/.exec(r.message) ?? [];
        for (const n of [up!, down!]) expect(new Dec(n).minus(value).abs().lt(1), `${n} for ${value.toFixed()} ${c}`).toBe(true);
      }),
    );
  });

  it('follows the currency minor units: JPY 0, USD 2, KWD 3', () => {
    expect(read('100', 'JPY')).toBe('100');
    expect(read('100.5', 'JPY')).toBe('AMOUNT_PRECISION');
    expect(read('10.1234', 'USD')).toBe('AMOUNT_PRECISION');
    expect(read('10.123', 'KWD')).toBe('10.123');
    expect(read('10.1234', 'KWD')).toBe('AMOUNT_PRECISION');
    expect(read('100.00', 'JPY')).toBe('100');
  });

  it('refuses what is not a positive amount', () => {
    for (const t of ['0', '-5', '(5)', 'abc', '$5', '1e5', '1,23,456.00', '1.2.3,4,5', '12.', '1 234 56', '1234567890123456']) {
      expect(read(t), t).not.toMatch(/^\d/);
    }
  });

  it('property: any amount with 2 decimals survives every accepted format', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 13n }), (cents) => {
        const d = new Dec(cents.toString()).dividedBy(100);
        const plain = d.toFixed(2);
        const [i, f] = plain.split('.') as [string, string];
        const grouped = (sep: string) => i.replace(/\B(?=(\d{3})+(?!\d))/g, sep);
        for (const text of [plain, `${grouped(',')}.${f}`, `${grouped('.')},${f}`, `${grouped(' ')},${f}`, `${grouped(' ')}.${f}`]) {
          const r = parseAmount(text, 'USD');
          expect(r.ok, text).toBe(true);
          if (r.ok) expect(r.value.equals(d), text).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('property: never throws, and never accepts a non-positive or over-precise amount', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('0', '1', '5', '9', ',', '.', ' ', "'", '-', 'e'), maxLength: 14 }),
        fc.constantFrom('JPY', 'USD', 'KWD'),
        (text, ccy) => {
          const r = parseAmount(text, ccy);
          if (r.ok) {
            expect(r.value.greaterThan(0)).toBe(true);
            expect(r.value.decimalPlaces()).toBeLessThanOrEqual(ccy === 'JPY' ? 0 : ccy === 'USD' ? 2 : 3);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});

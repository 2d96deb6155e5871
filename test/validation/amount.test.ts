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
    const jpy = parseAmount('1.500', 'JPY');
    if (!jpy.ok) expect(jpy.expected).toBe('1500, written without a thousands separator');
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

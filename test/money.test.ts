// src/money.ts: amounts as the API sends them, written with the currency's minor units, summed
// exactly. The properties check against integer arithmetic in BigInt, not against decimal.js.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { amountText, atLeastDecimals, Dec, formatAmount, formatApiAmount, formatApiSum, fromApi, minorUnits, toApi } from '../src/money.ts';
import { plural } from '../src/text.ts';

/** A BigInt of units of 10^-places as decimal text with exactly `places` decimals. */
const unitsText = (units: bigint, places: number): string => {
  const digits = (units < 0n ? -units : units).toString().padStart(places + 1, '0');
  const text = places ? `${digits.slice(0, -places)}.${digits.slice(-places)}` : digits;
  return units < 0n ? `-${text}` : text;
};

/** Cents of at most 15 digits: as a JSON number, c / 100 is exactly that decimal once read as text. */
const cents = fc.bigInt({ min: -(10n ** 15n) + 1n, max: 10n ** 15n - 1n });

describe('minor units', () => {
  it('come from ISO 4217, in any case; undefined for what is not a code', () => {
    expect([minorUnits('JPY'), minorUnits('USD'), minorUnits('usd'), minorUnits('KWD'), minorUnits('CLF')]).toEqual([0, 2, 2, 3, 4]);
    expect(minorUnits('ZZZ')).toBeUndefined();
    expect(formatAmount(new Dec('1.5'), 'ZZZ')).toBe('1.50'); // 2 when the currency is unknown
  });
});

describe('API amounts as text', () => {
  it('examples: padding, carrying, signs, rounding half up on the decimal sent', () => {
    expect(formatApiAmount(10, 'USD')).toBe('10.00');
    expect(formatApiAmount(1.5, 'KWD')).toBe('1.500');
    expect(formatApiAmount(-0.05, 'USD')).toBe('-0.05');
    expect(formatApiAmount(-0, 'USD')).toBe('0.00');
    expect(formatApiAmount(1500, 'JPY')).toBe('1500');
    expect(formatApiAmount('12.5', 'USD')).toBe('12.50');
    expect(formatApiAmount(2.675, 'USD')).toBe('2.68'); // half up, on the decimal 2.675 (not the double below it)
    expect(formatApiAmount(1e21, 'USD')).toBe('1000000000000000000000.00');
    expect(formatApiAmount(1e-7, 'USD')).toBe('0.00');
    expect(formatApiSum(0.1, 0.2, 'USD')).toBe('0.30'); // not 0.30000000000000004
    expect(formatApiSum(99.99, 0.01, 'USD')).toBe('100.00');
    expect(formatApiSum(-1.5, 1.5, 'USD')).toBe('0.00');
    expect(formatApiSum(0.05, -0.07, 'USD')).toBe('-0.02');
    expect(formatApiSum(10, 1.5, 'JPY')).toBe('12'); // 11.5 rounds half up
  });

  it('property: a number of mills is written in cents rounded half up, away from zero', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 15n) + 1n, max: 10n ** 15n - 1n }), (mills) => {
        const abs = mills < 0n ? -mills : mills;
        // the sign stays when a negative amount rounds to zero ("-0.00"), as decimal.js writes it
        const want = `${mills < 0n ? '-' : ''}${unitsText((abs + 5n) / 10n, 2)}`;
        expect(formatApiAmount(Number(unitsText(mills, 3)), 'USD')).toBe(want);
      }),
      { numRuns: 1_000 },
    );
  });

  it('property: an amount and its fee sum exactly, past what a double holds', () => {
    fc.assert(
      fc.property(cents, cents, (a, b) => {
        expect(formatApiSum(Number(unitsText(a, 2)), unitsText(b, 2), 'USD')).toBe(unitsText(a + b, 2));
      }),
      { numRuns: 1_000 },
    );
  });
});

describe('amounts in reports (amountText)', () => {
  it("the currency's minor units, half up; exact: padded, never cut; as it is for no ISO code; never -0", () => {
    expect(amountText(new Dec('1234.5'), 'EUR')).toBe('1234.50');
    expect(amountText(new Dec('1.005'), 'EUR')).toBe('1.01');
    expect(amountText(new Dec('1.005'), 'EUR', { exact: true })).toBe('1.005');
    expect(amountText(new Dec('-102.1'), 'eur', { exact: true })).toBe('-102.10');
    expect(amountText(new Dec('7'), 'JPY')).toBe('7');
    expect(amountText(new Dec('1.5'), 'ZZZ')).toBe('1.5');
    expect(amountText(new Dec('1.5'), undefined)).toBe('1.5');
    expect(amountText(new Dec('-0'), 'EUR', { exact: true })).toBe('0.00');
    expect(atLeastDecimals(new Dec('1.5'), 3)).toBe('1.500');
    expect(atLeastDecimals(new Dec('1.23456'), 2)).toBe('1.23456');
  });

  it('plural: one row, rows, thousands grouped; batches, matches', () => {
    expect([plural(1, 'row'), plural(0, 'row'), plural(12000, 'row')]).toEqual(['1 row', '0 rows', '12,000 rows']);
    expect([plural(1, 'batch'), plural(2, 'batch'), plural(3, 'match'), plural(2, 'process')]).toEqual([
      '1 batch',
      '2 batches',
      '3 matches',
      '2 processes',
    ]);
  });
});

describe('toApi', () => {
  it('property: a decimal of up to 15 significant digits survives the trip through a JSON number', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 15n) + 1n, max: 10n ** 15n - 1n }), fc.integer({ min: 0, max: 12 }), (units, places) => {
        const d = new Dec(unitsText(units, places));
        expect(fromApi(JSON.parse(JSON.stringify(toApi(d))) as number).eq(d)).toBe(true);
      }),
      { numRuns: 1_000 },
    );
  });

  it('refuses 16 significant digits rather than send another number', () => {
    expect(() => toApi(new Dec('1234567890123456'))).toThrow(/15 significant/);
    expect(() => toApi(new Dec('0.1234567890123456'))).toThrow(/15 significant/);
  });
});

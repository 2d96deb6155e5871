// formatApiAmount and formatApiSum write a created payout's amounts without decimal.js when the
// number already fits the currency's minor unit. Their text must be exactly what
// formatAmount(fromApi(...)) writes, for every number: results files stay byte-identical. ExactSum
// sums many terms in integers; its value must be the Decimal sum's, rounding at 40 digits included.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Dec, ExactSum, formatAmount, formatApiAmount, formatApiSum, fromApi } from '../../src/money.ts';

const CURRENCIES = ['JPY', 'USD', 'NGN', 'KWD', 'CLF', 'usd', 'ZZZ']; // 0, 2, 2, 3, 4 decimals; lower case; not ISO (2)

/** Doubles an API sends: cents, mills, whole units, huge and tiny ones, negatives, -0, and any double. */
const apiNumber = fc.oneof(
  fc.integer({ min: -1e9, max: 1e9 }).map((c) => c / 100),
  fc.integer({ min: -1e9, max: 1e9 }).map((c) => c / 1000),
  fc.integer({ min: -1e7, max: 1e7 }).map((c) => c / 10000),
  fc.integer({ min: -1e9, max: 1e9 }),
  fc.constantFrom(0, -0, 0.005, 0.015, 1.005, 2.675, 999999999999999.9, 1e20, 1e21, 123456789012345680000, 5e-7, 1e-7, -1e-7, 0.1 + 0.2, Number.MAX_SAFE_INTEGER, 2 ** 60),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

describe('API amounts as text: the same text as decimal.js', () => {
  it('formatApiAmount(n) = formatAmount(fromApi(n))', () => {
    fc.assert(
      fc.property(apiNumber, fc.constantFrom(...CURRENCIES), (n, c) => {
        expect(formatApiAmount(n, c)).toBe(formatAmount(fromApi(n), c));
      }),
      { numRuns: 20_000 },
    );
  });

  it('formatApiSum(a, b) = formatAmount(fromApi(a) + fromApi(b))', () => {
    fc.assert(
      fc.property(apiNumber, apiNumber, fc.constantFrom(...CURRENCIES), (a, b, c) => {
        expect(formatApiSum(a, b, c)).toBe(formatAmount(fromApi(a).plus(fromApi(b)), c));
      }),
      { numRuns: 20_000 },
    );
  });

  it('examples: padding, carrying, signs, rounding left to decimal.js', () => {
    expect(formatApiAmount(10, 'USD')).toBe('10.00');
    expect(formatApiAmount(1.5, 'KWD')).toBe('1.500');
    expect(formatApiAmount(-0.05, 'USD')).toBe('-0.05');
    expect(formatApiAmount(-0, 'USD')).toBe('0.00');
    expect(formatApiAmount(1500, 'JPY')).toBe('1500');
    expect(formatApiAmount(2.675, 'USD')).toBe('2.68'); // half up, on the decimal 2.675 (not the double below it)
    expect(formatApiAmount(1e21, 'USD')).toBe('1000000000000000000000.00');
    expect(formatApiSum(0.1, 0.2, 'USD')).toBe('0.30'); // not 0.30000000000000004
    expect(formatApiSum(99.99, 0.01, 'USD')).toBe('100.00');
    expect(formatApiSum(-1.5, 1.5, 'USD')).toBe('0.00');
    expect(formatApiSum(0.05, -0.07, 'USD')).toBe('-0.02');
    expect(formatApiSum(10, 1.5, 'JPY')).toBe('12'); // 11.5 rounds half up
  });
});

describe('ExactSum: the value a Decimal sum gives', () => {
  const decimalSum = (terms: (number | string)[]) => terms.reduce<ReturnType<typeof fromApi>>((a, t) => a.plus(typeof t === 'number' ? fromApi(t) : new Dec(t)), new Dec(0));
  const exactSum = (terms: (number | string)[]) => {
    const s = new ExactSum();
    for (const t of terms) typeof t === 'number' ? s.addApi(t) : s.add(new Dec(t));
    return s.value();
  };
  /** Decimal terms as parseAmount makes them: any digits, up to 40 significant. */
  const decimalText = fc.tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 25n }), fc.integer({ min: 0, max: 15 }))
    .map(([neg, v, places]) => { const d = v.toString().padStart(places + 1, '0'); return `${neg ? '-' : ''}${places ? `${d.slice(0, -places)}.${d.slice(-places)}` : d}`; });

  it('on random sequences of API numbers and Decimals, huge, tiny and with exponents included', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(apiNumber, decimalText), { maxLength: 60 }), (terms) => {
        const want = decimalSum(terms);
        const got = exactSum(terms);
        expect(got.toFixed()).toBe(want.toFixed());
        expect(formatAmount(got, 'USD')).toBe(formatAmount(want, 'USD'));
      }),
      { numRuns: 5_000 },
    );
  });

  it('where decimal.js rounds at 40 digits, the sum rounds the same', () => {
    const tiny = '0.0000000000000000000000001'; // 1e-25 as a plain decimal: no exponent to send it to decimal.js early
    const terms = [1e20, tiny, 3.5, '-0.000000000000000000000000000001', 123456789.123];
    expect(exactSum(terms).toFixed()).toBe(decimalSum(terms).toFixed());
    expect(decimalSum([1e20, tiny]).toFixed()).toBe('100000000000000000000'); // decimal.js does round there
    expect(exactSum([1e20, tiny]).toFixed()).toBe('100000000000000000000');
    expect(exactSum([0.1, 0.2]).toFixed()).toBe('0.3');
    expect(exactSum([-1.5, 1.5]).toFixed()).toBe('0');
    expect(exactSum([]).toFixed()).toBe('0');
    const many = new ExactSum();
    for (let i = 0; i < 100_000; i++) many.addApi(10 + (i % 997) / 100);
    let d = new Dec(0);
    for (let i = 0; i < 100_000; i++) d = d.plus(fromApi(10 + (i % 997) / 100));
    expect(many.value().toFixed()).toBe(d.toFixed());
  });
});

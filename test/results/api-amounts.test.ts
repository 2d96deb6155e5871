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
  fc.constantFrom(
    0,
    -0,
    0.005,
    0.015,
    1.005,
    2.675,
    999999999999999.9,
    1e20,
    1e21,
    123456789012345680000,
    5e-7,
    1e-7,
    -1e-7,
    0.1 + 0.2,
    Number.MAX_SAFE_INTEGER,
    2 ** 60,
  ),
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
  const decimalSum = (terms: (number | string)[]) =>
    terms.reduce<ReturnType<typeof fromApi>>((a, t) => a.plus(typeof t === 'number' ? fromApi(t) : new Dec(t)), new Dec(0));
  const exactSum = (terms: (number | string)[]) => {
    const s = new ExactSum();
    for (const t of terms) {
      if (typeof t === 'number') s.addApi(t);
      else s.add(new Dec(t));
    }
    return s.value();
  };
  /** Decimal terms as parseAmount makes them: any digits, up to 40 significant. */
  const decimalText = fc
    .tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 25n }), fc.integer({ min: 0, max: 15 }))
    .map(([neg, v, places]) => {
      const d = v.toString().padStart(places + 1, '0');
      return `${neg ? '-' : ''}${places ? `${d.slice(0, -places)}.${d.slice(-places)}` : d}`;
    });

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

// ExactSum sums in plain Numbers while the scaled sum and its magnitude bound stay within 2^53 - 1,
// then in BigInt, then (past 30 digits, or for an exponent) in decimal.js. Terms here sit on those
// edges: sums that cross 2^53 units (at 0, 2 or more decimals), the 30-digit LIMIT, exponents.
describe('ExactSum across its Number, BigInt and decimal.js ranges', () => {
  const SAFE = Number.MAX_SAFE_INTEGER;
  type Term = { api: number } | { dec: string };

  /** API numbers: whole, cents, 0.1-ish, binary fractions, near 2^53 (as units of 0..6 decimals), huge, tiny, exponents. */
  const api = fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: -1e6, max: 1e6 }) },
    { weight: 4, arbitrary: fc.integer({ min: -1e8, max: 1e8 }).map((c) => c / 100) },
    { weight: 1, arbitrary: fc.integer({ min: -1e6, max: 1e6 }).map((c) => c / 1e6) },
    { weight: 1, arbitrary: fc.constantFrom(0.1, 0.2, 0.3, 0.1 + 0.2, 0.7 + 0.1, 1.1, 1.005, 2.675, 1.5, -0.1, -0) },
    { weight: 1, arbitrary: fc.tuple(fc.maxSafeInteger(), fc.integer({ min: 0, max: 10 })).map(([m, j]) => m / 2 ** j) },
    { weight: 2, arbitrary: fc.tuple(fc.maxSafeInteger(), fc.integer({ min: 1, max: 6 })).map(([m, p]) => m / 10 ** p) },
    {
      weight: 3,
      arbitrary: fc
        .tuple(fc.integer({ min: -3000, max: 3000 }), fc.integer({ min: 0, max: 6 }), fc.boolean())
        .map(([d, p, neg]) => ((neg ? -1 : 1) * (2 ** 53 + d)) / 10 ** p),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        SAFE,
        -SAFE,
        SAFE - 1,
        2 ** 53,
        // eslint-disable-next-line no-loss-of-precision -- the double a JSON body holds for this literal
        9007199254740993,
        2 ** 53 + 2,
        4e14,
        4e14 - 0.01,
        1e15 + 0.25,
        1e20,
        -1e20,
        1e21,
        123456789012345680000,
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom(1e-6, 1e-7, -1e-7, 5e-7, 0.000001, 0.0000015, 1.5e-10) },
    { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  );

  const text = (neg: boolean, v: bigint, places: number) => {
    const d = v.toString().padStart(places + 1, '0');
    return `${neg ? '-' : ''}${places ? `${d.slice(0, -places)}.${d.slice(-places)}` : d}`;
  };
  /** Decimal texts: amounts, near 2^53 units, many decimals, and near the 30-digit LIMIT. */
  const dec = fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 8n }), fc.integer({ min: 0, max: 3 }))
        .map(([n, v, p]) => text(n, v, p)),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(fc.boolean(), fc.bigInt({ min: 2n ** 53n - 3000n, max: 2n ** 53n + 3000n }), fc.integer({ min: 0, max: 6 }))
        .map(([n, v, p]) => text(n, v, p)),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 25n }), fc.integer({ min: 0, max: 30 }))
        .map(([n, v, p]) => text(n, v, p)),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.boolean(), fc.bigInt({ min: 10n ** 29n - 10n ** 6n, max: 10n ** 29n + 10n ** 6n }), fc.integer({ min: 0, max: 3 }))
        .map(([n, v, p]) => text(n, v, p)),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom('9007199254740991', '9007199254740992', '90071992547409.91', '0.00000001', '100000000', '-0', '1e-7'),
    },
  );
  const term: fc.Arbitrary<Term> = fc.oneof(
    api.map((n) => ({ api: n })),
    dec.map((d) => ({ dec: d })),
  );

  /** Adds the terms one by one, checking every partial sum against new Dec(0).plus(...) of the same terms. */
  const check = (terms: Term[]) => {
    const s = new ExactSum();
    let want = new Dec(0);
    terms.forEach((t, i) => {
      if ('api' in t) {
        s.addApi(t.api);
        want = want.plus(fromApi(t.api)); // new Dec(String(n))
      } else {
        s.add(new Dec(t.dec));
        want = want.plus(new Dec(t.dec));
      }
      expect(s.value().toFixed(), `after term ${i}: ${JSON.stringify(t)}`).toBe(want.toFixed());
    });
  };

  it('every partial sum equals the decimal.js sum, on random mixes of API numbers and Decimals', () => {
    fc.assert(fc.property(fc.array(term, { maxLength: 40 }), check), { numRuns: 3_000 });
  });

  it("a big number after small ones: its text, not the nearest multiple of the sum's unit", () => {
    // a term with more digits than the sum's places so far: the sum is rescaled, exactly or not at all
    const small = fc.constantFrom<Term>(
      { api: 0.5 },
      { api: 0.01 },
      { api: -0.001 },
      { api: 0.0001 },
      { dec: '0.00001' },
      { api: 0.000001 },
    );
    const big = fc
      .tuple(fc.integer({ min: 4e14, max: Number.MAX_SAFE_INTEGER }), fc.integer({ min: 1, max: 6 }), fc.boolean())
      .map(([m, p, neg]): Term => ({ api: ((neg ? -1 : 1) * m) / 10 ** p }));
    fc.assert(
      fc.property(fc.array(small, { minLength: 1, maxLength: 3 }), big, (s, b) => check([...s, b])),
      { numRuns: 3_000 },
    );
  });

  it('sums that climb past 2^53 units one small step at a time', () => {
    const small = fc.oneof(
      fc.integer({ min: -3, max: 3 }).map((n) => ({ api: n })),
      fc.constantFrom<Term>({ api: 0.01 }, { api: -0.01 }, { api: 0.5 }, { dec: '1' }, { dec: '0.01' }, { dec: '-0.5' }),
    );
    const start = fc.constantFrom<Term>(
      { api: SAFE - 2 },
      { api: -(SAFE - 2) },
      { api: 90071992547409.9 },
      { api: 45035996273704.95 },
      { dec: '9007199254740989' },
      { dec: '90071992547409.89' },
      { dec: '9007199254.740989' },
    );
    fc.assert(
      fc.property(start, fc.array(small, { minLength: 1, maxLength: 12 }), (s, rest) => check([s, ...rest])),
      { numRuns: 2_000 },
    );
  });

  it('examples at the edges', () => {
    check([{ api: SAFE }, { api: 1 }, { api: 1 }]); // 9007199254740993: one past what a Number holds
    check([{ dec: '9007199254740991' }, { dec: '1' }, { dec: '1' }]);
    check([{ api: -SAFE }, { api: -1 }, { api: -1 }]);
    check([{ api: 90071992547409 }, { api: 0.01 }, { api: 0.91 }, { api: 0.1 }]); // 2 decimals: 2^53 units at 9.0e13
    check([{ api: 1.5 }, { dec: '0.0000000000000000000000001' }, { api: 1e20 }, { api: 3.5 }]); // past LIMIT: decimal.js rounds
    check([{ api: 10.01 }, { api: 1e-7 }, { api: 0.1 }]); // an exponent: decimal.js from there
    check([{ api: 0.5 }, { api: 1e15 + 0.25 }, { api: 0.25 }]); // String(1e15 + 0.25) is 1000000000000000.2
    check([{ api: 0.01 }, { api: 80582735546197.1 }]); // 8058273554619709 / 100 reads back as this double too
    check([{ dec: '14653843466.3998' }, { dec: '0.01' }]); // 3 words in decimal.js: over 2^53 (inexact) before scaling down
    check([{ dec: '12345678901234567890123456.789' }, { api: 1.5 }, { dec: '1e-30' }]); // BigInt, then past LIMIT
    const s = new ExactSum().addApi(SAFE).addApi(1).addApi(1);
    expect(s.value().toFixed()).toBe('9007199254740993');
  });
});

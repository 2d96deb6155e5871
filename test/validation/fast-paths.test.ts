// The cheaper equivalents taken on the hot path of validation, against what they replace.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { resolve } from 'node:path';
import { composeIBAN, countrySpecs, validateIBAN } from 'ibantools';
import { ibanSurelyValid } from '../../src/validation/fields.ts';
import { documentPath, documentPaths } from '../../src/validation/documents.ts';
import { FirstRowIndex, accountKey, hash53, hash53Joined } from '../../src/validation/batch.ts';
import type { PayoutRow } from '../../src/validation/schemas.ts';

describe('document paths', () => {
  const pathText = fc
    .array(fc.constantFrom('a', 'b', '.', '/', '\\', ' ', 'é', ';', '..', '.pdf'), { maxLength: 12 })
    .map((a) => a.join(''));

  it('resolve like path.resolve(baseDir, d), whatever the folder and the name', () => {
    const bases = ['/tmp/batch', '/', '/tmp/x/../batch', '/tmp/batch/', 'relative/dir', '.', '/tmp/ sp ace'];
    fc.assert(
      fc.property(fc.constantFrom(...bases), pathText, (base, d) => {
        expect(documentPath(base, d)).toBe(d.startsWith('/') ? d : resolve(base, d));
      }),
      { numRuns: 500 },
    );
  });

  it('split a cell as split(";"), trim and drop empty ones', () => {
    fc.assert(
      fc.property(pathText, (cell) => {
        expect(documentPaths(cell)).toEqual(
          cell
            .split(';')
            .map((d) => d.trim())
            .filter(Boolean),
        );
      }),
      { numRuns: 500 },
    );
  });
});

describe('FirstRowIndex', () => {
  it('answers as a Map of first rows would, through its growths', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 3000 }),
        fc.integer({ min: 0, max: 2 ** 21 - 1 }),
        (picks, hi) => {
          const index = new FirstRowIndex(4);
          const map = new Map<number, number>();
          picks.forEach((k, i) => {
            // 53-bit keys that share their low 32 bits in pairs: collisions in the table
            const h = (k % 2) * hi * 4294967296 + Math.floor(k / 2) * 65536;
            const row = i + 2;
            const want = map.get(h);
            if (want === undefined) map.set(h, row);
            expect(index.firstOrAdd(h, row)).toBe(want);
          });
          expect(index.size).toBe(map.size);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('accountKey', () => {
  const opt = fc.option(fc.constantFrom('', '12345678', '601613', '021000021', '058', 'DEUTDEFF'), { nil: undefined });
  it('joins the non-empty bank identifiers with "/" when there is no IBAN', () => {
    fc.assert(
      fc.property(
        opt,
        opt,
        opt,
        opt,
        opt,
        fc.option(fc.constant('DE89370400440532013000'), { nil: undefined }),
        (accountNumber, sortCode, routingNumber, bankCode, swiftCode, iban) => {
          const beneficiary = {
            accountName: 'N',
            accountCurrency: 'EUR',
            accountNumber,
            sortCode,
            routingNumber,
            bankCode,
            swiftCode,
            iban,
            fpsId: '1234567',
          };
          const b = beneficiary as Record<string, string | undefined>;
          const id = iban ?? [accountNumber, sortCode, routingNumber, bankCode, swiftCode].filter(Boolean).join('/');
          expect(accountKey({ beneficiary: b } as unknown as PayoutRow)).toBe(id || '1234567');
        },
      ),
    );
  });
});

describe('ibanSurelyValid', () => {
  // every country ibantools knows, with a BBAN drawn from its format (valid or not) and the right
  // check digits, then often changed by one character or two
  const countries = Object.keys(countrySpecs).filter((c) => countrySpecs[c]!.chars && countrySpecs[c]!.bban_regexp);
  const chars = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  const candidate = fc
    .record({
      cc: fc.constantFrom(...countries),
      body: fc.array(fc.integer({ min: 0, max: 35 }), { minLength: 40, maxLength: 40 }),
      digitsOnly: fc.boolean(),
      edits: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 35 })), { maxLength: 2 }),
      cut: fc.integer({ min: -2, max: 1 }),
    })
    .map(({ cc, body, digitsOnly, edits, cut }) => {
      const spec = countrySpecs[cc]!;
      const bban = body
        .slice(0, spec.chars! - 4)
        .map((n) => chars[digitsOnly ? n % 10 : n])
        .join('');
      let v = composeIBAN({ countryCode: cc, bban }) ?? `${cc}00${bban}`;
      for (const [at, n] of edits) v = v.slice(0, at % v.length) + chars[n] + v.slice((at % v.length) + 1);
      return cut < 0 ? v.slice(0, cut) : cut > 0 ? v + '0' : v;
    });

  it('is true only for IBANs validateIBAN finds valid, and for all of them in practice', () => {
    let valid = 0;
    fc.assert(
      fc.property(candidate, (v) => {
        const truth = validateIBAN(v).valid;
        if (ibanSurelyValid(v)) expect(truth).toBe(true);
        else expect(truth).toBe(false);
        if (truth) valid++;
      }),
      { numRuns: 5000 },
    );
    expect(valid).toBeGreaterThan(100);
  });
});

describe('hash53Joined', () => {
  it('is hash53 of the parts joined by "|"', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.string(),
        fc.string(),
        fc.string({ unit: 'binary' }),
        fc.integer({ min: 0, max: 100 }),
        (a, b, c, d, seed) => {
          expect(hash53Joined(a, b, c, d, seed)).toBe(hash53(`${a}|${b}|${c}|${d}`, seed));
        },
      ),
      { numRuns: 500 },
    );
  });
});

// The rules that span rows: the first-row index behind duplicate references and rows, and the key
// of the probable-duplicate rule.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Dec } from '../../src/money.ts';
import { FirstRowIndex, accountKey, probableDuplicateKey } from '../../src/validation/batch.ts';
import type { PayoutRow } from '../../src/validation/schemas.ts';

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

describe('probableDuplicateKey', () => {
  it('keeps its values: the journal holds them, and a resumed run compares new rows with them', () => {
    const p = (beneficiary: Record<string, string>, amount: string, source: string, destination: string) =>
      ({ beneficiary, sourceAmount: new Dec(amount), sourceCurrency: source, destinationCurrency: destination }) as unknown as PayoutRow;
    expect(
      probableDuplicateKey(p({ accountName: 'A', accountCurrency: 'EUR', iban: 'DE89370400440532013000' }, '1500.50', 'USD', 'EUR')),
    ).toBe(198898079705021);
    expect(
      probableDuplicateKey(
        p({ accountName: 'A', accountCurrency: 'NGN', accountNumber: '0123456785', bankCode: '058' }, '250000', 'NGN', 'NGN'),
      ),
    ).toBe(4922734184280613);
    expect(probableDuplicateKey(p({ accountName: 'Ada', accountCurrency: 'HKD', fpsId: '1234567' }, '0.01', 'HKD', 'HKD'))).toBe(
      2532461950186292,
    );
  });
});

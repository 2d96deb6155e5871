// The key of the probable-duplicate rule, a rule that spans rows.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Dec } from '../../src/money.ts';
import { accountKey, probableDuplicateKey } from '../../src/validation/row.ts';
import type { PayoutRow } from '../../src/validation/row-schemas.ts';

describe('accountKey', () => {
  const opt = fc.option(fc.constantFrom('', '12345678', '601613', '021000021', '058', 'DEUTDEFF'), { nil: undefined });
  it('joins the non-empty bank identifiers with "/" when there is no IBAN, digits without their leading zeros', () => {
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
          const unpadded = [accountNumber, sortCode, routingNumber, bankCode].map((v) => (v && /^\d+$/.test(v) ? String(BigInt(v)) : v));
          const id = iban ?? [...unpadded, swiftCode].filter(Boolean).join('/');
          expect(accountKey({ beneficiary: b } as unknown as PayoutRow)).toBe(id || '1234567');
        },
      ),
    );
  });
});

describe('probableDuplicateKey', () => {
  const p = (beneficiary: Record<string, string>, amount: string, source: string, destination: string) =>
    ({ beneficiary, sourceAmount: new Dec(amount), sourceCurrency: source, destinationCurrency: destination }) as unknown as PayoutRow;
  const iban = { accountName: 'A', accountCurrency: 'EUR', iban: 'DE89370400440532013000' };

  it('is the same for an account number Excel typed as a number (its leading zeros lost): a re-saved row is the same payment', () => {
    const swift = (accountNumber: string) => ({ accountName: 'A', accountCurrency: 'EUR', accountNumber, swiftCode: 'COBADEFFXXX' });
    expect(probableDuplicateKey(p(swift('0005407324931'), '250', 'GBP', 'EUR'))).toBe(
      probableDuplicateKey(p(swift('5407324931'), '250.00', 'GBP', 'EUR')),
    );
    expect(probableDuplicateKey(p(swift('0005407324931'), '250', 'GBP', 'EUR'))).not.toBe(
      probableDuplicateKey(p(swift('54073249310'), '250', 'GBP', 'EUR')),
    );
  });

  it('is the same for the same account, amount and currencies, whatever else differs', () => {
    expect(probableDuplicateKey(p(iban, '1500.50', 'USD', 'EUR'))).toBe(
      probableDuplicateKey(p({ ...iban, accountName: 'Someone else' }, '1500.5', 'USD', 'EUR')),
    );
  });

  it('differs when the account, the amount or a currency differs', () => {
    const keys = [
      p(iban, '1500.50', 'USD', 'EUR'),
      p({ ...iban, iban: 'GB29NWBK60161331926819' }, '1500.50', 'USD', 'EUR'),
      p(iban, '1500.51', 'USD', 'EUR'),
      p(iban, '1500.50', 'GBP', 'EUR'),
      p(iban, '1500.50', 'USD', 'USD'),
    ].map(probableDuplicateKey);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

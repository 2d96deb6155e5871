import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { composeIBAN } from 'ibantools';
import * as F from '../../src/validation/fields.ts';

const okv = (r: F.FieldResult) => (r.ok ? r.value : `!${r.code}`);

describe('field validators', () => {
  it('currencies: ISO 4217 only', () => {
    expect(okv(F.currencyCode('usd'))).toBe('USD');
    expect(okv(F.currencyCode('KWD'))).toBe('KWD');
    expect(okv(F.currencyCode('EURO'))).toBe('!INVALID_CURRENCY');
    expect(okv(F.currencyCode('ABC'))).toBe('!INVALID_CURRENCY');
  });

  it('countries: ISO 3166-1 alpha-3, with a hint for alpha-2', () => {
    expect(okv(F.countryCode('nga'))).toBe('NGA');
    expect(okv(F.countryCode('HKG'))).toBe('HKG');
    const r = F.countryCode('NG');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toContain('NGA');
    expect(okv(F.countryCode('XYZ'))).toBe('!INVALID_COUNTRY');
  });

  it('IBAN: country length and mod-97 checksum; spaces allowed', () => {
    expect(okv(F.iban('DE89 3704 0044 0532 0130 00'))).toBe('DE89370400440532013000');
    expect(okv(F.iban('gb29nwbk60161331926819'))).toBe('GB29NWBK60161331926819');
    const short = F.iban('DE89370400440532013');
    expect(short.ok || short.message).toContain('22 characters');
    expect(okv(F.iban('DE88370400440532013000'))).toBe('!INVALID_IBAN');
    expect(okv(F.iban('XX89370400440532013000'))).toBe('!INVALID_IBAN');
  });

  it('IBAN: grouped with no-break or thin spaces (as pasted from a bank statement or a PDF) is the same IBAN', () => {
    expect(okv(F.iban('GB29\u00a0NWBK\u00a06016\u00a01331\u00a09268\u00a019'))).toBe('GB29NWBK60161331926819');
    expect(okv(F.iban('DE89\u202f3704\u202f0044\u202f0532\u202f0130\u202f00'))).toBe('DE89370400440532013000');
    expect(okv(F.iban('DE89\t3704 0044 0532 0130 00'))).toBe('DE89370400440532013000');
  });

  it('IBAN property: a composed IBAN is valid; changing one digit of it never is', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^\d{18}$/), fc.nat(17), fc.integer({ min: 1, max: 9 }), (bban, pos, delta) => {
        const iban = composeIBAN({ countryCode: 'DE', bban })!;
        expect(okv(F.iban(iban))).toBe(iban);
        const i = 4 + pos;
        const changed = iban.slice(0, i) + ((Number(iban[i]) + delta) % 10) + iban.slice(i + 1);
        expect(F.iban(changed).ok).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('IBAN property: swapping two different adjacent digits is caught', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^\d{18}$/), fc.nat(16), (bban, pos) => {
        const iban = composeIBAN({ countryCode: 'DE', bban })!;
        const i = 4 + pos;
        fc.pre(iban[i] !== iban[i + 1]);
        const swapped = iban.slice(0, i) + iban[i + 1] + iban[i] + iban.slice(i + 2);
        expect(F.iban(swapped).ok).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('BIC: 8 or 11 characters with a country', () => {
    expect(okv(F.bic('deutdeff'))).toBe('DEUTDEFF');
    expect(okv(F.bic('CITIUS33XXX'))).toBe('CITIUS33XXX');
    expect(okv(F.bic('DEUTDEF'))).toBe('!INVALID_BIC');
    expect(okv(F.bic('DEUTXXFF'))).toBe('!INVALID_BIC');
    expect(okv(F.bic('1EUTDEFF'))).toBe('!INVALID_BIC');
  });

  it('ABA routing numbers: 9 digits, prefix and checksum', () => {
    for (const r of ['021000021', '026009593', '011000015', '121000358']) expect(okv(F.routingNumber(r))).toBe(r);
    expect(okv(F.routingNumber('021000022'))).toBe('!INVALID_ROUTING_NUMBER');
    expect(okv(F.routingNumber('21000021'))).toBe('!INVALID_ROUTING_NUMBER');
    expect(okv(F.routingNumber('991000021'))).toBe('!INVALID_ROUTING_NUMBER');
    // a template's placeholder passes the prefix and the checksum, yet routes to no bank (the Treasury's 000000518 does)
    const zeros = F.routingNumber('000-000-000');
    expect(okv(zeros)).toBe('!INVALID_ROUTING_NUMBER');
    expect(zeros.ok || zeros.message).toContain('all zeros');
    expect(okv(F.routingNumber('000000518'))).toBe('000000518');
  });

  it('UK sort code and account number', () => {
    expect(okv(F.sortCode('60-16-13'))).toBe('601613');
    expect(okv(F.sortCode('60 16 13'))).toBe('601613');
    expect(okv(F.sortCode('60161'))).toBe('!INVALID_SORT_CODE');
    expect(okv(F.ukAccountNumber('31926819'))).toBe('31926819');
    expect(okv(F.ukAccountNumber('3192681'))).toBe('!INVALID_ACCOUNT_NUMBER');
  });

  it('NUBAN and Nigerian bank codes, with the CBN check digit', () => {
    expect(okv(F.nuban('0123456785'))).toBe('0123456785');
    expect(okv(F.nuban('012345678'))).toBe('!INVALID_ACCOUNT_NUMBER');
    expect(okv(F.nipBankCode('058'))).toBe('058');
    expect(okv(F.nipBankCode('000013'))).toBe('000013');
    expect(okv(F.nipBankCode('58'))).toBe('!INVALID_BANK_CODE');
    expect(F.nubanCheckDigitOk('058', '0123456785')).toBe(true);
    expect(F.nubanCheckDigitOk('058', '0123456789')).toBe(false);
  });

  it('any other bank code: letters, digits and hyphens, as the message says', () => {
    expect(okv(F.anyBankCode('12-34'))).toBe('12-34');
    const r = F.anyBankCode('12 34');
    expect(r.ok || `${r.message} (${r.expected})`).toBe(
      'a bank code has letters, digits and hyphens only (1 to 20 letters, digits or hyphens)',
    );
  });

  it('account type, email, E.164 phone', () => {
    expect(okv(F.accountType('Checking'))).toBe('checking');
    expect(okv(F.accountType('current'))).toBe('!INVALID_ACCOUNT_TYPE');
    expect(okv(F.email('a.b@example.com'))).toBe('a.b@example.com');
    expect(okv(F.email('a.b.example.com'))).toBe('!INVALID_EMAIL');
    expect(okv(F.phone('+852 9123 4567'))).toBe('+85291234567');
    expect(okv(F.phone('0091234567'))).toBe('!INVALID_PHONE');
    expect(okv(F.phone('91234567'))).toBe('!INVALID_PHONE');
  });

  it('wallet identifiers: FPS ID, Alipay, WeChat', () => {
    expect(okv(F.fpsId('1234567'))).toBe('1234567');
    expect(okv(F.fpsId('12345'))).toBe('!INVALID_ID');
    expect(okv(F.alipayId('13800138000'))).toBe('13800138000');
    expect(okv(F.alipayId('li@example.cn'))).toBe('li@example.cn');
    expect(okv(F.alipayId('li wei'))).toBe('!INVALID_ID');
    expect(okv(F.openId('oUpF8uMuAJO_M2pxb1Q9zNjWeS6o'))).toBe('oUpF8uMuAJO_M2pxb1Q9zNjWeS6o');
    expect(okv(F.wechatUserId('wxid_abc123'))).toBe('wxid_abc123');
    expect(okv(F.wechatUserId('1abc'))).toBe('!INVALID_ID');
  });

  it('text and booleans', () => {
    expect(okv(F.text(5, 'x')('hello!'))).toBe('!TOO_LONG');
    expect(okv(F.text(50, 'x')('a\u0007b'))).toBe('!INVALID_TEXT');
    // C1 controls: U+009B is a terminal's CSI, and could hide the real payee from an approver
    expect(okv(F.text(50, 'x')('Mallory\u009b1GJane'))).toBe('!INVALID_TEXT');
    expect(okv(F.booleanText('Yes'))).toBe('true');
    expect(okv(F.booleanText(''))).toBe('false');
    expect(okv(F.booleanText('maybe'))).toBe('!INVALID_BOOLEAN');
  });
});

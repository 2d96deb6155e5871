import { describe, expect, it } from 'vitest';
import { canonicalMethod, canTransition } from '../../src/interface/codes.ts';
import { indicativeFee, methodsForCorridor, missingBeneficiaryFields } from '../../src/interface/methods.ts';
import { Dec, fromApi, toApi } from '../../src/money.ts';

describe('spec tables', () => {
  it('accepts method names in any case and the HONG_KONG_FPS alias', () => {
    expect(canonicalMethod('sepa')).toBe('SEPA');
    expect(canonicalMethod('Hong_Kong_FPS')).toBe('HK_FPS');
    expect(canonicalMethod('faster payments')).toBe('FASTER_PAYMENTS');
    expect(canonicalMethod('PAYPAL')).toBeUndefined();
  });

  it('charges SWIFT by amount band: 50 under 2k, 40 under 10k, 0 from 10k', () => {
    expect(indicativeFee('SWIFT', new Dec('1999.99')).toString()).toBe('50');
    expect(indicativeFee('SWIFT', new Dec('2000')).toString()).toBe('40');
    expect(indicativeFee('SWIFT', new Dec('9999.99')).toString()).toBe('40');
    expect(indicativeFee('SWIFT', new Dec('10000')).toString()).toBe('0');
    expect(indicativeFee('NIP', new Dec('5')).toString()).toBe('100');
  });

  it('derives corridor methods from the overview and each method reach', () => {
    expect(methodsForCorridor('USD', 'USD', 'USA')).toEqual(['WIRE', 'ACH', 'SWIFT']);
    expect(methodsForCorridor('NGN', 'NGN', 'NGA')).toEqual(['NIP', 'SWIFT']);
    expect(methodsForCorridor('INR', 'USD', 'USA')).toEqual([]);
  });

  it('names the missing beneficiary fields, including one-of groups', () => {
    expect(missingBeneficiaryFields('SEPA', { accountName: 'A', accountCurrency: 'EUR' })).toEqual(['iban']);
    expect(missingBeneficiaryFields('WECHAT', { accountName: 'A', accountCurrency: 'CNY', openId: 'o1' })).toEqual([]);
    expect(missingBeneficiaryFields('HK_FPS', { accountName: 'A', accountCurrency: 'HKD', accountNumber: '1' })).toEqual([
      'fpsId | phoneNumber | email | accountNumber+bankCode',
    ]);
  });

  it('moves statuses only forward along the state table', () => {
    expect(canTransition('PENDING', 'PROCESSING')).toBe(true);
    expect(canTransition('ADDITIONAL_INFO_REQUIRED', 'PENDING')).toBe(true);
    expect(canTransition('SUCCESSFUL', 'PENDING')).toBe(false);
    expect(canTransition('PROCESSING', 'PENDING')).toBe(false);
  });
});

describe('money', () => {
  it('adds exactly where binary floats do not', () => {
    expect(fromApi(0.1).plus(fromApi(0.2)).toString()).toBe('0.3');
    expect(toApi(new Dec('1234.50'))).toBe(1234.5);
    expect(() => toApi(new Dec('1234567890123456.1'))).toThrow(/15 significant/);
  });
});

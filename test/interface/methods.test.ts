import { describe, expect, it } from 'vitest';
import { canonicalMethod, canTransition } from '../../src/spec/codes.ts';
import { methodsForCorridor } from '../../src/spec/methods.ts';
import { Dec, fromApi, toApi } from '../../src/money.ts';

describe('spec tables', () => {
  it('accepts method names in any case and the HONG_KONG_FPS alias', () => {
    expect(canonicalMethod('sepa')).toBe('SEPA');
    expect(canonicalMethod('Hong_Kong_FPS')).toBe('HK_FPS');
    expect(canonicalMethod('faster payments')).toBe('FASTER_PAYMENTS');
    expect(canonicalMethod('PAYPAL')).toBeUndefined();
  });

  it('derives corridor methods from the overview and each method reach', () => {
    expect(methodsForCorridor('USD', 'USD', 'USA')).toEqual(['WIRE', 'ACH', 'SWIFT']);
    expect(methodsForCorridor('NGN', 'NGN', 'NGA')).toEqual(['NIP', 'SWIFT']);
    expect(methodsForCorridor('INR', 'USD', 'USA')).toEqual([]);
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

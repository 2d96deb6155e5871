// The sandbox's own table of methods (src/sandbox/rules.ts), checked against the spec's text
// (§1.9, §4.2), and kept apart from the validator's table (src/spec/methods.ts, src/validation).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { call, P, start, uniqueKey } from './helpers.ts';

const root = new URL('../..', import.meta.url).pathname;

let sb: LocalSandbox;
beforeAll(async () => {
  sb = await start();
});
afterAll(() => sb.close());

const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));

describe('the sandbox reads the spec through its own table', () => {
  it('no file under src/sandbox imports src/spec/methods.ts or src/validation', () => {
    const imports = files(join(root, 'src/sandbox'))
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) =>
        [...readFileSync(f, 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]/g)]
          .map((m) => m[1] ?? m[2]!)
          .filter((s) => s.startsWith('.'))
          .map((s) => ({ file: relative(root, f), target: relative(root, resolve(dirname(f), s)) })),
      );
    expect(imports.length).toBeGreaterThan(50);
    expect(imports.filter((i) => i.target === 'src/spec/methods.ts' || i.target.startsWith('src/validation'))).toEqual([]);
  });
});

/** An initiate with only the two fields every method needs: the answer names what else the method needs. */
async function missing(method: string, sourceCurrency: string, destinationCurrency: string, destinationCountryCode: string) {
  const r = await call(sb, 'POST', `${P}/initiate`, {
    idem: uniqueKey('rules'),
    body: {
      sourceAmount: 100,
      sourceCurrency,
      destinationCurrency,
      destinationCountryCode,
      method,
      narration: 'Rules test',
      beneficiary: { accountName: 'A Beneficiary', accountCurrency: destinationCurrency },
    },
  });
  expect(r.body.error, JSON.stringify(r.body)).toBe('MISSING_REQUIRED_FIELDS');
  return (r.body.errors as { field: string }[]).map((e) => e.field.replace(/^beneficiary\./, ''));
}

describe('spec §4.2: beneficiary fields required per method', () => {
  it.each([
    ['ALIPAY', 'NGN', 'CNY', 'CHN', ['alipayId']],
    ['WECHAT', 'NGN', 'CNY', 'CHN', ['openId | wechatUserId']],
    ['SEPA', 'EUR', 'EUR', 'DEU', ['iban']],
    ['SWIFT', 'USD', 'INR', 'IND', ['accountNumber', 'swiftCode', 'bankName', 'beneficiaryCountry']],
    ['ACH', 'USD', 'USD', 'USA', ['routingNumber', 'accountNumber', 'accountType']],
    ['NIP', 'USD', 'NGN', 'NGA', ['accountNumber', 'bankCode']],
    ['BACS', 'GBP', 'GBP', 'GBR', ['sortCode', 'accountNumber', 'iban']],
    ['FASTER_PAYMENTS', 'GBP', 'GBP', 'GBR', ['sortCode', 'accountNumber', 'iban']],
    ['HONG_KONG_FPS', 'HKD', 'HKD', 'HKG', ['fpsId | phoneNumber | email | accountNumber+bankCode']],
    // Not in the spec's table: the sandbox's readings (rules.ts).
    ['WIRE', 'USD', 'USD', 'USA', ['routingNumber', 'accountNumber', 'bankName']],
    ['CHINA_WIRE', 'CNY', 'CNY', 'CHN', ['accountNumber', 'bankName']],
  ])('%s from %s to %s in %s needs %j besides accountName and accountCurrency', async (method, from, to, country, fields) => {
    expect(await missing(method, from, to, country)).toEqual(fields);
  });

  it('accountName and accountCurrency are required for every method', async () => {
    const r = await call(sb, 'POST', `${P}/initiate`, {
      idem: uniqueKey('rules'),
      body: {
        sourceAmount: 100,
        sourceCurrency: 'EUR',
        destinationCurrency: 'EUR',
        destinationCountryCode: 'DEU',
        method: 'SEPA',
        narration: 'Rules test',
        beneficiary: { iban: 'DE89370400440532013000' },
      },
    });
    expect(r.body.errors.map((e: { field: string }) => e.field)).toEqual(['beneficiary.accountName', 'beneficiary.accountCurrency']);
  });
});

const methods = async (from: string, to: string, country: string) =>
  (await call(sb, 'GET', `${P}/methods?sourceCurrency=${from}&destinationCurrency=${to}&destinationCountryCode=${country}`)).body as {
    methods: { code: string; settlement: string; fee: { amount: number } }[];
  };

describe('spec §1.9: corridors, fees and settlement', () => {
  it('SEPA reaches EU countries only ("EUR to EU countries")', async () => {
    expect((await methods('EUR', 'EUR', 'DEU')).methods.map((m) => m.code)).toEqual(['SEPA', 'SWIFT']);
    expect((await methods('EUR', 'EUR', 'CHE')).methods.map((m) => m.code)).toEqual(['SWIFT']);
    expect((await methods('EUR', 'EUR', 'GBR')).methods.map((m) => m.code)).toEqual(['SWIFT']);
  });

  it('HK FPS paying USD settles in 24 to 72 hours, paying HKD under 24 hours', async () => {
    const usd = (await methods('USD', 'USD', 'HKG')).methods.find((m) => m.code === 'HK_FPS')!;
    expect(usd).toMatchObject({ settlement: '24 to 72 hours', fee: { amount: 20 } });
    const hkd = (await methods('HKD', 'HKD', 'HKG')).methods.find((m) => m.code === 'HK_FPS')!;
    expect(hkd).toMatchObject({ settlement: 'under 24 hours', fee: { amount: 20 } });
  });

  it.each([
    ['USD', 'USD', 'USA', 'WIRE', '1 day', 20],
    ['USD', 'USD', 'USA', 'ACH', '1 to 3 days', 5],
    ['USD', 'CNY', 'CHN', 'CHINA_WIRE', '24 to 72 hours', 20],
    ['USD', 'INR', 'IND', 'SWIFT', '24 to 72 hours', 50],
    ['EUR', 'EUR', 'FRA', 'SEPA', 'under 48 hours', 5],
    ['GBP', 'GBP', 'GBR', 'FASTER_PAYMENTS', 'under 24 hours', 2],
    ['GBP', 'GBP', 'GBR', 'BACS', 'under 24 hours', 2],
    ['NGN', 'NGN', 'NGA', 'NIP', 'under 24 hours', 100],
  ])('%s to %s in %s by %s: %s, fee %d', async (from, to, country, code, settlement, fee) => {
    expect((await methods(from, to, country)).methods.find((m) => m.code === code)).toMatchObject({ settlement, fee: { amount: fee } });
  });
});

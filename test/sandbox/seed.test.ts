import { describe, expect, it } from 'vitest';
import { DEFAULT_KEYS, defaultSeed, parseSeed, SeedError, startSandbox } from '../../src/sandbox/start-sandbox.ts';
import { call, P, swiftUsdBody } from './helpers.ts';

describe('seed', () => {
  it('ships Acme Trading Ltd and Globex Ltd with the documented keys, wallets, pairs and countries', async () => {
    const seed = defaultSeed();
    const [acme, globex] = seed.businesses;
    expect(acme).toMatchObject({ name: 'Acme Trading Ltd', keys: [DEFAULT_KEYS.acmePrimary, DEFAULT_KEYS.acmeSecondary] });
    expect(acme!.wallets.map((w) => w.currency)).toEqual(['NGN', 'USD', 'EUR', 'GBP', 'CNY', 'HKD']);
    const enabled = acme!.pairs.filter((p) => p.enabled).map((p) => `${p.baseCurrency}/${p.quoteCurrency}`);
    expect(enabled).toEqual(
      expect.arrayContaining(['USD/NGN', 'USD/EUR', 'USD/GBP', 'USD/CNY', 'USD/HKD', 'USD/INR', 'GBP/EUR', 'EUR/GBP', 'NGN/USD']),
    );
    expect(acme!.pairs.some((p) => !p.enabled)).toBe(true);
    expect(globex).toMatchObject({ name: 'Globex Ltd', keys: [DEFAULT_KEYS.globex] });
    expect(seed.countries.length).toBeGreaterThanOrEqual(30);
    expect(seed.countries.filter((c) => c.isProhibited).map((c) => c.code)).toContain('PRK');
  });

  it('gives the same wallet and pair ids on every start', async () => {
    const [a, b] = [await startSandbox({ rateLimitPerSecond: null }), await startSandbox({ rateLimitPerSecond: null })];
    try {
      const ids = async (sb: { url: string }) =>
        (await call(sb, 'GET', `${P}/wallets`)).body.data.map((w: { walletId: string }) => w.walletId);
      expect(await ids(a)).toEqual(await ids(b));
      expect(a.keys.map((k) => k.businessId)).toEqual(b.keys.map((k) => k.businessId));
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('refuses a bad seed naming every field at fault', () => {
    const bad = {
      businesses: [
        {
          name: 'A',
          keys: ['sk_test_aaaa'],
          wallets: [
            { currency: 'USD', balance: '1' },
            { currency: 'USD', balance: '2' },
            { currency: 'ZZZ', balance: '1' },
          ],
        },
        { name: 'B', keys: ['sk_test_aaaa'], pairs: [{ baseCurrency: 'USD', quoteCurrency: 'EUR', rate: '-1' }] },
      ],
    };
    let error: unknown;
    try {
      parseSeed(bad);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SeedError);
    const paths = (error as SeedError).issues.map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['businesses[0].wallets[2].currency', 'businesses[1].pairs[0].rate']));
    expect(() =>
      parseSeed({
        businesses: [
          {
            name: 'A',
            keys: ['sk_test_aaaa'],
            wallets: [
              { currency: 'USD', balance: '1' },
              { currency: 'USD', balance: '2' },
            ],
          },
        ],
      }),
    ).toThrow(/wallets\[1\]\.currency: a second USD wallet/);
    expect(() =>
      parseSeed({
        businesses: [
          { name: 'A', keys: ['sk_test_aaaa'] },
          { name: 'B', keys: ['sk_test_aaaa'] },
        ],
      }),
    ).toThrow(/businesses\[1\]\.keys\[0\]: key already used/);
    expect(() => parseSeed({ businesses: [] })).toThrow(SeedError);
  });

  it('refuses a balance a JSON number could not carry exactly with its decimals (else a debit answers 500, unbound)', async () => {
    const seed = (USD: string, NGN = '1') => ({
      businesses: [
        {
          name: 'Big',
          keys: ['sk_test_big1'],
          wallets: [
            { currency: 'USD', balance: USD },
            { currency: 'NGN', balance: NGN },
          ],
        },
      ],
    });
    expect(() => parseSeed(seed('99999999999999.99'))).toThrow(/wallets\[0\]\.balance: .*below 10000000000000/);
    expect(() => parseSeed(seed('1', '10000000000000'))).toThrow(/wallets\[1\]\.balance/);
    const sb = await startSandbox({ rateLimitPerSecond: null, seed: seed('9999999999999.99') });
    try {
      const body = swiftUsdBody();
      const sent = await call(sb, 'POST', `${P}/initiate`, { key: 'sk_test_big1', idem: 'big-1', body });
      expect(sent.status).toBe(201);
      expect((await call(sb, 'GET', `${P}/wallets`, { key: 'sk_test_big1' })).body.data[0].balance).toBe(9999999999939.99);
    } finally {
      await sb.close();
    }
  });

  it('serves a custom seed: its keys, wallets and ids', async () => {
    const sb = await startSandbox({
      rateLimitPerSecond: null,
      seed: {
        businesses: [
          {
            id: '11111111-1111-4111-8111-111111111111',
            name: 'Initech',
            keys: ['sk_test_initech'],
            wallets: [{ walletId: '22222222-2222-4222-8222-222222222222', currency: 'JPY', balance: '1000000' }],
          },
        ],
      },
    });
    try {
      expect(sb.keys).toEqual([{ key: 'sk_test_initech', businessId: '11111111-1111-4111-8111-111111111111', businessName: 'Initech' }]);
      const w = await call(sb, 'GET', `${P}/wallets`, { key: 'sk_test_initech' });
      expect(w.body.data).toEqual([{ walletId: '22222222-2222-4222-8222-222222222222', currency: 'JPY', balance: 1000000 }]);
      expect((await call(sb, 'GET', `${P}/wallets`, { key: DEFAULT_KEYS.acmePrimary })).status).toBe(401);
    } finally {
      await sb.close();
    }
  });
});

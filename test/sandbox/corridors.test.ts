import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { CountryList, MethodsResponse, PairList, WalletList } from './strict.ts';
import { call, GLOBEX, P, start } from './helpers.ts';

let sb: LocalSandbox;
beforeAll(async () => {
  sb = await start();
});
afterAll(() => sb.close());

const methods = (q: string, key?: string) => call(sb, 'GET', `${P}/methods?${q}`, key ? { key } : {});

describe('pairs and the toggle (spec §4.9, §4.10)', () => {
  it('lists enabled pairs by default, all with ?status=all', async () => {
    const enabled = PairList.parse((await call(sb, 'GET', `${P}/pairs`)).body);
    expect(enabled.data.every((p) => p.enabled)).toBe(true);
    expect(enabled.data.find((p) => p.baseCurrency === 'USD' && p.quoteCurrency === 'NGN')?.rate).toBe(1530.5);
    const all = PairList.parse((await call(sb, 'GET', `${P}/pairs?status=all`)).body);
    expect(all.data.some((p) => p.baseCurrency === 'USD' && p.quoteCurrency === 'GHS' && !p.enabled)).toBe(true);
    expect((await call(sb, 'GET', `${P}/pairs?status=maybe`)).status).toBe(400);
  });

  it('toggles: {enabled} sets, an empty body flips; the corridor follows', async () => {
    const ghs = PairList.parse((await call(sb, 'GET', `${P}/pairs?status=all`)).body).data.find((p) => p.quoteCurrency === 'GHS')!;
    const quote = () =>
      call(sb, 'POST', `${P}/quote`, {
        body: { sourceAmount: 100, sourceCurrency: 'USD', destinationCurrency: 'GHS', destinationCountryCode: 'GHA', method: 'SWIFT' },
      });
    expect((await quote()).body.error).toBe('CORRIDOR_NOT_ENABLED');
    const on = await call(sb, 'PATCH', `${P}/currency-pairs/${ghs.currencyPairId}/toggle`, { body: { enabled: true } });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ currencyPairId: ghs.currencyPairId, enabled: true });
    expect((await quote()).body.destinationAmount).toBe(1520);
    const flipped = await call(sb, 'PATCH', `${P}/currency-pairs/${ghs.currencyPairId}/toggle`);
    expect(flipped.body.enabled).toBe(false);
    expect((await quote()).status).toBe(400);
    // Another business cannot toggle Acme's pair.
    const foreign = await call(sb, 'PATCH', `${P}/currency-pairs/${ghs.currencyPairId}/toggle`, { key: GLOBEX, body: {} });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toBe('CURRENCY_PAIR_NOT_FOUND');
    expect((await call(sb, 'PATCH', `${P}/currency-pairs/${ghs.currencyPairId}/toggle`, { body: { enabled: 'yes' } })).body.error).toBe(
      'VALIDATION_ERROR',
    );
  });

  it('answers 400 NO_ENABLED_PAIRS when nothing is enabled', async () => {
    const bare = await start({
      seed: {
        businesses: [
          { name: 'Bare', keys: ['sk_test_bare'], pairs: [{ baseCurrency: 'USD', quoteCurrency: 'EUR', rate: '0.9', enabled: false }] },
        ],
      },
    });
    try {
      const r = await call(bare, 'GET', `${P}/pairs`, { key: 'sk_test_bare' });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('NO_ENABLED_PAIRS');
      expect((await call(bare, 'GET', `${P}/pairs?status=all`, { key: 'sk_test_bare' })).body.data).toHaveLength(1);
    } finally {
      await bare.close();
    }
  });

  it('moves a live rate through the control route (rates are not locked)', async () => {
    const usdEur = PairList.parse((await call(sb, 'GET', `${P}/pairs`, { key: GLOBEX })).body).data[0]!;
    const r = await call(sb, 'PUT', `/_sandbox/pairs/${usdEur.currencyPairId}/rate`, { key: null, body: { rate: '0.93' } });
    expect(r.body.rate).toBe(0.93);
    expect((await call(sb, 'GET', `${P}/pairs`, { key: GLOBEX })).body.data[0].rate).toBe(0.93);
  });
});

describe('methods (spec §4.11)', () => {
  it('returns the corridor, the rate and the methods with fields, one-of groups and fees', async () => {
    const r = MethodsResponse.parse((await methods('sourceCurrency=USD&destinationCurrency=HKD&destinationCountryCode=HKG')).body);
    expect(r.corridor).toEqual({ sourceCurrency: 'USD', destinationCurrency: 'HKD', destinationCountryCode: 'HKG' });
    expect(r.rate.rate).toBe(7.812);
    expect(r.methods.map((m) => m.code)).toEqual(['SWIFT', 'HK_FPS']);
    const fps = r.methods.find((m) => m.code === 'HK_FPS')!;
    expect(fps.fee).toEqual({ currency: 'USD', amount: 20 });
    const group = fps.requiredFields.find((f) => 'oneOf' in f) as { oneOf: { name: string }[][] };
    expect(group.oneOf.map((g) => g.map((f) => f.name))).toEqual([['fpsId'], ['phoneNumber'], ['email'], ['accountNumber', 'bankCode']]);
    expect(fps.optionalFields.map((f) => f.name)).toContain('remitterAddress');
    const swift = r.methods.find((m) => m.code === 'SWIFT')!;
    expect(swift.fee.bands).toEqual([
      { below: 2000, amount: 50 },
      { below: 10000, amount: 40 },
      { below: null, amount: 0 },
    ]);
    expect(swift.requiredFields.map((f) => f.name)).toEqual([
      'accountName',
      'accountCurrency',
      'accountNumber',
      'swiftCode',
      'bankName',
      'beneficiaryCountry',
    ]);
  });

  it("shows NIP's fee as quote charges it, in the source currency", async () => {
    const usd = MethodsResponse.parse((await methods('sourceCurrency=USD&destinationCurrency=NGN&destinationCountryCode=NGA')).body);
    expect(usd.methods.find((m) => m.code === 'NIP')!.fee).toEqual({ currency: 'USD', amount: 0.07 });
    const wechat = MethodsResponse.parse((await methods('sourceCurrency=NGN&destinationCurrency=CNY&destinationCountryCode=CHN')).body);
    expect(wechat.methods.map((m) => m.code)).toEqual(['SWIFT', 'ALIPAY', 'WECHAT']);
  });

  it('answers 400 for invalid parameters, a disabled corridor, a prohibited country', async () => {
    expect((await methods('sourceCurrency=USD&destinationCurrency=NGN')).body.error).toBe('VALIDATION_ERROR');
    expect((await methods('sourceCurrency=USD&destinationCurrency=XOF&destinationCountryCode=SEN')).body.error).toBe(
      'CORRIDOR_NOT_ENABLED',
    );
    expect((await methods('sourceCurrency=USD&destinationCurrency=USD&destinationCountryCode=SYR')).body.error).toBe(
      'PROHIBITED_DESTINATION',
    );
    // Globex has USD/GBP disabled.
    expect((await methods('sourceCurrency=USD&destinationCurrency=GBP&destinationCountryCode=GBR', GLOBEX)).body.error).toBe(
      'CORRIDOR_NOT_ENABLED',
    );
  });
});

describe('wallets and countries (spec §4.12, §4.14)', () => {
  it('lists the business wallets only, with ids and balances', async () => {
    const acme = WalletList.parse((await call(sb, 'GET', `${P}/wallets`)).body);
    expect(acme.data.map((w) => w.currency)).toEqual(['NGN', 'USD', 'EUR', 'GBP', 'CNY', 'HKD']);
    const globex = WalletList.parse((await call(sb, 'GET', `${P}/wallets`, { key: GLOBEX })).body);
    expect(globex.data.map((w) => w.currency)).toEqual(['USD', 'EUR']);
    expect(globex.data.some((w) => acme.data.some((a) => a.walletId === w.walletId))).toBe(false);
  });

  it('lists countries with the public envelope, limit 50 by default, filter[currencyCode]', async () => {
    const all = CountryList.parse((await call(sb, 'GET', '/api/public/auth/countries')).body);
    expect(all.statusCode).toBe(200);
    expect(all.meta.limit).toBe(50);
    expect(all.data.length).toBeGreaterThanOrEqual(30);
    expect(all.data.find((c) => c.code === 'PRK')?.isProhibited).toBe(true);
    expect(all.data.find((c) => c.code === 'NGA')).toMatchObject({
      currencyCode: 'NGN',
      tradingStartTime: '08:00:00',
      timeZone: 1,
      deletedAt: null,
    });
    const eur = CountryList.parse((await call(sb, 'GET', '/api/public/auth/countries?filter[currencyCode]=EUR')).body);
    expect(eur.data.map((c) => c.code)).toEqual(expect.arrayContaining(['DEU', 'FRA', 'ESP', 'ITA', 'NLD', 'IRL']));
    expect(eur.data.every((c) => c.currencyCode === 'EUR' || c.payoutCurrencies.some((p) => p.code === 'EUR'))).toBe(true);
    const two = await call(sb, 'GET', '/api/public/auth/countries?limit=2');
    expect(two.body.meta).toMatchObject({ limit: 2, size: 2, total: all.meta.total });
    expect((await call(sb, 'GET', '/api/public/auth/countries', { key: null })).status).toBe(401);
  });
});

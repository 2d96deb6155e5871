import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { ErrorBody, UploadUrlRequest } from '../../src/spec/schemas.ts';
import { Payout, PayoutList, Quote } from './strict.ts';
import { ACME, call, GLOBEX, initiate, nipBody, P, sepaBody, start, swiftUsdBody, uniqueKey, walletBalance } from './helpers.ts';

let sb: LocalSandbox;
beforeAll(async () => {
  sb = await start({ propagatingKeys: ['sk_sandbox_acme_secondary'] });
});
afterAll(() => sb.close());

describe('authentication (spec §5)', () => {
  it('answers 401 with only statusCode and message for a missing or unknown key', async () => {
    for (const key of [null, 'sk_sandbox_nobody']) {
      const r = await call(sb, 'GET', `${P}/wallets`, { key });
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ statusCode: 401, message: 'Unauthorized' });
    }
  });

  it('answers 403 for a key still propagating', async () => {
    const r = await call(sb, 'GET', `${P}/wallets`, { key: 'sk_sandbox_acme_secondary' });
    expect(r.status).toBe(403);
    expect(r.body.statusCode).toBe(403);
  });

  it('answers 403 to a propagating key for 30 minutes from its start (spec §5.3: 20 to 30), then serves it', async () => {
    let now = Date.UTC(2026, 0, 15, 12, 0, 0);
    const own = await start({ propagatingKeys: ['sk_sandbox_acme_secondary'], now: () => now });
    try {
      now += 30 * 60_000 - 1;
      expect((await call(own, 'GET', `${P}/wallets`, { key: 'sk_sandbox_acme_secondary' })).status).toBe(403);
      now += 1;
      expect((await call(own, 'GET', `${P}/wallets`, { key: 'sk_sandbox_acme_secondary' })).status).toBe(200);
    } finally {
      await own.close();
    }
  });

  it('echoes x-request-id, and makes one when none is sent', async () => {
    const mine = await call(sb, 'GET', `${P}/wallets`, { headers: { 'x-request-id': 'req-123' } });
    expect(mine.headers.get('x-request-id')).toBe('req-123');
    const made = await call(sb, 'GET', `${P}/wallets`);
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('echoes each of x-request-id and x-correlation-id as sent (spec §5.5), both at once too', async () => {
    const corr = await call(sb, 'GET', `${P}/wallets`, { headers: { 'x-correlation-id': 'corr-1' } });
    expect([corr.headers.get('x-request-id'), corr.headers.get('x-correlation-id')]).toEqual(['corr-1', 'corr-1']);
    const both = await call(sb, 'GET', `${P}/wallets`, { headers: { 'x-request-id': 'req-2', 'x-correlation-id': 'corr-2' } });
    expect([both.headers.get('x-request-id'), both.headers.get('x-correlation-id')]).toEqual(['req-2', 'corr-2']);
  });

  it('answers 404 NestJS-style for a route the spec does not have', async () => {
    const r = await call(sb, 'GET', `${P}/nope/deeper`);
    expect(r.status).toBe(404);
    expect(r.body.message).toBe(`Cannot GET ${P}/nope/deeper`);
  });

  it('takes a body only as Content-Type application/json (spec §4.2), and creates nothing otherwise', async () => {
    const before = await walletBalance(sb, 'USD');
    for (const type of ['text/plain', undefined]) {
      const res = await fetch(`${sb.url}${P}/initiate`, {
        method: 'POST',
        headers: { 'x-api-key': ACME, 'idempotency-key': uniqueKey('ct'), ...(type ? { 'content-type': type } : {}) },
        body: Buffer.from(JSON.stringify(nipBody())),
      });
      expect(res.status, type).toBe(400);
      expect(((await res.json()) as ErrorBody).error, type).toBe('VALIDATION_ERROR');
    }
    expect(await walletBalance(sb, 'USD')).toBe(before);
  });
});

describe('quote (spec §4.1)', () => {
  it('prices in the source currency: fee on top, destination at the rate, rounded to minor units', async () => {
    const r = await call(sb, 'POST', `${P}/quote`, {
      body: { sourceAmount: 1234.56, sourceCurrency: 'USD', destinationCurrency: 'EUR', destinationCountryCode: 'DEU', method: 'sepa' },
    });
    expect(r.status).toBe(200);
    const q = Quote.parse(r.body);
    // 1234.56 × 0.9215 = 1137.647... → 1137.65; SEPA fee 5.00 in USD.
    expect(q).toEqual({
      sourceAmount: 1234.56,
      sourceCurrency: 'USD',
      destinationAmount: 1137.65,
      destinationCurrency: 'EUR',
      totalDeductible: 1239.56,
      exchangeRate: 0.9215,
      method: 'SEPA',
      fee: { amount: 5, currency: 'USD' },
    });
  });

  it('uses SWIFT bands 50 / 40 / 0 by source amount', async () => {
    const fee = async (sourceAmount: number) =>
      (
        await call(sb, 'POST', `${P}/quote`, {
          body: { sourceAmount, sourceCurrency: 'USD', destinationCurrency: 'INR', destinationCountryCode: 'IND', method: 'SWIFT' },
        })
      ).body.fee.amount;
    expect([await fee(1999.99), await fee(2000), await fee(9999.99), await fee(10000)]).toEqual([50, 40, 40, 0]);
  });

  it("prices NIP's 100 NGN fee in the source currency: 0.07 USD from USD, 100 NGN from NGN", async () => {
    const q = async (sourceCurrency: string) =>
      (
        await call(sb, 'POST', `${P}/quote`, {
          body: { sourceAmount: 1000, sourceCurrency, destinationCurrency: 'NGN', destinationCountryCode: 'NGA', method: 'NIP' },
        })
      ).body;
    expect((await q('USD')).fee).toEqual({ amount: 0.07, currency: 'USD' }); // 100 / 1530.5 = 0.0653…
    expect((await q('USD')).totalDeductible).toBe(1000.07);
    expect((await q('NGN')).fee).toEqual({ amount: 100, currency: 'NGN' });
  });

  it('serves a pair in reverse at 1/rate, a same-currency corridor at 1', async () => {
    const only = await start({
      seed: {
        businesses: [
          {
            name: 'Solo',
            keys: ['sk_test_solo'],
            wallets: [{ currency: 'EUR', balance: '1000.00' }],
            pairs: [{ baseCurrency: 'GBP', quoteCurrency: 'EUR', rate: '1.174' }],
          },
        ],
      },
    });
    try {
      const rev = await call(only, 'POST', `${P}/quote`, {
        key: 'sk_test_solo',
        body: { sourceAmount: 117.4, sourceCurrency: 'EUR', destinationCurrency: 'GBP', destinationCountryCode: 'GBR', method: 'SWIFT' },
      });
      expect(rev.status).toBe(200);
      expect(rev.body.destinationAmount).toBe(100); // 117.4 / 1.174, not 117.4 × a rounded 1/1.174
      expect(rev.body.exchangeRate).toBe(0.851788756388); // 1/1.174 to 12 significant digits
    } finally {
      await only.close();
    }
    const same = await call(sb, 'POST', `${P}/quote`, {
      body: { sourceAmount: 100, sourceCurrency: 'USD', destinationCurrency: 'USD', destinationCountryCode: 'USA', method: 'ACH' },
    });
    expect(same.body).toMatchObject({ exchangeRate: 1, destinationAmount: 100, totalDeductible: 105 });
  });

  it('refuses a pair that is not enabled with CORRIDOR_NOT_ENABLED', async () => {
    const r = await call(sb, 'POST', `${P}/quote`, {
      body: { sourceAmount: 100, sourceCurrency: 'USD', destinationCurrency: 'GHS', destinationCountryCode: 'GHA', method: 'SWIFT' },
    });
    expect(r.status).toBe(400);
    expect(ErrorBody.parse(r.body).error).toBe('CORRIDOR_NOT_ENABLED');
  });

  it('refuses a prohibited destination with PROHIBITED_DESTINATION', async () => {
    const r = await call(sb, 'POST', `${P}/quote`, {
      body: { sourceAmount: 100, sourceCurrency: 'USD', destinationCurrency: 'USD', destinationCountryCode: 'PRK', method: 'SWIFT' },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('PROHIBITED_DESTINATION');
  });

  it('answers VALIDATION_ERROR with field errors for a bad body, unknown method or unavailable method', async () => {
    const bad = await call(sb, 'POST', `${P}/quote`, {
      body: { sourceAmount: -1, sourceCurrency: 'usd', destinationCurrency: 'NGN', destinationCountryCode: 'NG', method: 'NIP' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('VALIDATION_ERROR');
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'destinationCountryCode',
      'sourceAmount',
      'sourceCurrency',
    ]);
    const unknown = await call(sb, 'POST', `${P}/quote`, {
      body: { sourceAmount: 1, sourceCurrency: 'USD', destinationCurrency: 'NGN', destinationCountryCode: 'NGA', method: 'PAYPAL' },
    });
    expect(unknown.body.errors[0].field).toBe('method');
    const unavailable = await call(sb, 'POST', `${P}/quote`, {
      body: { sourceAmount: 1, sourceCurrency: 'USD', destinationCurrency: 'NGN', destinationCountryCode: 'NGA', method: 'SEPA' },
    });
    expect(unavailable.status).toBe(400);
    expect(unavailable.body.errors[0].message).toContain('available: SWIFT, NIP');
    const decimals = await call(sb, 'POST', `${P}/quote`, {
      body: { sourceAmount: 10.001, sourceCurrency: 'USD', destinationCurrency: 'NGN', destinationCountryCode: 'NGA', method: 'NIP' },
    });
    expect(decimals.body.errors[0]).toEqual({ field: 'sourceAmount', message: 'USD amounts have at most 2 decimals' });
    const notIso = await call(sb, 'POST', `${P}/quote`, {
      body: { sourceAmount: 1, sourceCurrency: 'ABC', destinationCurrency: 'NGN', destinationCountryCode: 'NGA', method: 'NIP' },
    });
    expect(notIso.body.errors).toEqual([{ field: 'sourceCurrency', message: 'ABC is not an ISO 4217 currency code' }]);
    const notJson = await call(sb, 'POST', `${P}/quote`, { body: '{"sourceAmount": ' });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error).toBe('VALIDATION_ERROR');
  });

  it('debits nothing', async () => {
    const before = await walletBalance(sb, 'USD');
    await call(sb, 'POST', `${P}/quote`, {
      body: { sourceAmount: 500, sourceCurrency: 'USD', destinationCurrency: 'NGN', destinationCountryCode: 'NGA', method: 'NIP' },
    });
    expect(await walletBalance(sb, 'USD')).toBe(before);
  });
});

describe('initiate (spec §4.2)', () => {
  it('creates a PENDING payout (201), debits amount plus fee, and returns the applied rate', async () => {
    const before = await walletBalance(sb, 'USD');
    const r = await initiate(sb, nipBody({ sourceAmount: 1000.1 }));
    expect(r.status).toBe(201);
    const p = Payout.parse(r.body);
    expect(p).toMatchObject({
      status: 'PENDING',
      sourceAmount: 1000.1,
      sourceCurrency: 'USD',
      destinationAmount: 1530653.05,
      destinationCurrency: 'NGN',
      method: 'NIP',
      transactionFees: 0.07,
      exchangeRate: 1530.5,
      supportingDocuments: [],
    });
    expect(p.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(p.payoutRef).not.toBe(p.id);
    // Debited 1000.10 + 0.07 (NIP's 100 NGN fee in USD), exact to the cent.
    expect(await walletBalance(sb, 'USD')).toBe(Number((before * 100 - 100017) / 100));
  });

  it('keeps cents exact over many payouts (no binary floating point)', async () => {
    const before = await walletBalance(sb, 'EUR');
    for (let i = 0; i < 10; i++) expect((await initiate(sb, sepaBody({ sourceAmount: 0.1 }))).status).toBe(201);
    // 10 × (0.10 + 5.00) = 51.00
    expect(await walletBalance(sb, 'EUR')).toBe(Number((before - 51).toFixed(2)));
  });

  it('answers MISSING_REQUIRED_FIELDS naming every missing beneficiary field, one-of groups included', async () => {
    const r = await initiate(sb, nipBody({ beneficiary: { accountName: 'Ada', accountCurrency: 'NGN', accountNumber: '' } }));
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('MISSING_REQUIRED_FIELDS');
    expect(r.body.errors.map((e: { field: string }) => e.field)).toEqual(['beneficiary.accountNumber', 'beneficiary.bankCode']);
    const hk = await initiate(sb, {
      sourceAmount: 100,
      sourceCurrency: 'USD',
      destinationCurrency: 'HKD',
      destinationCountryCode: 'HKG',
      method: 'HONG_KONG_FPS',
      narration: 'x',
      beneficiary: { accountName: 'Li', accountCurrency: 'HKD', accountNumber: '123' },
    });
    expect(hk.body.error).toBe('MISSING_REQUIRED_FIELDS');
    expect(hk.body.errors[0].field).toBe('beneficiary.fpsId | phoneNumber | email | accountNumber+bankCode');
    const noName = await initiate(sb, sepaBody({ beneficiary: { accountCurrency: 'EUR', iban: 'DE89370400440532013000' } }));
    expect(noName.body.errors.map((e: { field: string }) => e.field)).toEqual(['beneficiary.accountName']);
  });

  it('answers INSUFFICIENT_FUNDS and debits nothing when the wallet is short', async () => {
    const before = await walletBalance(sb, 'USD', GLOBEX);
    const r = await initiate(
      sb,
      {
        ...nipBody(),
        sourceAmount: 49_999,
        destinationCurrency: 'EUR',
        destinationCountryCode: 'DEU',
        method: 'SEPA',
        beneficiary: { accountName: 'A', accountCurrency: 'EUR', iban: 'DE89370400440532013000' },
      },
      GLOBEX,
    );
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('INSUFFICIENT_FUNDS');
    expect(await walletBalance(sb, 'USD', GLOBEX)).toBe(before);
  });

  it('refuses (quote and initiate) an amount that converts to 0: the fee would buy the beneficiary nothing', async () => {
    const before = await walletBalance(sb, 'NGN');
    const corridor = {
      sourceAmount: 0.01,
      sourceCurrency: 'NGN',
      destinationCurrency: 'USD',
      destinationCountryCode: 'USA',
      method: 'SWIFT',
    };
    const beneficiary = {
      accountName: 'A',
      accountCurrency: 'USD',
      accountNumber: '1',
      swiftCode: 'CHASUS33',
      bankName: 'B',
      beneficiaryCountry: 'USA',
    };
    for (const r of [
      await call(sb, 'POST', `${P}/quote`, { body: corridor }),
      await initiate(sb, { ...corridor, narration: 'x', beneficiary }),
    ]) {
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual([{ field: 'sourceAmount', message: expect.stringContaining('0 USD') }]);
    }
    expect(await walletBalance(sb, 'NGN')).toBe(before);
    expect((await call(sb, 'POST', `${P}/quote`, { body: { ...corridor, sourceAmount: 7.66 } })).body.destinationAmount).toBe(0.01);
  });

  it('answers CORRIDOR_NOT_ENABLED, PROHIBITED_DESTINATION and VALIDATION_ERROR like quote', async () => {
    expect((await initiate(sb, nipBody({ destinationCurrency: 'GHS', destinationCountryCode: 'GHA', method: 'SWIFT' }))).body.error).toBe(
      'CORRIDOR_NOT_ENABLED',
    );
    expect(
      (
        await initiate(
          sb,
          nipBody({ beneficiary: { accountName: 'A', accountCurrency: 'NGN', accountNumber: '1', bankCode: '2', countryCode: 'IRN' } }),
        )
      ).body.error,
    ).toBe('PROHIBITED_DESTINATION');
    const noNarration = await initiate(sb, nipBody({ narration: undefined }));
    expect(noNarration.body).toMatchObject({ statusCode: 400, error: 'VALIDATION_ERROR' });
    expect(noNarration.body.errors[0].field).toBe('narration');
    const wrongCurrency = await initiate(
      sb,
      nipBody({ beneficiary: { accountName: 'A', accountCurrency: 'USD', accountNumber: '1', bankCode: '2' } }),
    );
    expect(wrongCurrency.body.errors[0].field).toBe('beneficiary.accountCurrency');
    const badType = await initiate(sb, {
      sourceAmount: 10,
      sourceCurrency: 'USD',
      destinationCurrency: 'USD',
      destinationCountryCode: 'USA',
      method: 'ACH',
      narration: 'x',
      beneficiary: { accountName: 'A', accountCurrency: 'USD', routingNumber: '021000021', accountNumber: '1', accountType: 'business' },
    });
    expect(badType.body.errors[0].field).toBe('beneficiary.accountType');
  });

  it("refuses a beneficiary's country that is no alpha-3 code (spec §1.6), so none slips past the prohibited check", async () => {
    const nip = (countryCode: string) =>
      nipBody({ beneficiary: { accountName: 'A', accountCurrency: 'NGN', accountNumber: '1', bankCode: '2', countryCode } });
    for (const code of ['irn', 'Iran', 'IR']) {
      const r = await initiate(sb, nip(code));
      expect(r.status, code).toBe(400);
      expect(r.body.errors, code).toEqual([{ field: 'beneficiary.countryCode', message: expect.stringContaining('alpha-3') }]);
    }
    expect((await initiate(sb, swiftUsdBody('usa'))).body.errors).toEqual([
      { field: 'beneficiary.beneficiaryCountry', message: expect.any(String) },
    ]);
  });

  it('refuses a beneficiary value that fails the validation its methods route advertises for the field', async () => {
    const corridor = (method: string, currency: string, country: string, fields: Record<string, string>) => ({
      sourceAmount: 10,
      sourceCurrency: currency,
      destinationCurrency: currency,
      destinationCountryCode: country,
      method,
      narration: 'x',
      beneficiary: { accountName: 'A', accountCurrency: currency, ...fields },
    });
    const swift = (f = {}) =>
      corridor('SWIFT', 'USD', 'USA', { accountNumber: '1', swiftCode: 'CHASUS33', bankName: 'B', beneficiaryCountry: 'USA', ...f });
    const fps = (f = {}) =>
      corridor('FASTER_PAYMENTS', 'GBP', 'GBR', { sortCode: '601613', accountNumber: '31926819', iban: 'GB29NWBK60161331926819', ...f });
    const ach = (f = {}) =>
      corridor('ACH', 'USD', 'USA', { routingNumber: '021000021', accountNumber: '1', accountType: 'checking', ...f });
    const hk = (f: Record<string, string>) => corridor('HK_FPS', 'HKD', 'HKG', f);
    for (const valid of [swift({ iban: 'DE89370400440532013000', intermediarySwift: 'DEUTDEFFXXX' }), fps(), ach()])
      expect((await initiate(sb, valid)).status, JSON.stringify(valid)).toBe(201);
    for (const valid of [{ phoneNumber: '+85291234567' }, { email: 'chan@example.com.hk' }] as Record<string, string>[])
      expect((await initiate(sb, hk(valid))).status).toBe(201);
    const bad: [Record<string, unknown>, string][] = [
      [swift({ swiftCode: 'DEUTDEF' }), 'swiftCode'],
      [swift({ intermediarySwift: 'deutdeff' }), 'intermediarySwift'],
      [swift({ iban: 'DE89370400440532013001' }), 'iban'],
      [fps({ sortCode: '60161' }), 'sortCode'],
      [ach({ routingNumber: '021000022' }), 'routingNumber'],
      [hk({ phoneNumber: '91234567' }), 'phoneNumber'],
      [hk({ email: 'chan.at.example.com' }), 'email'],
    ];
    for (const [body, field] of bad) {
      const r = await initiate(sb, body);
      expect(r.body.errors, field).toEqual([{ field: `beneficiary.${field}`, message: expect.any(String) }]);
    }
  });

  it('refuses a SWIFT beneficiary whose beneficiaryCountry is prohibited, as it refuses such a countryCode', async () => {
    const before = await walletBalance(sb, 'USD');
    const r = await initiate(sb, swiftUsdBody('IRN'));
    expect(r.body.error).toBe('PROHIBITED_DESTINATION');
    expect(await walletBalance(sb, 'USD')).toBe(before);
  });
});

describe('get and list payouts (spec §4.3, §4.4)', () => {
  it('returns a payout by id, and 404 PAYOUT_NOT_FOUND to another business (tenant isolation)', async () => {
    const created = await initiate(sb, nipBody());
    const mine = await call(sb, 'GET', `${P}/${created.body.id}`);
    expect(mine.status).toBe(200);
    expect(Payout.parse(mine.body)).toEqual(created.body);
    const theirs = await call(sb, 'GET', `${P}/${created.body.id}`, { key: GLOBEX });
    expect(theirs.status).toBe(404);
    expect(theirs.body).toMatchObject({ statusCode: 404, error: 'PAYOUT_NOT_FOUND' });
    expect((await call(sb, 'GET', `${P}/00000000-0000-4000-8000-000000000000`)).body.error).toBe('PAYOUT_NOT_FOUND');
    const list = await call(sb, 'GET', `${P}?limit=100`, { key: GLOBEX });
    expect(list.body.data.some((p: { id: string }) => p.id === created.body.id)).toBe(false);
  });

  it('lists newest first with {data, meta: {total, page, limit, size}}, list items being the spec subset', async () => {
    const a = await initiate(sb, nipBody({ sourceAmount: 11 }));
    const b = await initiate(sb, nipBody({ sourceAmount: 12 }));
    const r = await call(sb, 'GET', `${P}?page=1&limit=2`);
    expect(r.status).toBe(200);
    const list = PayoutList.parse(r.body);
    expect(list.data.map((p) => p.id)).toEqual([b.body.id, a.body.id]);
    expect(Object.keys(r.body.data[0]).sort()).toEqual(
      [
        'id',
        'payoutRef',
        'status',
        'method',
        'sourceAmount',
        'sourceCurrency',
        'destinationAmount',
        'destinationCurrency',
        'exchangeRate',
        'transactionFees',
        'createdAt',
      ].sort(),
    );
    expect(list.meta).toMatchObject({ page: 1, limit: 2, size: 2 });
    const page2 = await call(sb, 'GET', `${P}?page=2&limit=2`);
    expect(page2.body.meta.total).toBe(list.meta.total);
    expect(page2.body.data[0].id).not.toBe(b.body.id);
    const dflt = await call(sb, 'GET', P);
    expect(dflt.body.meta.limit).toBe(20);
    const tooBig = await call(sb, 'GET', `${P}?limit=101`);
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error).toBe('VALIDATION_ERROR');
  });
});

describe('keys of one business', () => {
  it('share the business: a second key sees the first key payouts', async () => {
    const other = await start();
    try {
      const created = await initiate(other, nipBody(), ACME);
      const seen = await call(other, 'GET', `${P}/${created.body.id}`, { key: 'sk_sandbox_acme_secondary' });
      expect(seen.status).toBe(200);
      expect(seen.body.id).toBe(created.body.id);
    } finally {
      await other.close();
    }
  });

  it('logs every request with arrival time, key, method, path, route and status', async () => {
    const before = Date.now();
    await call(sb, 'GET', `${P}/wallets`, { key: GLOBEX, headers: { 'x-request-id': uniqueKey() } });
    const entry = sb
      .requestLog()
      .filter((e) => e.apiKey === GLOBEX && e.route === 'wallets')
      .at(-1)!;
    expect(entry).toMatchObject({ method: 'GET', path: `${P}/wallets`, status: 200 });
    expect(entry.at).toBeGreaterThanOrEqual(before);
  });
});

describe('request schemas', () => {
  it('takes an upload file name without a path separator or a NUL, and every other control character as it is', () => {
    const ok = (filename: string) => UploadUrlRequest.safeParse({ filename, contentType: 'application/pdf' }).success;
    expect(['a/b.pdf', 'a\\b.pdf', 'a\0b.pdf', '\0'].map(ok)).toEqual([false, false, false, false]);
    expect(['invoice.pdf', 'a\tb.pdf', 'a\u0001b.pdf', 'a\u009fb.pdf'].map(ok)).toEqual([true, true, true, true]);
  });
});

// The sandbox's two readings of the spec (src/sandbox/shapes.ts, src/sandbox/README.md "Readings of the spec"):
// the same requests to a strict and a variant sandbox, over real HTTP. Variant answers differ
// from strict ones where the spec says "not shown", carry the same values (a payout's sourceAmount
// the debit, fee included: spec §2), and are the same shape on every call; what the spec states
// (status codes, error codes, request checks) is the same in both.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { call, eventually, GLOBEX, nipBody, P, receiver, setStatus, start, uniqueKey, W, type Answer } from './helpers.ts';

let strict: LocalSandbox;
let variant: LocalSandbox;
beforeAll(async () => {
  [strict, variant] = await Promise.all([start(), start({ shapes: 'variant', webhookRetryDelaysMs: [30] })]);
});
afterAll(() => Promise.all([strict.close(), variant.close()]));

/** The same request to both sandboxes: [strict answer, variant answer]. */
const both = (method: string, path: string, opts: Parameters<typeof call>[3] = {}): Promise<[Answer, Answer]> =>
  Promise.all([call(strict, method, path, opts), call(variant, method, path, opts)]);

/** A variant amount: a decimal string with `places` decimals, the same value as the strict number. */
function sameAmount(text: unknown, value: number, places = 2): void {
  expect(typeof text, `${String(text)} for ${value}`).toBe('string');
  expect(text).toMatch(new RegExp(`^-?\\d+\\.\\d{${places}}$`));
  expect(Number(text)).toBe(value);
}

/** A variant rate: a decimal string of the same value. */
function sameRate(text: unknown, value: number): void {
  expect(typeof text).toBe('string');
  expect(Number(text)).toBe(value);
}

const expectEnvelope = (r: Answer, status: number) => {
  expect(r.status).toBe(status);
  expect(r.body).toMatchObject({ statusCode: status, message: expect.any(String) });
  return r.body.data;
};

/** Wallet ids by currency; `data` holds the list in both readings. */
const wallets = async (sb: LocalSandbox): Promise<Record<string, string>> =>
  Object.fromEntries(
    (await call(sb, 'GET', `${P}/wallets`)).body.data.map((w: { currency: string; walletId: string }) => [w.currency, w.walletId]),
  );

describe('starting', () => {
  it('answers strict by default and says which reading it answers in', async () => {
    expect(strict.shapes).toBe('strict');
    expect(variant.shapes).toBe('variant');
    await expect(startSandbox({ shapes: 'loose' as 'strict' })).rejects.toThrow(TypeError);
  });
});

describe('payouts (spec §4.1-4.5)', () => {
  it('quote: the same figures, in an envelope, amounts as strings with the minor digits', async () => {
    const body = { sourceAmount: 1000, sourceCurrency: 'USD', destinationCurrency: 'NGN', destinationCountryCode: 'NGA', method: 'NIP' };
    const [s, v] = await both('POST', `${P}/quote`, { body });
    expect(s.status).toBe(200);
    const q = expectEnvelope(v, 200);
    expect(q).toEqual({
      sourceAmount: '1000.00',
      sourceCurrency: 'USD',
      destinationAmount: '1530500.00',
      destinationCurrency: 'NGN',
      totalDeductible: '1000.07',
      exchangeRate: '1530.5',
      method: 'NIP',
      fee: { amount: '0.07', currency: 'USD' },
    });
    for (const k of ['sourceAmount', 'destinationAmount', 'totalDeductible'] as const) sameAmount(q[k], s.body[k]);
    sameAmount(q.fee.amount, s.body.fee.amount);
    sameRate(q.exchangeRate, s.body.exchangeRate);
  });

  it('initiate: only the fields the spec promises, in an envelope; a replay answers the same', async () => {
    const idem = uniqueKey('shapes');
    const [s, v] = await both('POST', `${P}/initiate`, { body: nipBody({ sourceAmount: 250.5 }), idem });
    expect(s.status).toBe(201);
    expect(Object.keys(s.body)).toContain('supportingDocuments');
    const created = expectEnvelope(v, 201);
    expect(Object.keys(created).sort()).toEqual(['destinationAmount', 'exchangeRate', 'id', 'payoutRef', 'sourceAmount', 'status']);
    expect(created.status).toBe('PENDING');
    // spec §2 "amount debited from the source wallet": the amount sent plus its fee
    sameAmount(created.sourceAmount, s.body.sourceAmount + s.body.transactionFees);
    sameAmount(created.destinationAmount, s.body.destinationAmount);
    sameRate(created.exchangeRate, s.body.exchangeRate);

    const replay = await call(variant, 'POST', `${P}/initiate`, { body: nipBody({ sourceAmount: 250.5 }), idem });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(v.body);
  });

  it('get payout: the full payout, nulls for absent optional fields, amounts as strings, extra fields', async () => {
    const idem = uniqueKey('shapes');
    const [cs, cv] = await both('POST', `${P}/initiate`, { body: nipBody({ sourceAmount: 75 }), idem });
    const s = await call(strict, 'GET', `${P}/${cs.body.id}`);
    const v = await call(variant, 'GET', `${P}/${cv.body.data.id}`);
    expect(s.body).not.toHaveProperty('statusDetail');
    expect(s.body).not.toHaveProperty('informationRequests');
    const p = expectEnvelope(v, 200);
    expect(p).toMatchObject({
      id: cv.body.data.id,
      payoutRef: cv.body.data.payoutRef,
      status: 'PENDING',
      statusDetail: null,
      informationRequests: null,
      method: 'NIP',
      sourceCurrency: 'USD',
      destinationCurrency: 'NGN',
      supportingDocuments: [],
      businessId: variant.keys[0]!.businessId,
      _links: { self: { href: `${variant.url}${P}/${cv.body.data.id}` } },
    });
    sameAmount(p.sourceAmount, s.body.sourceAmount + s.body.transactionFees);
    sameAmount(p.transactionFees, s.body.transactionFees);
    sameAmount(p.destinationAmount, s.body.destinationAmount);
    sameRate(p.exchangeRate, s.body.exchangeRate);
    // Whatever the spec states of a payout is there in both readings.
    for (const k of ['createdAt', 'updatedAt', 'method', 'status']) expect(p).toHaveProperty(k);

    // Present values stay values: informationRequests while ADDITIONAL_INFO_REQUIRED, statusDetail after.
    await setStatus(variant, 'payouts', p.id, { status: 'ADDITIONAL_INFO_REQUIRED' });
    const asked = (await call(variant, 'GET', `${P}/${p.id}`)).body.data;
    expect(asked.informationRequests).toEqual([expect.objectContaining({ type: 'FILE' })]);
    await setStatus(variant, 'payouts', p.id, { status: 'PENDING' });
    expect((await call(variant, 'GET', `${P}/${p.id}`)).body.data).toMatchObject({
      statusDetail: 'ADDITIONAL_INFO_UNDER_REVIEW',
      informationRequests: null,
    });
  });

  it('list payouts: {data, meta} kept, with statusCode and message, items with string amounts', async () => {
    const [s, v] = await both('GET', `${P}?limit=2`);
    const items = expectEnvelope(v, 200);
    expect(v.body.meta).toEqual(s.body.meta);
    expect(items).toHaveLength(2);
    items.forEach((item: Record<string, unknown>, i: number) => {
      expect(Object.keys(item).sort()).toEqual(Object.keys(s.body.data[i]).sort());
      sameAmount(item.sourceAmount, s.body.data[i].sourceAmount + s.body.data[i].transactionFees);
      sameAmount(item.destinationAmount, s.body.data[i].destinationAmount);
      sameAmount(item.transactionFees, s.body.data[i].transactionFees);
      sameRate(item.exchangeRate, s.body.data[i].exchangeRate);
    });
  });

  it('upload-url and PATCH documents: in an envelope, documents with deletedAt null', async () => {
    const body = { filename: 'invoice.pdf', contentType: 'application/pdf' };
    const [s, v] = await both('POST', `${P}/documents/upload-url`, { body });
    expect(Object.keys(s.body).sort()).toEqual(['documentUrl', 'headers', 'uploadUrl']);
    const u = expectEnvelope(v, 200);
    expect(u).toMatchObject({
      uploadUrl: expect.any(String),
      documentUrl: expect.any(String),
      headers: expect.any(Object),
      expiresIn: 900,
    });
    expect((await fetch(u.uploadUrl, { method: 'PUT', headers: u.headers, body: Buffer.from('%PDF-1.4 shapes') })).status).toBe(200);

    const p = (await call(variant, 'POST', `${P}/initiate`, { body: nipBody(), idem: uniqueKey('shapes') })).body.data;
    const patched = await call(variant, 'PATCH', `${P}/${p.id}/documents`, { body: { documents: [u.documentUrl, u.documentUrl] } });
    expect(expectEnvelope(patched, 200)).toEqual({
      payoutId: p.id,
      totalDocuments: 1,
      documents: [{ id: expect.any(String), url: u.documentUrl, uploadedAt: expect.any(String), deletedAt: null }],
    });
    // GET shows the same document; the spec's fields of a stored document stay as they are.
    expect((await call(variant, 'GET', `${P}/${p.id}`)).body.data.supportingDocuments).toEqual([
      { id: patched.body.data.documents[0].id, url: u.documentUrl, uploadedAt: patched.body.data.documents[0].uploadedAt },
    ]);
  });
});

describe('swaps (spec §4.7, §4.8)', () => {
  it('swap, get swap and list swaps: envelopes, amounts as strings, the same values', async () => {
    const ids = await wallets(strict);
    expect(await wallets(variant)).toEqual(ids);
    const body = {
      sourceWalletId: ids.USD,
      destinationWalletId: ids.EUR,
      swapAmount: 1000,
      swapCurrency: 'USD',
      amountToBeSent: 921.5,
      currencyToBeSent: 'EUR',
    };
    const [s, v] = await both('POST', `${P}/swap`, { body, idem: uniqueKey('swap') });
    expect(s.status).toBe(201);
    const created = expectEnvelope(v, 201);
    expect(created).toMatchObject({
      status: 'PROCESSING',
      method: 'SWAP',
      sourceAmount: '1000.00',
      destinationAmount: '921.50',
      transactionFees: '0.00',
      exchangeRate: '0.9215',
      sourceWalletId: ids.USD,
      destinationWalletId: ids.EUR,
      businessId: s.body.businessId,
      _links: { self: { href: `${variant.url}${P}/swaps/${created.id}` } },
    });

    const got = expectEnvelope(await call(variant, 'GET', `${P}/swaps/${created.id}`), 200);
    expect(got).toMatchObject({
      id: created.id,
      supportingDocuments: [],
      deletedAt: null,
      sourceAmount: '1000.00',
      transactionFees: '0.00',
    });
    expect(got.updatedAt).toEqual(expect.any(String));

    const [ls, lv] = await both('GET', `${P}/swaps`);
    expectEnvelope(lv, 200);
    expect(lv.body.meta).toEqual(ls.body.meta);
    sameAmount(lv.body.data[0].destinationAmount, ls.body.data[0].destinationAmount);
    sameAmount(lv.body.data[0].transactionFees, 0);
  });
});

describe('pairs and the toggle (spec §4.9, §4.10)', () => {
  it('pairs: id instead of currencyPairId, a code, no enabled, rates as strings; enabled pairs only', async () => {
    const [s, v] = await both('GET', `${P}/pairs`);
    const pairs = expectEnvelope(v, 200);
    expect(pairs).toHaveLength(s.body.data.length);
    pairs.forEach((p: Record<string, unknown>, i: number) => {
      const sp = s.body.data[i];
      expect(p).toEqual({
        id: sp.currencyPairId,
        code: `${sp.baseCurrency}/${sp.quoteCurrency}`,
        baseCurrency: sp.baseCurrency,
        quoteCurrency: sp.quoteCurrency,
        rate: expect.any(String),
      });
      sameRate(p.rate, sp.rate);
    });
    // The spec's route lists enabled pairs only: this reading has no ?status=all.
    const [all, allVariant] = await both('GET', `${P}/pairs?status=all`);
    expect(all.body.data.length).toBeGreaterThan(pairs.length);
    expect(allVariant.body).toEqual(v.body);
  });

  it('toggle: {id, baseCurrency, quoteCurrency, isEnabled} in an envelope; the same requests are refused', async () => {
    const ghs = (await call(strict, 'GET', `${P}/pairs?status=all`)).body.data.find(
      (p: { quoteCurrency: string }) => p.quoteCurrency === 'GHS',
    );
    const path = `${P}/currency-pairs/${ghs.currencyPairId}/toggle`;
    const [s, v] = await both('PATCH', path, { body: { enabled: true } });
    expect(s.body).toMatchObject({ currencyPairId: ghs.currencyPairId, enabled: true, rate: 15.2 });
    expect(expectEnvelope(v, 200)).toEqual({ id: ghs.currencyPairId, baseCurrency: 'USD', quoteCurrency: 'GHS', isEnabled: true });
    expect((await call(variant, 'GET', `${P}/pairs`)).body.data.map((p: { code: string }) => p.code)).toContain('USD/GHS');
    expect((await call(variant, 'PATCH', path)).body.data.isEnabled).toBe(false);
    await call(strict, 'PATCH', path, { body: { enabled: false } });

    const [bs, bv] = await both('PATCH', path, { body: { enabled: 'yes' } });
    expect([bs.status, bs.body.error]).toEqual([400, 'VALIDATION_ERROR']);
    expect([bv.status, bv.body.error]).toEqual([400, 'VALIDATION_ERROR']);
    const [fs, fv] = await both('PATCH', path, { key: GLOBEX, body: {} });
    expect(fv.status).toBe(404);
    expect(fv.body).toEqual(fs.body);
  });
});

describe('methods (spec §4.11)', () => {
  const methods = (q: string) => both('GET', `${P}/methods?${q}`);

  it('SWIFT tiered, HK FPS as HONG_KONG_FPS with descriptors and a oneOf group, settlement as hours', async () => {
    const [s, v] = await methods('sourceCurrency=USD&destinationCurrency=HKD&destinationCountryCode=HKG');
    const m = expectEnvelope(v, 200);
    expect(m.corridor).toEqual(s.body.corridor);
    expect(m.rate).toEqual({ rate: '7.812' });
    expect(m.methods.map((x: { code: string }) => x.code)).toEqual(['SWIFT', 'HONG_KONG_FPS']);

    const swift = m.methods[0];
    expect(swift.fee).toEqual({
      type: 'TIERED',
      currency: 'USD',
      tiers: [
        { min: '0.00', max: '1999.99', amount: '50.00' },
        { min: '2000.00', max: '9999.99', amount: '40.00' },
        { min: '10000.00', max: null, amount: '0.00' },
      ],
    });
    expect(swift.settlement).toEqual({ description: '24 to 72 hours', minHours: 24, maxHours: 72 });
    // Descriptors {name, type, description, validation?} with no `required`; the same names as strict.
    const strictSwift = s.body.methods[0];
    expect(swift.requiredFields.map((f: { name: string }) => f.name)).toEqual(
      strictSwift.requiredFields.map((f: { name: string }) => f.name),
    );
    for (const f of [...swift.requiredFields, ...swift.optionalFields]) {
      expect(f).toEqual({
        name: expect.any(String),
        type: expect.any(String),
        description: expect.any(String),
        ...(f.validation ? { validation: f.validation } : {}),
      });
    }
    expect(swift.optionalFields.map((f: { name: string }) => f.name)).toEqual(
      strictSwift.optionalFields.map((f: { name: string }) => f.name),
    );

    const fps = m.methods[1];
    expect(fps.fee).toEqual({ amount: '20.00', currency: 'USD', type: 'FLAT' });
    expect(fps.settlement).toEqual({ description: 'under 24 hours', minHours: 0, maxHours: 24 });
    expect(fps.requiredFields.slice(0, 2).map((f: { name: string }) => f.name)).toEqual(['accountName', 'accountCurrency']);
    expect(fps.requiredFields[2]).toEqual({ oneOf: [['fpsId'], ['phoneNumber'], ['email'], ['accountNumber', 'bankCode']] });
  });

  it('NIP fee a bare number, ALIPAY no fee, WECHAT names only with a oneOf of names and no optionalFields', async () => {
    const [s, v] = await methods('sourceCurrency=USD&destinationCurrency=NGN&destinationCountryCode=NGA');
    const nip = expectEnvelope(v, 200).methods.find((x: { code: string }) => x.code === 'NIP');
    expect(nip.fee).toBe(s.body.methods.find((x: { code: string }) => x.code === 'NIP').fee.amount);
    expect(nip.fee).toBe(0.07);
    expect(nip.requiredFields).toEqual(['accountName', 'accountCurrency', 'accountNumber', 'bankCode']);
    expect(nip).not.toHaveProperty('optionalFields');

    const [cs, cv] = await methods('sourceCurrency=NGN&destinationCurrency=CNY&destinationCountryCode=CHN');
    const list = expectEnvelope(cv, 200).methods;
    expect(list.map((x: { code: string }) => x.code)).toEqual(cs.body.methods.map((x: { code: string }) => x.code));
    const alipay = list.find((x: { code: string }) => x.code === 'ALIPAY');
    expect(alipay).not.toHaveProperty('fee');
    expect(alipay.requiredFields).toEqual(['accountName', 'accountCurrency', 'alipayId']);
    const wechat = list.find((x: { code: string }) => x.code === 'WECHAT');
    expect(wechat.requiredFields).toEqual(['accountName', 'accountCurrency', { oneOf: [['openId'], ['wechatUserId']] }]);
    expect(wechat).not.toHaveProperty('optionalFields');
    expect(wechat.fee).toEqual({ amount: '10.00', currency: 'NGN', type: 'FLAT' });
  });

  it('refuses the same queries as strict, with the same codes', async () => {
    for (const q of [
      'sourceCurrency=USD&destinationCurrency=NGN',
      'sourceCurrency=USD&destinationCurrency=XOF&destinationCountryCode=SEN',
      'sourceCurrency=USD&destinationCurrency=USD&destinationCountryCode=SYR',
    ]) {
      const [s, v] = await methods(q);
      expect([v.status, v.body.statusCode, v.body.error]).toEqual([s.status, s.body.statusCode, s.body.error]);
    }
  });
});

describe('wallets, countries, transactions (spec §4.12, §4.14, §4.15)', () => {
  it('wallets: an envelope, balances as strings of the same value, businessId', async () => {
    const [s, v] = await both('GET', `${P}/wallets`, { key: GLOBEX });
    const list = expectEnvelope(v, 200);
    expect(list.map((w: { walletId: string }) => w.walletId)).toEqual(s.body.data.map((w: { walletId: string }) => w.walletId));
    list.forEach((w: { balance: string; businessId: string; currency: string }, i: number) => {
      expect(w.currency).toBe(s.body.data[i].currency);
      sameAmount(w.balance, s.body.data[i].balance);
      expect(w.businessId).toBe(variant.keys.find((k) => k.key === GLOBEX)!.businessId);
    });
  });

  it('countries: numeric ids, decimal figures as strings, extra fields', async () => {
    const [s, v] = await both('GET', '/api/public/auth/countries?limit=3');
    expect(v.body.meta).toEqual(s.body.meta);
    expect(v.body).toMatchObject({ statusCode: 200, message: s.body.message });
    const nga = v.body.data.find((c: { code: string }) => c.code === 'NGA');
    const strictNga = s.body.data.find((c: { code: string }) => c.code === 'NGA');
    expect(nga).toMatchObject({
      ...strictNga,
      cpi: String(strictNga.cpi),
      gdpPerCapitaInUsd: String(strictNga.gdpPerCapitaInUsd),
      slug: 'nigeria',
    });
    expect(typeof nga.id).toBe('number');
    expect(nga.deletedAt).toBeNull();
  });

  it('transactions: amounts and balances as strings with the minor digits, extra fields', async () => {
    const ref = 'SHAPES-TX-1';
    const ids = await wallets(strict);
    const body = {
      sourceWalletId: ids.GBP,
      destinationWalletId: ids.EUR,
      swapAmount: 100,
      swapCurrency: 'GBP',
      amountToBeSent: 117.4,
      currencyToBeSent: 'EUR',
      reference: ref,
    };
    await both('POST', `${P}/swap`, { body, idem: uniqueKey('swap') });
    const [s, v] = await both('GET', `/api/public/transactions?filter[payoutRef]=${ref}`);
    expect(v.body.meta).toEqual(s.body.meta);
    expect(v.body.data).toHaveLength(2);
    v.body.data.forEach((t: Record<string, unknown>, i: number) => {
      const st = s.body.data[i];
      expect(t).toMatchObject({ type: st.type, currency: st.currency, reference: ref, walletId: st.wallet.walletId, wallet: st.wallet });
      sameAmount(t.amount, st.amount);
      sameAmount(t.balanceBefore, st.balanceBefore);
      sameAmount(t.balanceAfter, st.balanceAfter);
    });
    expect(v.body.data.map((t: { amount: string }) => t.amount).sort()).toEqual(['-100.00', '117.40']);
  });
});

describe('webhooks (spec §4.13, §6)', () => {
  it('subscription routes: envelopes, eventTypes null for all, businessId, deletedAt', async () => {
    const [s, v] = await both('POST', W, { body: { url: 'https://hooks.example.com/shapes', secret: 'whsec' } });
    expect(s.body).toMatchObject({ eventTypes: [], hasSecret: true });
    const sub = expectEnvelope(v, 201);
    expect(sub).toMatchObject({
      id: expect.any(String),
      url: 'https://hooks.example.com/shapes',
      eventTypes: null,
      hasSecret: true,
      businessId: variant.keys[0]!.businessId,
      isActive: true,
      deletedAt: null,
    });
    expect(JSON.stringify(v.body)).not.toContain('whsec');
    expect((await call(variant, 'GET', W)).body).toMatchObject({ statusCode: 200, data: [sub] });
    expect(expectEnvelope(await call(variant, 'GET', `${W}/${sub.id}`), 200)).toEqual(sub);
    const patched = expectEnvelope(
      await call(variant, 'PATCH', `${W}/${sub.id}`, { body: { eventTypes: ['payout.status.changed'] } }),
      200,
    );
    expect(patched.eventTypes).toEqual(['payout.status.changed']);
    const deleted = expectEnvelope(await call(variant, 'DELETE', `${W}/${sub.id}`), 200);
    expect(deleted).toMatchObject({ id: sub.id, isActive: false, deletedAt: expect.any(String) });
    await call(strict, 'DELETE', `${W}/${s.body.id}`);
    // The same refusals: a plain http URL off loopback.
    const [rs, rv] = await both('POST', W, { body: { url: 'http://hooks.example.com/x' } });
    expect([rs.status, rs.body.error]).toEqual([400, 'VALIDATION_ERROR']);
    expect([rv.status, rv.body.error]).toEqual([400, 'VALIDATION_ERROR']);
  });

  it('events: nulls for absent optional fields, oldStatus null on a swap creation, walletId on wallet events', async () => {
    const rx = await receiver();
    const sub = (await call(variant, 'POST', W, { body: { url: rx.url } })).body.data;
    try {
      const ids = await wallets(variant);
      const created = await call(variant, 'POST', `${P}/swap`, {
        idem: uniqueKey('swap'),
        body: {
          sourceWalletId: ids.USD,
          destinationWalletId: ids.EUR,
          swapAmount: 10,
          swapCurrency: 'USD',
          amountToBeSent: 9.22,
          currencyToBeSent: 'EUR',
        },
      });
      const swapId = created.body.data.id;
      await eventually(() => (rx.received.length >= 3 ? true : undefined));
      const creation = rx.received.find((d) => d.body.eventType === 'payout.status.changed')!.body;
      expect(creation.data).toEqual({
        payoutId: swapId,
        businessId: variant.keys[0]!.businessId,
        oldStatus: null,
        newStatus: 'PROCESSING',
        newStatusDetail: null,
        oldStatusDetail: null,
        informationRequests: null,
        changedAt: expect.any(String),
        reason: null,
        changedBy: null,
      });
      const debit = rx.received.find((d) => d.body.eventType === 'wallet.debited')!.body;
      expect(debit.data).toMatchObject({ amount: 10, currency: 'USD', transactionType: 'dr', walletId: ids.USD });
      expect(rx.received.find((d) => d.body.eventType === 'wallet.credited')!.body.data).toMatchObject({ amount: 9.22, walletId: ids.EUR });

      await setStatus(variant, 'swaps', swapId, { status: 'SUCCESSFUL', reason: 'Confirmed' });
      await eventually(() => (rx.received.length >= 4 ? true : undefined));
      expect(rx.received[3]!.body.data).toMatchObject({
        oldStatus: 'PROCESSING',
        newStatus: 'SUCCESSFUL',
        reason: 'Confirmed',
        newStatusDetail: null,
      });

      const p = (await call(variant, 'POST', `${P}/initiate`, { body: nipBody({ sourceAmount: 5 }), idem: uniqueKey('shapes') })).body.data;
      await setStatus(variant, 'payouts', p.id, { status: 'ADDITIONAL_INFO_REQUIRED' });
      await setStatus(variant, 'payouts', p.id, { status: 'PENDING' });
      await eventually(() => (rx.received.filter((d) => d.body.data.payoutId === p.id).length >= 2 ? true : undefined));
      const [asked, review] = rx.received.filter((d) => d.body.data.payoutId === p.id).map((d) => d.body.data);
      expect(asked).toMatchObject({
        oldStatus: 'PENDING',
        newStatus: 'ADDITIONAL_INFO_REQUIRED',
        informationRequests: [expect.any(Object)],
        newStatusDetail: null,
      });
      expect(review).toMatchObject({
        newStatus: 'PENDING',
        newStatusDetail: 'ADDITIONAL_INFO_UNDER_REVIEW',
        informationRequests: null,
        oldStatusDetail: null,
      });
    } finally {
      await call(variant, 'DELETE', `${W}/${sub.id}`);
      await rx.close();
    }
  });
});

describe('errors (spec §7) and requests', () => {
  it('VALIDATION_ERROR carries its message as an array of strings; statusCode and the code stay', async () => {
    const [s, v] = await both('POST', `${P}/quote`, { body: { sourceAmount: -1, sourceCurrency: 'USD' } });
    expect(s.body).toMatchObject({ statusCode: 400, error: 'VALIDATION_ERROR', message: expect.any(String) });
    expect(v.status).toBe(400);
    expect(v.body).toEqual({ statusCode: 400, error: 'VALIDATION_ERROR', message: expect.any(Array) });
    expect(v.body.message).toHaveLength(s.body.errors.length);
    expect(v.body.message[0]).toMatch(/^sourceAmount /);
  });

  it('every other refusal answers as in strict, and requests are checked the same way', async () => {
    const requests: [string, string, Parameters<typeof call>[3]][] = [
      ['POST', `${P}/initiate`, { body: nipBody() }],
      ['POST', `${P}/initiate`, { body: nipBody({ beneficiary: { accountName: 'A', accountCurrency: 'NGN' } }), idem: 'shapes-missing' }],
      ['POST', `${P}/initiate`, { body: nipBody({ sourceAmount: 1e9 }), idem: 'shapes-funds' }],
      [
        'POST',
        `${P}/quote`,
        { body: { sourceAmount: 1, sourceCurrency: 'USD', destinationCurrency: 'XOF', destinationCountryCode: 'SEN', method: 'SWIFT' } },
      ],
      ['GET', `${P}/00000000-0000-4000-8000-000000000000`, {}],
      ['GET', `${P}/swaps/00000000-0000-4000-8000-000000000000`, {}],
      ['GET', `${P}/wallets`, { key: null }],
      ['GET', `${P}/pairs`, { key: 'sk_nobody_at_all' }],
    ];
    for (const [method, path, opts] of requests) {
      const [s, v] = await both(method, path, opts);
      expect(s.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
      // The message may name a balance, which differs between the two sandboxes by now.
      const { message: _sm, ...strictBody } = s.body;
      const { message: _vm, ...variantBody } = v.body;
      expect([v.status, variantBody, typeof v.body.message], `${method} ${path}`).toEqual([s.status, strictBody, 'string']);
    }
  });
});

describe('determinism', () => {
  it('the same route answers the same variant shape on every call, and in every variant sandbox', async () => {
    const other = await start({ shapes: 'variant' });
    try {
      for (const path of [
        `${P}/pairs`,
        `${P}/wallets`,
        `${P}/methods?sourceCurrency=USD&destinationCurrency=NGN&destinationCountryCode=NGA`,
        `${P}/methods?sourceCurrency=HKD&destinationCurrency=HKD&destinationCountryCode=HKG`,
        `${P}/methods?sourceCurrency=GBP&destinationCurrency=GBP&destinationCountryCode=GBR`,
        '/api/public/auth/countries',
      ]) {
        const first = await call(other, 'GET', path);
        expect((await call(other, 'GET', path)).body, path).toEqual(first.body);
        if (!path.endsWith('wallets')) expect((await call(variant, 'GET', path)).body, path).toEqual(first.body);
      }
      const quote = {
        sourceAmount: 12.34,
        sourceCurrency: 'EUR',
        destinationCurrency: 'GBP',
        destinationCountryCode: 'GBR',
        method: 'SWIFT',
      };
      const q1 = await call(other, 'POST', `${P}/quote`, { body: quote });
      expect((await call(other, 'POST', `${P}/quote`, { body: quote })).body).toEqual(q1.body);
      expect(q1.body.data).toMatchObject({ sourceAmount: '12.34', fee: { amount: '50.00', currency: 'EUR' } });
    } finally {
      await other.close();
    }
  });
});

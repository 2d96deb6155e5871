import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { canonicalJson } from '../../src/text.ts';
import { call, GLOBEX, nipBody, P, start, uniqueKey, walletBalance } from './helpers.ts';

let sb: LocalSandbox;
beforeAll(async () => {
  sb = await start();
});
afterAll(() => sb.close());

const post = (body: unknown, idem?: string, key?: string) =>
  call(sb, 'POST', `${P}/initiate`, { body, ...(idem ? { idem } : {}), ...(key ? { key } : {}) });

describe('Idempotency-Key on initiate (spec §4.2 rules 1-3)', () => {
  it('returns the original payout for the same key and body: one payout, one debit', async () => {
    const key = uniqueKey();
    const before = await walletBalance(sb, 'USD');
    const first = await post(nipBody(), key);
    // Same body with its keys in another order: semantically the same JSON.
    const reordered = Object.fromEntries(Object.entries(nipBody()).reverse());
    const again = await post(reordered, key);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await walletBalance(sb, 'USD')).toBe(Number((before - 1000.07).toFixed(2)));
    const list = await call(sb, 'GET', `${P}?limit=100`);
    expect(list.body.data.filter((p: { id: string }) => p.id === first.body.id)).toHaveLength(1);
    const tx = await call(sb, 'GET', `/api/public/transactions?filter[payoutRef]=${first.body.payoutRef}`);
    expect(tx.body.meta.total).toBe(1);
  });

  it('answers 409 IDEMPOTENCY_KEY_CONFLICT for the same key with another body', async () => {
    const key = uniqueKey();
    await post(nipBody(), key);
    const r = await post(nipBody({ sourceAmount: 1001 }), key);
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ statusCode: 409, error: 'IDEMPOTENCY_KEY_CONFLICT' });
  });

  it('answers 400 MISSING_IDEMPOTENCY_KEY without a key, and creates nothing', async () => {
    const before = await walletBalance(sb, 'USD');
    const r = await post(nipBody());
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('MISSING_IDEMPOTENCY_KEY');
    expect(await walletBalance(sb, 'USD')).toBe(before);
  });

  it('stores no key on a 4xx: the fixed body may be sent under the same key', async () => {
    const key = uniqueKey();
    const refused = await post(nipBody({ beneficiary: { accountName: 'A', accountCurrency: 'NGN' } }), key);
    expect(refused.body.error).toBe('MISSING_REQUIRED_FIELDS');
    const fixed = await post(nipBody(), key);
    expect(fixed.status).toBe(201);
  });

  it('scopes keys per business', async () => {
    const key = uniqueKey();
    const acme = await post(nipBody(), key);
    const globex = await post(
      nipBody({
        sourceAmount: 10,
        method: 'SWIFT',
        destinationCurrency: 'EUR',
        destinationCountryCode: 'DEU',
        beneficiary: {
          accountName: 'B',
          accountCurrency: 'EUR',
          accountNumber: '1',
          swiftCode: 'DEUTDEFF',
          bankName: 'DB',
          beneficiaryCountry: 'DEU',
        },
      }),
      key,
      GLOBEX,
    );
    expect(globex.status).toBe(201);
    expect(globex.body.id).not.toBe(acme.body.id);
  });

  it('creates no payout it cannot answer: a 500 leaves no record and no debit behind its unbound key', async () => {
    const own = await start();
    try {
      const pair = (await call(own, 'GET', `${P}/pairs`)).body.data.find((p: { quoteCurrency: string }) => p.quoteCurrency === 'NGN');
      // a rate that makes the NGN amount more digits than a JSON number carries exactly
      expect((await call(own, 'PUT', `/_sandbox/pairs/${pair.currencyPairId}/rate`, { body: { rate: '15305000.5' } })).status).toBe(200);
      const before = await walletBalance(own, 'USD');
      const key = uniqueKey();
      for (let i = 0; i < 2; i++) {
        const r = await call(own, 'POST', `${P}/initiate`, { body: nipBody({ sourceAmount: 999_000.01 }), idem: key });
        expect(r.status).toBe(500);
      }
      expect(await walletBalance(own, 'USD')).toBe(before);
      expect((await call(own, 'GET', P)).body.meta.total).toBe(0);
    } finally {
      await own.close();
    }
  });

  it('compares bodies semantically: key order never matters, values always do', () => {
    expect(canonicalJson({ a: 1, b: { c: [1, { e: 2, d: 1 }] } })).toBe(canonicalJson({ b: { c: [1, { d: 1, e: 2 }] }, a: 1.0 }));
    expect(canonicalJson({ a: [1, 2] })).not.toBe(canonicalJson({ a: [2, 1] }));
  });
});

describe('the other reading of a refused key: a refusal binds it (storeRefusals, the variant reading; issue 39)', () => {
  let stored: LocalSandbox;
  beforeAll(async () => {
    stored = await start({ storeRefusals: true });
  });
  afterAll(() => stored.close());
  const send = (body: unknown, idem: string) => call(stored, 'POST', `${P}/initiate`, { body, idem });

  it('answers the same key and body with the same refusal, even once its cause is gone; another body 409', async () => {
    const key = uniqueKey();
    const big = nipBody({ sourceAmount: 900_000_000 });
    const refused = await send(big, key);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('INSUFFICIENT_FUNDS');
    // the wallet now covers it: the key still holds its refusal
    const usd = (await call(stored, 'GET', `${P}/wallets`)).body.data.find((w: { currency: string }) => w.currency === 'USD');
    await call(stored, 'POST', `/_sandbox/wallets/${usd.walletId}/credit`, { body: { amount: '900000000' } });
    const again = await send(big, key);
    expect(again.status).toBe(400);
    expect(again.body).toEqual(refused.body);
    const other = await send(nipBody(), key);
    expect(other.status).toBe(409);
    expect(other.body.error).toBe('IDEMPOTENCY_KEY_CONFLICT');
    // a new key goes through
    expect((await send(big, uniqueKey())).status).toBe(201);
  });

  it('keeps a refusal in its snapshot, stores no key for a missing one, and is the variant reading by default', async () => {
    const key = uniqueKey();
    await send(nipBody({ beneficiary: { accountName: 'A', accountCurrency: 'NGN' } }), key);
    const next = await start({ storeRefusals: true, state: stored.snapshot() });
    try {
      const r = await call(next, 'POST', `${P}/initiate`, { body: nipBody(), idem: key });
      expect(r.status).toBe(409);
    } finally {
      await next.close();
    }
    const variant = await start({ shapes: 'variant' });
    expect([variant.storeRefusals, sb.storeRefusals]).toEqual([true, false]);
    await variant.close();
  });
});

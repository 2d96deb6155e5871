import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { Swap, SwapCreated, SwapList } from './strict.ts';
import { call, GLOBEX, initiate, nipBody, P, setStatus, start, uniqueKey, walletBalance } from './helpers.ts';

let sb: LocalSandbox;
let wallets: Record<string, string>;
let globexWallets: Record<string, string>;
beforeAll(async () => {
  sb = await start();
  const ids = async (key?: string) =>
    Object.fromEntries(
      (await call(sb, 'GET', `${P}/wallets`, key ? { key } : {})).body.data.map((w: { currency: string; walletId: string }) => [
        w.currency,
        w.walletId,
      ]),
    );
  wallets = await ids();
  globexWallets = await ids(GLOBEX);
});
afterAll(() => sb.close());

const usdToEur = (overrides: Record<string, unknown> = {}) => ({
  sourceWalletId: wallets.USD,
  destinationWalletId: wallets.EUR,
  swapAmount: 1000,
  swapCurrency: 'USD',
  amountToBeSent: 921.5,
  currencyToBeSent: 'EUR',
  ...overrides,
});
const swap = (body: unknown, idem: string | null = uniqueKey('swap'), key?: string) =>
  call(sb, 'POST', `${P}/swap`, { body, ...(idem ? { idem } : {}), ...(key ? { key } : {}) });

describe('swap (spec §4.7)', () => {
  it('creates a PROCESSING SWAP (201), moving both wallets at once', async () => {
    const [usd, eur] = [await walletBalance(sb, 'USD'), await walletBalance(sb, 'EUR')];
    const r = await swap(usdToEur({ reference: 'TREASURY-1' }));
    expect(r.status).toBe(201);
    const s = SwapCreated.parse(r.body);
    expect(s).toMatchObject({
      status: 'PROCESSING',
      method: 'SWAP',
      transactionFees: 0,
      payoutRef: 'TREASURY-1',
      exchangeRate: 0.9215,
      sourceAmount: 1000,
      destinationAmount: 921.5,
    });
    expect(s.businessId).toBe(sb.keys.find((k) => k.key === 'sk_sandbox_acme_primary')!.businessId);
    expect(await walletBalance(sb, 'USD')).toBe(usd - 1000);
    expect(await walletBalance(sb, 'EUR')).toBe(Number((eur + 921.5).toFixed(2)));
    const tx = (await call(sb, 'GET', '/api/public/transactions?filter[payoutRef]=TREASURY-1')).body.data;
    expect(tx.map((t: { type: string; amount: number }) => [t.type, t.amount]).sort()).toEqual([
      ['CREDIT', 921.5],
      ['DEBIT', -1000],
    ]);
  });

  it('generates a reference when none is sent, and converts in reverse by dividing by the pair rate', async () => {
    // NGN→USD has its own pair (0.000653); EUR→USD is USD/EUR reversed: 921.5 / 0.9215 = 1000.00.
    const r = await swap({
      sourceWalletId: wallets.EUR,
      destinationWalletId: wallets.USD,
      swapAmount: 921.5,
      swapCurrency: 'EUR',
      amountToBeSent: 1000,
      currencyToBeSent: 'USD',
    });
    expect(r.status).toBe(201);
    expect(r.body.payoutRef).toMatch(/^SW-\d{8}-[0-9A-F]{8}$/);
  });

  it('answers each swap error of the spec', async () => {
    const expectError = async (body: unknown, status: number, error: string | undefined, message?: string) => {
      const r = await swap(body);
      expect(r.status).toBe(status);
      expect(r.body.error).toBe(error);
      if (message) expect(r.body.message).toBe(message);
    };
    await expectError(usdToEur({ destinationWalletId: wallets.USD }), 400, 'SWAP_WALLETS_MUST_DIFFER');
    await expectError(usdToEur({ sourceWalletId: globexWallets.USD }), 404, 'SOURCE_WALLET_NOT_FOUND');
    await expectError(usdToEur({ destinationWalletId: '5d4f0000-0000-4000-8000-000000000000' }), 404, 'DESTINATION_WALLET_NOT_FOUND');
    await expectError(usdToEur({ swapCurrency: 'GBP' }), 400, 'INVALID_SOURCE_CURRENCY');
    await expectError(usdToEur({ currencyToBeSent: 'GBP' }), 400, 'INVALID_DESTINATION_CURRENCY');
    // HKD/CNY: no such pair at all. USD/GHS would be disabled, but Acme has no GHS wallet; use a toggled pair below.
    await expectError(
      {
        sourceWalletId: wallets.HKD,
        destinationWalletId: wallets.CNY,
        swapAmount: 10,
        swapCurrency: 'HKD',
        amountToBeSent: 9,
        currencyToBeSent: 'CNY',
      },
      400,
      'UNSUPPORTED_CURRENCY_PAIR',
    );
    // The spec's mismatch has no code: NestJS's 'Bad Request' reason phrase, and the message.
    await expectError(usdToEur({ amountToBeSent: 921.49 }), 400, 'Bad Request', 'Invalid payout amount');
    await expectError(usdToEur({ swapAmount: 0 }), 400, 'VALIDATION_ERROR');
    await expectError(usdToEur({ businessId: 'x' }), 400, 'VALIDATION_ERROR');
    await expectError(usdToEur({ swapAmount: 5_000_000, amountToBeSent: 4_607_500 }), 400, 'INSUFFICIENT_FUNDS');
    const noKey = await swap(usdToEur(), null);
    expect(noKey.status).toBe(400);
    expect(noKey.body.error).toBe('MISSING_IDEMPOTENCY_KEY');
  });

  it('answers CORRIDOR_NOT_ENABLED when the pair exists but is disabled', async () => {
    const pair = (await call(sb, 'GET', `${P}/pairs`)).body.data.find(
      (p: { baseCurrency: string; quoteCurrency: string }) => p.baseCurrency === 'USD' && p.quoteCurrency === 'HKD',
    );
    await call(sb, 'PATCH', `${P}/currency-pairs/${pair.currencyPairId}/toggle`, { body: { enabled: false } });
    try {
      const r = await swap({
        sourceWalletId: wallets.USD,
        destinationWalletId: wallets.HKD,
        swapAmount: 10,
        swapCurrency: 'USD',
        amountToBeSent: 78.12,
        currencyToBeSent: 'HKD',
      });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('CORRIDOR_NOT_ENABLED');
    } finally {
      await call(sb, 'PATCH', `${P}/currency-pairs/${pair.currencyPairId}/toggle`, { body: { enabled: true } });
    }
  });

  it('replays on the same key and body, 409 on the same key with another body', async () => {
    const key = uniqueKey('swap');
    const usd = await walletBalance(sb, 'USD');
    const first = await swap(usdToEur({ swapAmount: 100, amountToBeSent: 92.15 }), key);
    const again = await swap(
      {
        currencyToBeSent: 'EUR',
        amountToBeSent: 92.15,
        swapCurrency: 'USD',
        swapAmount: 100,
        destinationWalletId: wallets.EUR,
        sourceWalletId: wallets.USD,
      },
      key,
    );
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect(await walletBalance(sb, 'USD')).toBe(usd - 100);
    const other = await swap(usdToEur({ swapAmount: 200, amountToBeSent: 184.3 }), key);
    expect(other.status).toBe(409);
    expect(other.body.error).toBe('IDEMPOTENCY_KEY_CONFLICT');
  });

  it('refuses, changing nothing, a swap or top-up that would leave a balance no JSON number carries exactly', async () => {
    const key = 'sk_test_full';
    const wallets = [
      { currency: 'USD', balance: '5000' },
      { currency: 'EUR', balance: '9999999999999.00' },
    ];
    const pairs = [{ baseCurrency: 'USD', quoteCurrency: 'EUR', rate: '0.9215' }];
    const own = await start({ seed: { businesses: [{ name: 'Full', keys: [key], wallets, pairs }] } });
    try {
      const ids = Object.fromEntries(
        (await call(own, 'GET', `${P}/wallets`, { key })).body.data.map((w: { currency: string; walletId: string }) => [
          w.currency,
          w.walletId,
        ]),
      );
      const body = usdToEur({ sourceWalletId: ids.USD, destinationWalletId: ids.EUR, swapAmount: 1000.01, amountToBeSent: 921.51 });
      // the same key again, as a client resends after a failure
      const idem = uniqueKey('swap');
      for (let i = 0; i < 2; i++) {
        const r = await call(own, 'POST', `${P}/swap`, { key, body, idem });
        expect(r.status).toBe(400);
        expect(r.body.errors).toEqual([{ field: 'amountToBeSent', message: expect.stringMatching(/below 10000000000000$/) }]);
      }
      const topUp = await call(own, 'POST', `/_sandbox/wallets/${ids.EUR}/credit`, { key: null, body: { amount: '1.01' } });
      expect(topUp.status).toBe(400);
      expect(topUp.body.errors).toEqual([{ field: 'amount', message: expect.stringMatching(/below 10000000000000$/) }]);
      expect([await walletBalance(own, 'USD', key), await walletBalance(own, 'EUR', key)]).toEqual([5000, 9999999999999]);
      expect((await call(own, 'GET', `${P}/swaps`, { key })).body.meta.total).toBe(0);
      expect((await call(own, 'GET', '/api/public/transactions', { key })).body.meta.total).toBe(0);
    } finally {
      await own.close();
    }
  });

  it('refuses, changing nothing, a reversal that would leave the source balance no JSON number carries exactly', async () => {
    const key = 'sk_test_reverse_full';
    const wallets = [
      { currency: 'USD', balance: '9999999999000.00' },
      { currency: 'EUR', balance: '0' },
    ];
    const pairs = [{ baseCurrency: 'USD', quoteCurrency: 'EUR', rate: '0.9215' }];
    const own = await start({ seed: { businesses: [{ name: 'Full', keys: [key], wallets, pairs }] } });
    try {
      const data = (await call(own, 'GET', `${P}/wallets`, { key })).body.data as { currency: string; walletId: string }[];
      const ids = Object.fromEntries(data.map((w) => [w.currency, w.walletId]));
      const body = usdToEur({ sourceWalletId: ids.USD, destinationWalletId: ids.EUR, swapAmount: 1000.37, amountToBeSent: 921.84 });
      const s = (await call(own, 'POST', `${P}/swap`, { key, body, idem: uniqueKey('swap') })).body;
      // topped up meanwhile: putting 1000.37 back would bring USD to 10000000000004.37
      expect((await call(own, 'POST', `/_sandbox/wallets/${ids.USD}/credit`, { key: null, body: { amount: '1004.37' } })).status).toBe(200);
      const refused = await setStatus(own, 'swaps', s.id, { status: 'REJECTED' });
      expect(refused.status).toBe(409);
      expect(refused.body.message).toMatch(/below 10000000000000/);
      expect((await call(own, 'GET', `${P}/swaps/${s.id}`, { key })).body.status).toBe('PROCESSING');
      expect([await walletBalance(own, 'USD', key), await walletBalance(own, 'EUR', key)]).toEqual([9999999999004, 921.84]);
      expect((await call(own, 'GET', '/api/public/transactions', { key })).body.meta.total).toBe(3);
    } finally {
      await own.close();
    }
  });
});

describe('swap listing and lifecycle (spec §3, §4.8)', () => {
  it('lists swaps apart from payouts and gets one with updatedAt and empty supportingDocuments', async () => {
    const s = (await swap(usdToEur({ swapAmount: 10, amountToBeSent: 9.22 }))).body;
    const payout = (await initiate(sb, nipBody())).body;
    const list = SwapList.parse((await call(sb, 'GET', `${P}/swaps?limit=100`)).body);
    expect(list.data.every((x) => x.method === 'SWAP')).toBe(true);
    expect(list.data[0]!.id).toBe(s.id);
    expect((await call(sb, 'GET', `${P}?limit=100`)).body.data.some((p: { id: string }) => p.id === s.id)).toBe(false);
    const got = Swap.parse((await call(sb, 'GET', `${P}/swaps/${s.id}`)).body);
    expect(got.supportingDocuments).toEqual([]);
    expect((await call(sb, 'GET', `${P}/${s.id}`)).body.error).toBe('PAYOUT_NOT_FOUND');
    expect((await call(sb, 'GET', `${P}/swaps/${payout.id}`)).body.error).toBe('SWAP_NOT_FOUND');
    const foreign = await call(sb, 'GET', `${P}/swaps/${s.id}`, { key: GLOBEX });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toBe('SWAP_NOT_FOUND');
  });

  it('confirms (SUCCESSFUL) or reverses (REJECTED, wallets put back) through the control route', async () => {
    const [usd, eur] = [await walletBalance(sb, 'USD'), await walletBalance(sb, 'EUR')];
    const a = (await swap(usdToEur({ swapAmount: 50, amountToBeSent: 46.08 }))).body;
    expect((await setStatus(sb, 'swaps', a.id, { status: 'SUCCESSFUL' })).body.status).toBe('SUCCESSFUL');
    const b = (await swap(usdToEur({ swapAmount: 50, amountToBeSent: 46.08 }))).body;
    expect((await setStatus(sb, 'swaps', b.id, { status: 'REJECTED' })).body.status).toBe('REJECTED');
    expect(await walletBalance(sb, 'USD')).toBe(usd - 50);
    expect(await walletBalance(sb, 'EUR')).toBe(Number((eur + 46.08).toFixed(2)));
    expect((await setStatus(sb, 'swaps', b.id, { status: 'SUCCESSFUL' })).status).toBe(409);
  });
});

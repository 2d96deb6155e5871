import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TransactionList } from './strict.ts';
import { call, eventually, initiate, nipBody, P, sepaBody, setStatus, start, walletBalance } from './helpers.ts';

let sb: LocalSandbox;
beforeAll(async () => {
  sb = await start();
});
afterAll(() => sb.close());

const transactions = (ref?: string) =>
  call(sb, 'GET', `/api/public/transactions${ref ? `?filter[payoutRef]=${encodeURIComponent(ref)}` : ''}`);

describe('payout lifecycle (spec §3)', () => {
  it('walks PENDING -> PROCESSING -> SUCCESSFUL through the control route', async () => {
    const p = (await initiate(sb, nipBody())).body;
    const processing = await setStatus(sb, 'payouts', p.id, { status: 'PROCESSING', reason: 'Approved and processing' });
    expect(processing.status).toBe(200);
    expect(processing.body.status).toBe('PROCESSING');
    await setStatus(sb, 'payouts', p.id, { status: 'SUCCESSFUL' });
    const got = await call(sb, 'GET', `${P}/${p.id}`);
    expect(got.body.status).toBe('SUCCESSFUL');
    expect(got.body.updatedAt >= got.body.createdAt).toBe(true);
    expect(sb.requestLog().filter((e) => e.route === 'control').length).toBeGreaterThanOrEqual(2);
  });

  it('refuses moves the state table does not have (409 INVALID_TRANSITION)', async () => {
    const p = (await initiate(sb, nipBody())).body;
    const skip = await setStatus(sb, 'payouts', p.id, { status: 'SUCCESSFUL' });
    expect(skip.status).toBe(409);
    expect(skip.body.error).toBe('INVALID_TRANSITION');
    await setStatus(sb, 'payouts', p.id, { status: 'REJECTED' });
    expect((await setStatus(sb, 'payouts', p.id, { status: 'PENDING' })).status).toBe(409);
    expect((await setStatus(sb, 'payouts', '4b0b7c6e-0000-4000-8000-000000000000', { status: 'PENDING' })).status).toBe(404);
    expect((await setStatus(sb, 'payouts', p.id, { status: 'DONE' })).status).toBe(400);
  });

  it('asks for information and takes the answer: ADDITIONAL_INFO_REQUIRED -> PENDING under review', async () => {
    const p = (await initiate(sb, nipBody())).body;
    const requests = [{ title: 'Purpose of payment', type: 'SELECT', options: ['Goods', 'Services'], section: 'Compliance' }];
    const asked = await setStatus(sb, 'payouts', p.id, { status: 'ADDITIONAL_INFO_REQUIRED', informationRequests: requests });
    expect(asked.body.informationRequests).toEqual(requests);
    const answered = await setStatus(sb, 'payouts', p.id, { status: 'PENDING' });
    expect(answered.body).toMatchObject({ status: 'PENDING', statusDetail: 'ADDITIONAL_INFO_UNDER_REVIEW' });
    const approved = await setStatus(sb, 'payouts', p.id, { status: 'PROCESSING' });
    expect(approved.body.statusDetail).toBeUndefined();
  });

  for (const final of ['FAILED', 'REJECTED'] as const) {
    it(`refunds amount plus fee on ${final}, exact to the cent, with a CREDIT transaction`, async () => {
      const before = await walletBalance(sb, 'EUR');
      const p = (await initiate(sb, sepaBody({ sourceAmount: 1234.57 }))).body;
      expect(await walletBalance(sb, 'EUR')).toBe(Number((before - 1239.57).toFixed(2)));
      if (final === 'FAILED') await setStatus(sb, 'payouts', p.id, { status: 'PROCESSING' });
      await setStatus(sb, 'payouts', p.id, { status: final, reason: 'Bank failure' });
      expect(await walletBalance(sb, 'EUR')).toBe(before);

      const tx = TransactionList.parse((await transactions(p.payoutRef)).body);
      expect(tx.meta.total).toBe(2);
      const [refund, debit] = tx.data; // newest first
      expect(debit).toMatchObject({ type: 'DEBIT', amount: -1239.57, currency: 'EUR', reference: p.payoutRef, balanceBefore: before });
      expect(debit!.balanceAfter).toBe(Number((before - 1239.57).toFixed(2)));
      expect(refund).toMatchObject({
        type: 'CREDIT',
        amount: 1239.57,
        reference: p.payoutRef,
        balanceBefore: debit!.balanceAfter,
        balanceAfter: before,
      });
      expect(refund!.wallet.currency).toBe('EUR');
    });
  }

  it('refuses, changing nothing, a refund that would leave a balance no JSON number carries exactly', async () => {
    const key = 'sk_test_refund_full';
    const own = await start({
      seed: { businesses: [{ name: 'Full', keys: [key], wallets: [{ currency: 'EUR', balance: '9999999999000.00' }] }] },
    });
    try {
      const p = (await initiate(own, sepaBody({ sourceAmount: 1000.37 }), key)).body;
      // topped up meanwhile: the refund of 1005.37 would bring the balance to 10000000000004.37
      const eur = (await call(own, 'GET', `${P}/wallets`, { key })).body.data[0].walletId;
      expect((await call(own, 'POST', `/_sandbox/wallets/${eur}/credit`, { key: null, body: { amount: '1004.37' } })).status).toBe(200);
      const refused = await setStatus(own, 'payouts', p.id, { status: 'REJECTED', reason: 'compliance' });
      expect(refused.status).toBe(409);
      expect(refused.body.message).toMatch(/below 10000000000000/);
      expect((await call(own, 'GET', `${P}/${p.id}`, { key })).body.status).toBe('PENDING');
      expect(await walletBalance(own, 'EUR', key)).toBe(9999999998999);
      expect((await call(own, 'GET', '/api/public/transactions', { key })).body.meta.total).toBe(2);
    } finally {
      await own.close();
    }
  });

  it('does not refund a SUCCESSFUL payout', async () => {
    const before = await walletBalance(sb, 'USD');
    const p = (await initiate(sb, nipBody({ sourceAmount: 10 }))).body;
    await setStatus(sb, 'payouts', p.id, { status: 'PROCESSING' });
    await setStatus(sb, 'payouts', p.id, { status: 'SUCCESSFUL' });
    expect(await walletBalance(sb, 'USD')).toBe(Number((before - 10.07).toFixed(2))); // 10 + 100 NGN fee in USD
    expect((await transactions(p.payoutRef)).body.meta.total).toBe(1);
  });

  it('lists transactions with the public envelope and pages them', async () => {
    const r = await transactions();
    expect(r.body).toMatchObject({ statusCode: 200, message: expect.any(String) });
    const all = TransactionList.parse(r.body);
    expect(all.meta.total).toBeGreaterThan(3);
    const page = await call(sb, 'GET', '/api/public/transactions?page=2&limit=2');
    expect(page.body.meta).toMatchObject({ page: 2, limit: 2, size: 2 });
    expect(page.body.data[0].id).toBe(all.data[2]!.id);
    expect((await transactions('PO-none')).body.meta.total).toBe(0);
  });

  it('tops a wallet up through the control route, as funding outside the API', async () => {
    const w = (await call(sb, 'GET', `${P}/wallets`)).body.data.find((x: { currency: string }) => x.currency === 'GBP');
    const r = await call(sb, 'POST', `/_sandbox/wallets/${w.walletId}/credit`, {
      key: null,
      body: { amount: '0.10', narration: 'Top-up' },
    });
    expect(r.status).toBe(200);
    expect(await walletBalance(sb, 'GBP')).toBe(Number((w.balance + 0.1).toFixed(2)));
  });
});

describe('autoAdvance', () => {
  it('moves a new payout PENDING -> PROCESSING -> SUCCESSFUL on its own', async () => {
    const auto = await start({ autoAdvance: { toProcessingMs: 30, toSuccessfulMs: 30 } });
    try {
      const p = (await initiate(auto, nipBody())).body;
      expect(p.status).toBe('PENDING');
      await eventually(async () => ((await call(auto, 'GET', `${P}/${p.id}`)).body.status === 'SUCCESSFUL' ? true : undefined), 3000);
    } finally {
      await auto.close();
    }
  });
});

describe('autoAdvance after a restore', () => {
  it('walks on the payouts and swaps not yet due when the sandbox went down', async () => {
    // one frozen clock for both: the restored records are not due, so only a timer can move them
    const at = Date.now();
    const before = await start({ now: () => at });
    let after: LocalSandbox | undefined;
    try {
      const ids = (await call(before, 'GET', `${P}/wallets`)).body.data as { currency: string; walletId: string }[];
      const wallet = (c: string) => ids.find((w) => w.currency === c)!.walletId;
      const p = (await initiate(before, nipBody())).body;
      const body = { sourceWalletId: wallet('USD'), destinationWalletId: wallet('EUR'), swapAmount: 1000, swapCurrency: 'USD' };
      const s = await call(before, 'POST', `${P}/swap`, {
        body: { ...body, amountToBeSent: 921.5, currencyToBeSent: 'EUR' },
        idem: 'restored-swap',
      });
      expect(s.status).toBe(201);
      after = await start({ now: () => at, autoAdvance: { toProcessingMs: 20, toSuccessfulMs: 20 }, state: before.snapshot() });
      const statusOf = async (path: string) => ((await call(after!, 'GET', path)).body.status === 'SUCCESSFUL' ? true : undefined);
      await eventually(() => statusOf(`${P}/${p.id}`), 3000);
      await eventually(() => statusOf(`${P}/swaps/${s.body.id}`), 3000);
    } finally {
      await before.close();
      await after?.close();
    }
  });
});

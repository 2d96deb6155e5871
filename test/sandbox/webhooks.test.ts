import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { PayoutStatusChangedEvent, WalletEvent, WebhookSubscription } from './strict.ts';
import { call, eventually, initiate, nipBody, P, receiver, setStatus, start, uniqueKey, W } from './helpers.ts';

let sb: LocalSandbox;
let subscriptionId: string | undefined;
beforeAll(async () => {
  sb = await start({ webhookRetryDelaysMs: [30, 30] });
});
afterAll(() => sb.close());
afterEach(async () => {
  if (subscriptionId) await call(sb, 'DELETE', `${W}/${subscriptionId}`);
  subscriptionId = undefined;
});

const register = async (body: Record<string, unknown>) => {
  const r = await call(sb, 'POST', W, { body });
  if (r.status === 201) subscriptionId = r.body.id;
  return r;
};
const sign = (secret: string, raw: string) => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;

describe('webhook subscription routes (spec §4.13)', () => {
  it('registers (201), lists, gets, updates and deletes one subscription per business', async () => {
    const r = await register({ url: 'https://hooks.example.com/payouts', secret: 's3cret' });
    expect(r.status).toBe(201);
    const sub = WebhookSubscription.parse(r.body);
    expect(sub).toMatchObject({ url: 'https://hooks.example.com/payouts', hasSecret: true, eventTypes: [] });
    expect(JSON.stringify(r.body)).not.toContain('s3cret');
    const second = await call(sb, 'POST', W, { body: { url: 'https://other.example.com/' } });
    expect(second.status).toBe(409);
    expect(second.body.error).toBe('WEBHOOK_ALREADY_REGISTERED');
    expect((await call(sb, 'GET', W)).body.data.map((s: { id: string }) => s.id)).toEqual([sub.id]);
    expect((await call(sb, 'GET', `${W}/${sub.id}`)).body.url).toBe(sub.url);
    const patched = await call(sb, 'PATCH', `${W}/${sub.id}`, { body: { url: 'https://new.example.com/h', secret: null } });
    expect(patched.body).toMatchObject({ url: 'https://new.example.com/h', hasSecret: false });
    // Another business neither sees nor touches it.
    expect((await call(sb, 'GET', W, { key: 'sk_sandbox_globex' })).body.data).toEqual([]);
    expect((await call(sb, 'GET', `${W}/${sub.id}`, { key: 'sk_sandbox_globex' })).body.error).toBe('WEBHOOK_NOT_FOUND');
    expect((await call(sb, 'DELETE', `${W}/${sub.id}`)).status).toBe(200);
    subscriptionId = undefined;
    expect((await call(sb, 'GET', `${W}/${sub.id}`)).status).toBe(404);
  });

  it('accepts only HTTPS, or http on loopback', async () => {
    const plain = await call(sb, 'POST', W, { body: { url: 'http://hooks.example.com/x' } });
    expect(plain.status).toBe(400);
    expect(plain.body.errors[0].field).toBe('url');
    expect((await call(sb, 'POST', W, { body: { url: 'https://x.example.com', eventTypes: ['payout.created'] } })).body.error).toBe(
      'VALIDATION_ERROR',
    );
    // a text that is no URL at all: a 400 naming the field, not the sandbox's own 500
    const notUrl = await call(sb, 'POST', W, { body: { url: 'nope' } });
    expect(notUrl.status).toBe(400);
    expect(notUrl.body.errors[0].field).toBe('url');
    expect((await register({ url: 'http://127.0.0.1:9/hooks' })).status).toBe(201);
  });
});

describe('deliveries (spec §6)', () => {
  it('signs every delivery with HMAC-SHA256 of the raw body and sends status and wallet events', async () => {
    const rx = await receiver();
    try {
      await register({ url: rx.url, secret: 'whsec_test' });
      const p = (await initiate(sb, nipBody())).body;
      await setStatus(sb, 'payouts', p.id, { status: 'ADDITIONAL_INFO_REQUIRED', reason: 'KYC' });
      await setStatus(sb, 'payouts', p.id, { status: 'PENDING' });
      await setStatus(sb, 'payouts', p.id, { status: 'REJECTED', reason: 'Compliance' });
      await eventually(() => (rx.received.length >= 5 ? true : undefined));

      for (const d of rx.received) {
        expect(d.headers['x-service-signature']).toBe(sign('whsec_test', d.raw));
        expect(d.headers['x-service-delivery-id']).toBe(d.body.deliveryId);
      }
      const types = rx.received.map((d) => d.body.eventType);
      expect(types.filter((t) => t === 'payout.status.changed')).toHaveLength(3);
      const debit = WalletEvent.parse(rx.received.find((d) => d.body.eventType === 'wallet.debited')!.body);
      expect(debit.data).toMatchObject({ amount: 1000.07, currency: 'USD', transactionType: 'dr', reference: p.payoutRef });
      const credit = WalletEvent.parse(rx.received.find((d) => d.body.eventType === 'wallet.credited')!.body);
      expect(credit.data).toMatchObject({ amount: 1000.07, transactionType: 'cr', reference: p.payoutRef });
      const changes = rx.received
        .filter((d) => d.body.eventType === 'payout.status.changed')
        .map((d) => PayoutStatusChangedEvent.parse(d.body).data);
      // Each event is its own delivery, so they may arrive in any order (receivers order them by the
      // status table, not by arrival): compare the set of transitions, then each one by its new status.
      expect(changes.map((c) => `${c.oldStatus}->${c.newStatus}`).sort()).toEqual([
        'ADDITIONAL_INFO_REQUIRED->PENDING',
        'PENDING->ADDITIONAL_INFO_REQUIRED',
        'PENDING->REJECTED',
      ]);
      const to = (s: string) => changes.find((c) => c.newStatus === s)!;
      expect(to('ADDITIONAL_INFO_REQUIRED').informationRequests?.[0]?.type).toBe('FILE');
      expect(to('PENDING').newStatusDetail).toBe('ADDITIONAL_INFO_UNDER_REVIEW');
      expect(to('REJECTED')).toMatchObject({ oldStatusDetail: 'ADDITIONAL_INFO_UNDER_REVIEW', reason: 'Compliance', payoutId: p.id });
      expect(new Set(rx.received.map((d) => d.body.deliveryId)).size).toBe(rx.received.length);
    } finally {
      await rx.close();
    }
  });

  it('sends a swap creation as PENDING -> PROCESSING plus wallet.debited and wallet.credited; no signature without a secret', async () => {
    const rx = await receiver();
    try {
      await register({ url: rx.url });
      const w = Object.fromEntries(
        (await call(sb, 'GET', `${P}/wallets`)).body.data.map((x: { currency: string; walletId: string }) => [x.currency, x.walletId]),
      );
      const s = await call(sb, 'POST', `${P}/swap`, {
        idem: uniqueKey(),
        body: {
          sourceWalletId: w.USD,
          destinationWalletId: w.EUR,
          swapAmount: 10,
          swapCurrency: 'USD',
          amountToBeSent: 9.22,
          currencyToBeSent: 'EUR',
        },
      });
      expect(s.status).toBe(201);
      await eventually(() => (rx.received.length >= 3 ? true : undefined));
      expect(rx.received.map((d) => d.body.eventType).sort()).toEqual(['payout.status.changed', 'wallet.credited', 'wallet.debited']);
      const status = rx.received.find((d) => d.body.eventType === 'payout.status.changed')!.body.data;
      expect(status).toMatchObject({ payoutId: s.body.id, oldStatus: 'PENDING', newStatus: 'PROCESSING' });
      expect(rx.received.every((d) => d.headers['x-service-signature'] === undefined)).toBe(true);
    } finally {
      await rx.close();
    }
  });

  it('delivers every event to a subscription naming either eventTypes (legacy name included), wallet events too', async () => {
    const rx = await receiver();
    try {
      await register({ url: rx.url, eventTypes: ['payout.status.changed.v1'] });
      const p = (await initiate(sb, nipBody())).body;
      await setStatus(sb, 'payouts', p.id, { status: 'PROCESSING' });
      await eventually(() => (rx.received.length >= 2 ? true : undefined));
      expect(rx.received.map((d) => d.body.eventType).sort()).toEqual(['payout.status.changed', 'wallet.debited']);
    } finally {
      await rx.close();
    }
  });

  it('retries a failed delivery with the same delivery id, and stops once delivered', async () => {
    const rx = await receiver((n) => (n === 1 ? 500 : 200));
    try {
      await register({ url: rx.url, eventTypes: ['payout.status.changed'] });
      const p = (await initiate(sb, nipBody())).body;
      // The receiver has the body before the sandbox has its answer: wait until the sandbox has
      // nothing scheduled or under way, so its delivery log holds the 200 as well.
      await eventually(() => (rx.received.length >= 1 && sb.pendingDeliveries() === 0 ? true : undefined));
      const attempts = sb.deliveries().filter((d) => d.eventType === 'wallet.debited' && d.url === rx.url);
      expect(attempts.map((a) => a.status)).toEqual([500, 200]);
      expect(attempts[0]!.deliveryId).toBe(attempts[1]!.deliveryId);
      expect(rx.received[0]!.body.data.reference).toBe(p.payoutRef);
    } finally {
      await rx.close();
    }
  });

  it('delivers nothing after the subscription is deleted, and never to another address', async () => {
    const rx = await receiver(() => 503); // every attempt fails: retries are scheduled (30 ms apart)
    try {
      await register({ url: rx.url });
      await initiate(sb, nipBody());
      await eventually(() => (sb.deliveries().some((d) => d.url === rx.url) ? true : undefined));
      await call(sb, 'DELETE', `${W}/${subscriptionId}`);
      subscriptionId = undefined;
      // Stamped by the same clock as the attempts (the sandbox's runs in this process): an attempt
      // started after the deletion has a later stamp.
      const deletedBy = Date.now();
      await initiate(sb, nipBody());
      // Wait until the sandbox has nothing scheduled or under way: no retry, no new event can
      // deliver anything any more.
      await eventually(() => (sb.pendingDeliveries() === 0 ? true : undefined));
      const toRx = sb.deliveries().filter((d) => d.url === rx.url);
      expect(toRx.length).toBeGreaterThan(0);
      expect(toRx.filter((d) => d.at > deletedBy)).toEqual([]);
      expect(sb.deliveries().every((d) => d.url.startsWith('http://127.0.0.1:'))).toBe(true);
    } finally {
      await rx.close();
    }
  });

  it('never delays the API answer for a slow receiver', async () => {
    // A sandbox of its own that gives a delivery ten minutes: the attempt cannot end on its own
    // while the test runs, so its end cannot come before the API's answer unless the answer waits.
    const own = await start({ webhookTimeoutMs: 600_000 });
    let got = 0;
    const slow = await new Promise<{ url: string; close: () => void }>((resolve) => {
      void import('node:http').then(({ createServer }) => {
        const server = createServer(() => {
          got++; /* never answers */
        });
        server.listen(0, '127.0.0.1', () => {
          const { port } = server.address() as { port: number };
          resolve({
            url: `http://127.0.0.1:${port}/`,
            close: () => {
              server.closeAllConnections();
              server.close();
            },
          });
        });
      });
    });
    try {
      await call(own, 'POST', W, { body: { url: slow.url } });
      expect((await initiate(own, nipBody())).status).toBe(201);
      // The delivery is sent and still unanswered: the API's answer did not wait for it.
      await eventually(() => (got > 0 ? true : undefined));
      expect(own.deliveries()).toEqual([]);
      expect(own.pendingDeliveries()).toBeGreaterThan(0);
    } finally {
      await own.close();
      slow.close();
    }
  });

  it('uses the header names given in options.serviceHeaders', async () => {
    const custom = await start({ serviceHeaders: { signature: 'X-Acme-Signature', deliveryId: 'X-Acme-Delivery' } });
    const rx = await receiver();
    try {
      await call(custom, 'POST', W, { body: { url: rx.url, secret: 'k' } });
      await initiate(custom, nipBody());
      await eventually(() => (rx.received.length >= 1 ? true : undefined));
      expect(rx.received[0]!.headers['x-acme-signature']).toBe(sign('k', rx.received[0]!.raw));
      expect(rx.received[0]!.headers['x-acme-delivery']).toBe(rx.received[0]!.body.deliveryId);
    } finally {
      await rx.close();
      await custom.close();
    }
  });
});

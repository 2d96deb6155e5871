// Every route of the spec through the client, over real HTTP, against the local sandbox.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { PayoutClient } from '../../src/client/client.ts';
import { connect, sandboxSeedKey } from '../../src/client/connect.ts';
import { verifyWebhook } from '../../src/client/verify-webhook.ts';
import { Dec, roundTo, toApi } from '../../src/money.ts';
import type { InitiateRequest } from '../../src/spec/schemas.ts';
import { until } from '../ops/helpers.ts';
import { allPayoutIds, failure } from './fake-fetch.ts';

let sb: LocalSandbox;
let client: PayoutClient;
const PRIMARY = 'sk_sandbox_acme_primary';

beforeAll(async () => {
  sb = await startSandbox({ rateLimitPerSecond: null, propagatingKeys: ['sk_sandbox_acme_secondary'] });
  client = new PayoutClient({ baseUrl: sb.url, apiKey: PRIMARY, requestsPerSecond: 1000 });
});
afterAll(async () => {
  await sb?.close();
});

const sepa = (amount: string, extra: Partial<InitiateRequest> = {}): InitiateRequest => ({
  sourceAmount: toApi(new Dec(amount)),
  sourceCurrency: 'USD',
  destinationCurrency: 'EUR',
  destinationCountryCode: 'DEU',
  method: 'SEPA',
  beneficiary: { accountName: 'Erika Mustermann', accountCurrency: 'EUR', iban: 'DE89370400440532013000' },
  narration: 'Invoice 42',
  ...extra,
});

describe('round trips against the sandbox', () => {
  it('wallets, pairs (enabled and all), toggle, methods and quote', async () => {
    const wallets = await client.listWallets();
    expect(wallets.data.map((w) => w.currency)).toContain('USD');

    const all = await client.listPairs({ all: true });
    const usdZar = all.data.find((p) => p.baseCurrency === 'USD' && p.quoteCurrency === 'ZAR')!;
    expect(usdZar.enabled).toBe(true);
    const off = await client.togglePair(usdZar.currencyPairId!, { enabled: false });
    expect(off.enabled).toBe(false);
    expect((await client.listPairs()).data.map((p) => p.currencyPairId)).not.toContain(usdZar.currencyPairId);
    expect((await client.listPairs({ all: true })).data.map((p) => p.currencyPairId)).toContain(usdZar.currencyPairId);
    expect((await client.togglePair(usdZar.currencyPairId!, { enabled: true })).enabled).toBe(true);

    const methods = await client.listMethods({ sourceCurrency: 'USD', destinationCurrency: 'EUR', destinationCountryCode: 'DEU' });
    expect(methods.methods.map((m) => m.code)).toContain('SEPA');
    expect(Number(methods.rate)).toBeGreaterThan(0);

    const q = await client.quote({
      sourceAmount: 100,
      sourceCurrency: 'USD',
      destinationCurrency: 'EUR',
      destinationCountryCode: 'DEU',
      method: 'SEPA',
    });
    expect(q.fee!.currency).toBe('USD');
    expect(new Dec(q.totalDeductible!).equals(new Dec(q.sourceAmount!).plus(q.fee!.amount))).toBe(true);
  });

  it('upload, initiate (idempotent, byte-identical replay), get, list, PATCH documents, transactions', async () => {
    const pdf = new TextEncoder().encode('%PDF-1.4\n% invoice\n%%EOF\n');
    const doc1 = await client.uploadDocument({ bytes: pdf, filename: 'invoice-1.pdf', contentType: 'application/pdf' });
    const doc2 = await client.uploadDocument({ bytes: pdf, filename: 'invoice-2.pdf', contentType: 'application/pdf' });
    const key = `rt-${randomUUID()}`;
    const body = sepa('250.50', { supportingDocument: doc1.documentUrl });
    const created = await client.initiate(body, { idempotencyKey: key, requestId: 'rt-initiate-1' });
    expect(created.payout.status).toBe('PENDING');
    expect(created.status).toBe(201);
    expect(created.requestId).toBe('rt-initiate-1');
    expect(created.body).toBe(JSON.stringify(body));

    // The engine resends the journalled text: the same payout comes back, no duplicate.
    const replay = await client.initiate(created.body, { idempotencyKey: key });
    expect(replay.payout.id).toBe(created.payout.id);
    const conflict = await failure(client.initiate(sepa('999'), { idempotencyKey: key }));
    expect(conflict).toMatchObject({ status: 409, code: 'IDEMPOTENCY_KEY_CONFLICT', outcome: 'definitive', route: 'initiate' });

    const got = await client.getPayout(created.payout.id);
    expect(got.supportingDocuments!.map((d) => d.url)).toEqual([doc1.documentUrl]);
    const patched = await client.patchDocuments(created.payout.id, [doc2.documentUrl, doc1.documentUrl]);
    expect(patched.totalDocuments).toBe(2);
    expect(patched.documents!.map((d) => d.url).sort()).toEqual([doc1.documentUrl, doc2.documentUrl].sort());

    const ids = await allPayoutIds(client);
    expect(ids.filter((i) => i === created.payout.id)).toHaveLength(1);

    const tx = await client.listTransactions({ payoutRef: created.payout.payoutRef });
    expect(tx.data.some((t) => t.type === 'DEBIT' && t.reference === created.payout.payoutRef)).toBe(true);
  });

  it('swap, list swaps, get swap; a payout id is not a swap', async () => {
    const wallets = (await client.listWallets()).data;
    const usd = wallets.find((w) => w.currency === 'USD')!;
    const eur = wallets.find((w) => w.currency === 'EUR')!;
    const rate = (await client.listPairs()).data.find((p) => p.baseCurrency === 'USD' && p.quoteCurrency === 'EUR')!.rate!;
    const swapAmount = new Dec('100');
    const r = await client.swap(
      {
        sourceWalletId: usd.walletId,
        destinationWalletId: eur.walletId,
        swapAmount: toApi(swapAmount),
        swapCurrency: 'USD',
        amountToBeSent: toApi(roundTo(swapAmount.times(rate), 'EUR')),
        currencyToBeSent: 'EUR',
      },
      { idempotencyKey: `swap-${randomUUID()}` },
    );
    expect(r.swap).toMatchObject({ status: 'PROCESSING', method: 'SWAP', transactionFees: 0 });
    expect((await client.getSwap(r.swap.id)).supportingDocuments).toEqual([]);
    expect((await client.listSwaps({ limit: 100 })).data.map((s) => s.id)).toContain(r.swap.id);

    const payouts = await client.listPayouts({ limit: 1 });
    const notSwap = await failure(client.getSwap(payouts.data[0]!.id));
    expect(notSwap).toMatchObject({ status: 404, code: 'SWAP_NOT_FOUND' });
    const badAmount = await failure(
      client.swap(
        {
          sourceWalletId: usd.walletId,
          destinationWalletId: eur.walletId,
          swapAmount: 100,
          swapCurrency: 'USD',
          amountToBeSent: 1,
          currencyToBeSent: 'EUR',
        },
        { idempotencyKey: `swap-${randomUUID()}` },
      ),
    );
    expect(badAmount.code).toBeUndefined();
    expect(badAmount.message).toContain('Invalid payout amount');
  });

  it('webhooks: register, list, get, update, delete; deliveries verify with the helper', async () => {
    const received: ReturnType<typeof verifyWebhook>[] = [];
    const secret = 'whsec_roundtrip_1';
    const server: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push(verifyWebhook({ rawBody: Buffer.concat(chunks), headers: req.headers, secret }));
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    try {
      const existing = await client.listWebhooks();
      for (const w of existing.data) await client.deleteWebhook(w.id);
      const sub = await client.registerWebhook({ url: 'https://hooks.example.test/a', secret });
      expect(sub.hasSecret).toBe(true);
      expect((await client.listWebhooks()).data.map((w) => w.id)).toEqual([sub.id]);
      expect((await client.getWebhook(sub.id)).url).toBe('https://hooks.example.test/a');
      expect((await client.updateWebhook(sub.id, { url })).url).toBe(url);

      const wallets = (await client.listWallets()).data;
      const usd = wallets.find((w) => w.currency === 'USD')!;
      const eur = wallets.find((w) => w.currency === 'EUR')!;
      const rate = (await client.listPairs()).data.find((p) => p.baseCurrency === 'USD' && p.quoteCurrency === 'EUR')!.rate!;
      await client.swap(
        {
          sourceWalletId: usd.walletId,
          destinationWalletId: eur.walletId,
          swapAmount: 10,
          swapCurrency: 'USD',
          amountToBeSent: toApi(roundTo(new Dec(10).times(rate), 'EUR')),
          currencyToBeSent: 'EUR',
        },
        { idempotencyKey: `swap-${randomUUID()}` },
      );
      // Three events; then nothing more scheduled or under way, so three is all there will be.
      await until(() => received.length >= 3, 10_000, 'three webhook deliveries');
      await until(() => sb.pendingDeliveries() === 0, 10_000, 'no delivery pending');
      expect(received.map((d) => d.event.eventType).sort()).toEqual(['payout.status.changed', 'wallet.credited', 'wallet.debited']);
      expect(received.every((d) => d.signed && d.deliveryId.length > 0)).toBe(true);
      expect(new Set(received.map((d) => d.deliveryId)).size).toBe(3);

      await client.deleteWebhook(sub.id);
      expect(await failure(client.getWebhook(sub.id))).toMatchObject({ status: 404, outcome: 'definitive' });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('countries, with the currency filter', async () => {
    const ngn = await client.listCountries({ currencyCode: 'NGN' });
    expect(ngn.data.map((c) => c.code)).toContain('NGA');
    expect(ngn.data.every((c) => c.currencyCode === 'NGN')).toBe(true);
  });

  it('spec errors arrive typed: 404, corridor not enabled, 401, 403 during propagation, with the request id', async () => {
    const nf = await failure(client.getPayout(randomUUID(), { requestId: 'rt-404' }));
    expect(nf).toMatchObject({ status: 404, code: 'PAYOUT_NOT_FOUND', requestId: 'rt-404', route: 'getPayout' });
    const usdInr = (await client.listPairs()).data.find((p) => p.baseCurrency === 'USD' && p.quoteCurrency === 'INR')!;
    const inr = { sourceAmount: 10, sourceCurrency: 'USD', destinationCurrency: 'INR', destinationCountryCode: 'IND', method: 'SWIFT' };
    await client.quote(inr);
    await client.togglePair(usdInr.currencyPairId!, { enabled: false });
    const corridor = await failure(client.quote(inr));
    await client.togglePair(usdInr.currencyPairId!, { enabled: true });
    expect(corridor).toMatchObject({ status: 400, code: 'CORRIDOR_NOT_ENABLED', outcome: 'definitive' });
    const missing = await failure(
      client.initiate(sepa('10', { beneficiary: { accountName: 'X', accountCurrency: 'EUR' } }), { idempotencyKey: randomUUID() }),
    );
    expect(missing.code).toBe('MISSING_REQUIRED_FIELDS');
    expect(missing.fieldErrors.map((f) => f.field)).toContain('beneficiary.iban');

    const stranger = new PayoutClient({ baseUrl: sb.url, apiKey: 'sk_sandbox_nobody_knows_me', requestsPerSecond: 1000 });
    const unauth = await failure(stranger.listWallets());
    expect(unauth).toMatchObject({ status: 401, code: undefined, outcome: 'definitive' });
    const fresh = new PayoutClient({ baseUrl: sb.url, apiKey: 'sk_sandbox_acme_secondary', requestsPerSecond: 1000 });
    const forbidden = await failure(fresh.listWallets());
    expect(forbidden.status).toBe(403);
    expect(forbidden.message).toMatch(/20 to 30 minutes/);
  });

  it('connect() uses the embedded sandbox its caller started, and its seed key when no key is configured', async () => {
    const local = await startSandbox({ rateLimitPerSecond: null });
    const conn = await connect({
      env: 'local',
      stateDir: false,
      vars: {},
      cwd: '/',
      sandbox: local,
      fallbackKey: sandboxSeedKey(local.keys[0]!.key),
      client: { requestsPerSecond: 1000 },
    });
    try {
      expect(conn.environment.name).toBe('local');
      expect(conn.environment.baseUrl).toBe(local.url);
      expect(conn.client.apiKey.source).toBe('local-sandbox-seed');
      expect((await conn.client.listWallets()).data.length).toBeGreaterThan(0);
    } finally {
      await conn.close();
    }
    // the connection owned it: closed with it
    await expect(fetch(`${local.url}/v1/wallets`)).rejects.toThrow();
  });
});

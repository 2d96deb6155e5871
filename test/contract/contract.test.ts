// Contract tests: answer bodies written by hand from the spec (fixtures/, one module per route, each
// naming its section), fed to the real PayoutClient through a scripted fetch, and deliveries fed to
// verifyWebhook. Whatever the shape of a body, the values the tool uses must come out the same:
// amounts compared exactly as fromApi(x).toFixed(), identifiers, fees, required fields, balances.
// The fixtures are not generated from our zod schemas and not copied from our sandbox, so a
// misreading of the spec in src/client/answers.ts shows up here rather than against a real service.
import { describe, expect, it } from 'vitest';
import { PayoutClient } from '../../src/client/client.ts';
import { verifyWebhook, WebhookVerificationError } from '../../src/client/verify-webhook.ts';
import { signPayload } from '../ops/helpers.ts';
import type { MethodFee, RequiredField, PayoutStatusChangedEvent, WalletEvent } from '../../src/client/answers.ts';
import { fromApi, type ApiAmount } from '../../src/money.ts';
import { failure, scriptedFetch } from '../client/fake-fetch.ts';
import { QUOTE_EXPECTED, quoteFixtures } from './fixtures/quote.ts';
import { INITIATE_EXPECTED, PAYOUT_ID, initiateFixtures } from './fixtures/initiate.ts';
import { PAYOUT_EXPECTED, payoutFixtures } from './fixtures/payout.ts';
import { PAYOUT_LIST_EXPECTED, payoutListFixtures } from './fixtures/payouts-list.ts';
import { UPLOAD_EXPECTED, documentsFixtures, uploadUrlFixtures } from './fixtures/documents.ts';
import { SWAP_EXPECTED, SWAP_ID, getSwapFixtures, swapFixtures, swapListFixtures } from './fixtures/swaps.ts';
import { PAIRS_EXPECTED, pairsFixtures, toggleFixtures } from './fixtures/pairs.ts';
import { methodsFixtures, type MethodsExpected } from './fixtures/methods.ts';
import { walletsFixtures } from './fixtures/wallets.ts';
import { WEBHOOK_ID, webhookListFixtures, webhookRecordFixtures } from './fixtures/webhooks.ts';
import { COUNTRIES_EXPECTED, countriesFixtures } from './fixtures/countries.ts';
import { TRANSACTIONS_EXPECTED, transactionsFixtures } from './fixtures/transactions.ts';
import { statusEventFixtures, walletEventFixtures } from './fixtures/events.ts';
import { rejectedEvents, rejectedFixtures, type Rejected } from './fixtures/rejected.ts';

let n = 0;

/** A client whose every request is answered with `answer` (a fresh key each: limiters are per key). */
function client(answer: () => Response) {
  const f = scriptedFetch([() => answer()]);
  const c = new PayoutClient({
    baseUrl: 'https://gateway.example.test',
    apiKey: `sk_contract_0d9c8b7a6f5e4d3c_${n++}`,
    requestsPerSecond: 1000,
    fetch: f.fetch,
    sleep: async () => {},
    random: () => 0.5,
  });
  return { c, seen: f.seen };
}

/** The HTTP answer of a fixture: its JSON, or its raw text (an empty body for a 204). */
function respond(f: { status?: number; body?: unknown; raw?: string }): Response {
  const status = f.status ?? 200;
  const text = f.raw ?? JSON.stringify(f.body);
  return new Response(status === 204 ? null : text, { status, headers: { 'content-type': 'application/json' } });
}

const answering = (f: { status?: number; body?: unknown; raw?: string }) => client(() => respond(f)).c;

/** An amount as the tool compares it: exact decimal text; undefined stays undefined. */
const exact = (a: ApiAmount | undefined): string | undefined => (a === undefined ? undefined : fromApi(a).toFixed());

const named = <T extends { shape: string }>(fixtures: T[]) => fixtures.map((f) => [f.shape, f] as const);

// ---------------------------------------------------------------- requests the fixtures answer

const QUOTE_BODY = { sourceAmount: 1000, sourceCurrency: 'USD', destinationCurrency: 'EUR', destinationCountryCode: 'DEU', method: 'SEPA' };
const INITIATE_BODY = {
  ...QUOTE_BODY,
  beneficiary: { accountName: 'Erika Mustermann', accountCurrency: 'EUR', iban: 'DE89370400440532013000' },
  narration: 'Invoice 42',
};
const SWAP_BODY = {
  sourceWalletId: '11111111-2222-4333-8444-555555555555',
  destinationWalletId: '66666666-7777-4888-9999-aaaaaaaaaaaa',
  swapAmount: 1000,
  swapCurrency: 'USD',
  amountToBeSent: 1550000,
  currencyToBeSent: 'NGN',
};
const USA = { sourceCurrency: 'USD', destinationCurrency: 'USD', destinationCountryCode: 'USA' };
const DOC = 'https://files.example.test/docs/contract.pdf';

// ---------------------------------------------------------------- payouts (§4.1-4.6)

describe('quote (§4.1)', () => {
  it.each(named(quoteFixtures))('%s', async (_, f) => {
    const q = await answering(f).quote(QUOTE_BODY);
    const want = { ...QUOTE_EXPECTED, ...f.expect };
    expect({
      sourceAmount: exact(q.sourceAmount),
      destinationAmount: exact(q.destinationAmount),
      totalDeductible: exact(q.totalDeductible),
      fee: exact(q.fee?.amount),
      exchangeRate: exact(q.exchangeRate),
    }).toEqual(want);
  });
});

describe('initiate (§4.2): a 2xx with an id and a status is a created payout', () => {
  it.each(named(initiateFixtures))('%s', async (_, f) => {
    const { c, seen } = client(() => respond(f));
    const r = await c.initiate(INITIATE_BODY, { idempotencyKey: `contract-initiate-${n}` });
    const want = { ...INITIATE_EXPECTED, ...f.expect };
    expect(r.payout.id).toBe(PAYOUT_ID);
    expect({
      status: r.payout.status,
      payoutRef: r.payout.payoutRef,
      sourceAmount: exact(r.payout.sourceAmount),
      destinationAmount: exact(r.payout.destinationAmount),
      exchangeRate: exact(r.payout.exchangeRate),
      transactionFees: exact(r.payout.transactionFees),
    }).toEqual({ transactionFees: undefined, ...want });
    expect(seen).toHaveLength(1);
  });
});

describe('get payout (§4.3)', () => {
  it.each(named(payoutFixtures))('%s', async (_, f) => {
    const p = await answering(f).getPayout(PAYOUT_ID);
    const want = { ...PAYOUT_EXPECTED, ...f.expect };
    expect(p.id).toBe(PAYOUT_ID);
    expect({
      status: p.status,
      statusDetail: p.statusDetail,
      sourceAmount: exact(p.sourceAmount),
      destinationAmount: exact(p.destinationAmount),
      transactionFees: exact(p.transactionFees),
      exchangeRate: exact(p.exchangeRate),
      documents: (p.supportingDocuments ?? []).length,
      requests: p.informationRequests?.map((r) => ({ title: r.title, type: r.type, ...(r.options ? { options: r.options } : {}) })),
    }).toEqual({ statusDetail: undefined, requests: undefined, ...want });
  });
});

describe('list payouts (§4.4)', () => {
  it.each(named(payoutListFixtures))('%s', async (_, f) => {
    const l = await answering(f).listPayouts({ page: 1 });
    const want = { ...PAYOUT_LIST_EXPECTED, ...f.expect };
    expect({
      ids: l.data.map((p) => p.id),
      statuses: l.data.map((p) => p.status),
      amounts: l.data.map((p) => exact(p.sourceAmount)),
      total: l.meta?.total,
    }).toEqual(want);
  });
});

describe('patch documents (§4.5)', () => {
  it.each(named(documentsFixtures))('%s', async (_, f) => {
    const r = await answering(f).patchDocuments(PAYOUT_ID, [DOC]);
    expect(r.totalDocuments).toBe(f.expect?.totalDocuments);
  });
});

describe('upload-url (§4.6)', () => {
  it.each(named(uploadUrlFixtures))('%s', async (_, f) => {
    const r = await answering(f).createUploadUrl({ filename: 'contract.pdf', contentType: 'application/pdf' });
    expect({ uploadUrl: r.uploadUrl, documentUrl: r.documentUrl, headers: r.headers }).toEqual({ ...UPLOAD_EXPECTED, ...f.expect });
  });
});

// ---------------------------------------------------------------- swaps (§4.7, §4.8)

describe('swap (§4.7)', () => {
  it.each(named(swapFixtures))('%s', async (_, f) => {
    const r = await answering(f).swap(SWAP_BODY, { idempotencyKey: `contract-swap-${n}` });
    expect(r.swap.id).toBe(SWAP_ID);
    expect({
      status: r.swap.status,
      sourceAmount: exact(r.swap.sourceAmount),
      destinationAmount: exact(r.swap.destinationAmount),
      transactionFees: exact(r.swap.transactionFees),
      method: r.swap.method,
    }).toEqual({ ...SWAP_EXPECTED, ...f.expect });
  });
});

describe('list swaps (§4.8)', () => {
  it.each(named(swapListFixtures))('%s', async (_, f) => {
    const l = await answering(f).listSwaps();
    expect({ count: l.data.length, total: l.meta?.total }).toEqual({ total: undefined, ...f.expect });
    for (const s of l.data) expect([s.id, s.method, exact(s.sourceAmount)]).toEqual([SWAP_ID, 'SWAP', '1000']);
  });
});

describe('get swap (§4.8)', () => {
  it.each(named(getSwapFixtures))('%s', async (_, f) => {
    const s = await answering(f).getSwap(SWAP_ID);
    expect(s.id).toBe(SWAP_ID);
    expect({
      status: s.status,
      sourceAmount: exact(s.sourceAmount),
      destinationAmount: exact(s.destinationAmount),
      transactionFees: exact(s.transactionFees),
      method: s.method,
    }).toEqual({ ...SWAP_EXPECTED, ...f.expect });
  });
});

// ---------------------------------------------------------------- pairs, methods, wallets (§4.9-4.12)

describe('pairs (§4.9): the identifier from currencyPairId or id', () => {
  it.each(named(pairsFixtures))('%s', async (_, f) => {
    const l = await answering(f).listPairs();
    expect(l.data.map((p) => ({ id: p.currencyPairId, base: p.baseCurrency, quote: p.quoteCurrency, rate: exact(p.rate) }))).toEqual(
      f.expect ?? PAIRS_EXPECTED,
    );
  });
});

describe('toggle (§4.10): any 2xx is taken; a state is read only where the answer shows one', () => {
  it.each(named(toggleFixtures))('%s', async (_, f) => {
    const r = await answering(f).togglePair(PAIRS_EXPECTED[0]!.id!, { enabled: true });
    expect(r).toEqual(f.expect);
  });
});

/** A method's fee as the tool uses it (see fixtures/methods.ts for the notation). */
function feeRead(fee: MethodFee): string {
  const ccy = fee.kind !== 'unknown' && fee.currency ? ` ${fee.currency}` : '';
  if (fee.kind === 'flat') return `flat ${exact(fee.amount)}${ccy}`;
  if (fee.kind === 'unknown') return 'unknown';
  const at = [500, 1999.99, 2000, 9999.99, 10000, 250000].map((a) => {
    const x = fromApi(a);
    const t = fee.tiers.find(
      (t) =>
        (t.from === undefined || x.gte(fromApi(t.from))) &&
        (t.below === undefined || x.lt(fromApi(t.below))) &&
        (t.upTo === undefined || x.lte(fromApi(t.upTo))),
    );
    return t ? exact(t.amount) : '-';
  });
  return `tiered ${at.join(' ')}${ccy}`;
}

/** Required fields as the tool checks them: names, 'name?' when not required, one-of groups joined. */
function requiredRead(fields: readonly RequiredField[] | undefined): string[] | undefined {
  return fields?.map((f) =>
    'oneOf' in f ? f.oneOf.map((group) => group.map((g) => g.name).join('+')).join(' | ') : f.required === false ? `${f.name}?` : f.name,
  );
}

describe('methods (§4.11): fee flat / tiered / unknown, required fields or undefined', () => {
  it.each(named(methodsFixtures))('%s', async (_, f) => {
    const { c, seen } = client(() => respond(f));
    const r = await c.listMethods(USA);
    const want = f.expect!;
    const got: MethodsExpected = { rate: exact(r.rate), methods: {} };
    for (const m of r.methods) {
      const w = want.methods[m.code];
      got.methods[m.code] = {
        fee: feeRead(m.fee),
        required: requiredRead(m.requiredFields),
        ...(w && 'settlement' in w ? { settlement: m.settlement } : {}),
      };
    }
    expect(got).toEqual(want);
    expect(new URL(seen[0]!.url).search).toBe('?sourceCurrency=USD&destinationCurrency=USD&destinationCountryCode=USA');
  });
});

describe('wallets (§4.12): the balance, or undefined when not given', () => {
  it.each(named(walletsFixtures))('%s', async (_, f) => {
    const l = await answering(f).listWallets();
    expect(l.data.map((w) => ({ walletId: w.walletId, currency: w.currency, balance: exact(w.balance) }))).toEqual(f.expect);
  });
});

// ---------------------------------------------------------------- webhook subscriptions (§4.13)

describe('webhook subscription routes (§4.13)', () => {
  it.each(named(webhookRecordFixtures))('register: %s', async (_, f) => {
    const s = await answering(f).registerWebhook({ url: 'https://hooks.example.test/payouts', secret: 's3cret' });
    expect({ id: s.id, url: s.url }).toEqual(f.expect);
  });
  it.each(named(webhookRecordFixtures))('get: %s', async (_, f) => {
    const s = await answering({ ...f, status: 200 }).getWebhook(WEBHOOK_ID);
    expect({ id: s.id, url: s.url }).toEqual(f.expect);
  });
  it.each(named(webhookRecordFixtures))('update: %s', async (_, f) => {
    const s = await answering({ ...f, status: 200 }).updateWebhook(WEBHOOK_ID, { url: 'https://hooks.example.test/payouts' });
    expect({ id: s.id, url: s.url }).toEqual(f.expect);
  });
  it.each([
    ['only {statusCode, message}', { body: { statusCode: 200, message: 'Webhook updated successfully' } }],
    ['an empty body', { raw: '' }],
    ['{statusCode, message, data: null}', { body: { statusCode: 200, message: 'updated', data: null } }],
  ])('update answering %s: the subscription the path named', async (_, f) => {
    const s = await answering({ status: 200, ...f }).updateWebhook(WEBHOOK_ID, { url: 'https://hooks.example.test/payouts' });
    expect(s.id).toBe(WEBHOOK_ID);
  });
  it.each(named(webhookListFixtures))('list: %s', async (_, f) => {
    const l = await answering(f).listWebhooks();
    expect(l.data.map((s) => ({ id: s.id, url: s.url }))).toEqual(f.expect);
  });
});

// ---------------------------------------------------------------- public routes (§4.14, §4.15)

describe('countries (§4.14)', () => {
  it.each(named(countriesFixtures))('%s', async (_, f) => {
    const l = await answering(f).listCountries({ limit: 250 });
    expect(
      l.data.map((c) => ({
        code: c.code,
        name: c.name,
        isProhibited: c.isProhibited,
        tradingStartTime: c.tradingStartTime,
        timeZone: c.timeZone,
      })),
    ).toEqual(f.expect ?? COUNTRIES_EXPECTED);
  });
});

describe('transactions (§4.15)', () => {
  it.each(named(transactionsFixtures))('%s', async (_, f) => {
    const l = await answering(f).listTransactions({ payoutRef: 'PO-20250301-0001' });
    expect(
      l.data.map((t) => ({ type: t.type, amount: exact(t.amount), reference: t.reference, balanceAfter: exact(t.balanceAfter) })),
    ).toEqual(f.expect ?? TRANSACTIONS_EXPECTED);
  });
});

// ---------------------------------------------------------------- events (§6)

const SECRET = 'whsec_contract';

/** One signed delivery of `body`, as the service sends it (§6: sha256=<hex HMAC of the raw body>). */
function deliver(body: unknown) {
  const rawBody = JSON.stringify(body);
  return verifyWebhook({
    rawBody,
    secret: SECRET,
    headers: { 'X-Service-Signature': signPayload(rawBody, SECRET), 'X-Service-Delivery-Id': 'delivery-1' },
  });
}

describe('payout.status.changed (§6), and its legacy name .v1', () => {
  it.each(named(statusEventFixtures))('%s', (_, f) => {
    const d = deliver(f.body);
    expect(d).toMatchObject({ deliveryId: 'delivery-1', signed: true });
    const e = d.event as PayoutStatusChangedEvent;
    expect({
      eventType: e.eventType,
      payoutId: e.data.payoutId,
      oldStatus: e.data.oldStatus,
      newStatus: e.data.newStatus,
      newStatusDetail: e.data.newStatusDetail,
      requests: e.data.informationRequests?.length ?? 0,
    }).toEqual(f.expect);
  });
});

describe('wallet.credited and wallet.debited (§6)', () => {
  it.each(named(walletEventFixtures))('%s', (_, f) => {
    const e = deliver(f.body).event as WalletEvent;
    expect({
      eventType: e.eventType,
      amount: exact(e.data.amount),
      currency: e.data.currency,
      transactionType: e.data.transactionType,
      reference: e.data.reference,
      balance: exact(e.data.balance),
    }).toEqual(f.expect);
  });
});

// ---------------------------------------------------------------- what must not be accepted

function call(c: PayoutClient, route: Rejected['route']): Promise<unknown> {
  switch (route) {
    case 'quote':
      return c.quote(QUOTE_BODY);
    case 'initiate':
      return c.initiate(INITIATE_BODY, { idempotencyKey: 'contract-rejected' });
    case 'getPayout':
      return c.getPayout(PAYOUT_ID);
    case 'createUploadUrl':
      return c.createUploadUrl({ filename: 'contract.pdf', contentType: 'application/pdf' });
    case 'swap':
      return c.swap(SWAP_BODY, { idempotencyKey: 'contract-rejected' });
    case 'listMethods':
      return c.listMethods(USA);
    case 'listWallets':
      return c.listWallets();
    case 'listPairs':
      return c.listPairs();
    case 'listPayouts':
      return c.listPayouts();
  }
}

describe('answers that must not be accepted fail as invalid-response', () => {
  it.each(rejectedFixtures.map((f) => [`${f.route}: ${f.shape}`, f] as const))('%s', async (_, f) => {
    const { c, seen } = client(() => respond(f));
    const e = await failure(call(c, f.route));
    expect(e.kind).toBe('invalid-response');
    // a mutating route's odd 2xx may follow a payout the service made: unknown, resent with the same key
    expect(e.outcome).toBe(f.route === 'initiate' || f.route === 'swap' ? 'unknown' : 'definitive');
    expect(e.fieldErrors.map((x) => x.field).join(' ')).toContain(f.field);
    expect(seen).toHaveLength(1);
  });

  it.each(named(rejectedEvents))('event: %s', (_, f) => {
    let err: unknown;
    try {
      deliver(f.body);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(WebhookVerificationError);
    expect((err as WebhookVerificationError).reason).toBe('invalid-event');
  });
});

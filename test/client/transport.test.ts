import { describe, expect, it } from 'vitest';
import { mkdtemp, readFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PayoutClient } from '../../src/client/client.ts';
import type { PayoutClientOptions } from '../../src/client/http.ts';
import { UsageCounter } from '../../src/client/quota.ts';
import { wallNow } from '../../src/client/pace.ts';
import { createLogger } from '../../src/log.ts';
import { INITIATE_BODY, PAYOUT, failure, json, scriptedFetch, type Step } from './fake-fetch.ts';

const KEY = 'sk_sandbox_unit_5c1e0a7f9b2d4e68';
let n = 0;

function client(steps: Step[], extra: Partial<PayoutClientOptions> = {}) {
  const f = scriptedFetch(steps);
  const delays: number[] = [];
  const c = new PayoutClient({
    baseUrl: 'https://gateway.staging.example.test',
    apiKey: `${KEY}_${n++}`,
    requestsPerSecond: 1000,
    fetch: f.fetch,
    sleep: async (ms) => void delays.push(ms),
    random: () => 0.5,
    ...extra,
  });
  return { c, seen: f.seen, delays };
}

describe('requests', () => {
  it('sends the key, a fresh x-request-id and JSON, never follows redirects, and returns the typed body', async () => {
    const { c, seen } = client([json(200, { data: [{ walletId: 'w1', currency: 'USD', balance: 10 }] })]);
    const wallets = await c.listWallets();
    expect(wallets.data[0]!.balance).toBe(10);
    const r = seen[0]!;
    expect(r.url).toBe('https://gateway.staging.example.test/v1/payout-api/payouts/wallets');
    expect(r.headers['x-api-key']).toBe(c.apiKey.reveal());
    expect(r.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.redirect).toBe('manual');
    await c.listWallets();
    expect(seen[1]!.headers['x-request-id']).not.toBe(r.headers['x-request-id']);
  });

  it('uses a caller-supplied x-request-id on every attempt and records it on the error', async () => {
    const { c, seen } = client([
      json(503, { statusCode: 503, message: 'busy' }),
      json(404, { statusCode: 404, message: 'Payout not found', error: 'PAYOUT_NOT_FOUND' }),
    ]);
    const e = await failure(c.getPayout('abc', { requestId: 'support-ticket-77' }));
    expect(seen.map((s) => s.headers['x-request-id'])).toEqual(['support-ticket-77', 'support-ticket-77']);
    expect(e).toMatchObject({
      status: 404,
      code: 'PAYOUT_NOT_FOUND',
      route: 'getPayout',
      requestId: 'support-ticket-77',
      outcome: 'definitive',
      attempts: 2,
    });
    expect(e.message).toContain('support-ticket-77');
  });

  it('builds list and filter queries in the spec words', async () => {
    const page = { data: [], meta: { total: 0, page: 2, limit: 50, size: 0 } };
    const { c, seen } = client([
      json(200, page),
      json(200, page),
      json(200, { statusCode: 200, message: 'ok', data: [], meta: page.meta }),
      json(200, { statusCode: 200, message: 'ok', data: [], meta: page.meta }),
      json(200, { data: [] }),
    ]);
    await c.listPayouts({ page: 2, limit: 50 });
    await c.listSwaps({ page: 2 });
    await c.listCountries({ limit: 10, currencyCode: 'NGN' });
    await c.listTransactions({ payoutRef: 'PO-1' });
    await c.listPairs({ all: true });
    const paths = seen.map((s) => decodeURIComponent(new URL(s.url).pathname + new URL(s.url).search));
    expect(paths).toEqual([
      '/v1/payout-api/payouts?page=2&limit=50',
      '/v1/payout-api/payouts/swaps?page=2',
      '/api/public/auth/countries?limit=10&filter[currencyCode]=NGN',
      '/api/public/transactions?filter[payoutRef]=PO-1',
      '/v1/payout-api/payouts/pairs?status=all',
    ]);
  });
});

describe('responses that do not match the spec', () => {
  it('fail at the boundary with the route and the field named (definitive on a read)', async () => {
    const { c } = client([json(200, { ...PAYOUT, status: 'DONE' })]);
    const e = await failure(c.getPayout(PAYOUT.id));
    expect(e.kind).toBe('invalid-response');
    expect(e.outcome).toBe('definitive');
    expect(e.message).toMatch(/getPayout \(GET \/v1\/payout-api\/payouts\/.*\).*field "status"/);
    expect(e.fieldErrors.map((f) => f.field)).toEqual(['status']);
  });

  it('are "unknown" on initiate when no status says the payout exists; it is not resent blindly', async () => {
    const { c, seen } = client([json(201, { id: PAYOUT.id })]);
    const e = await failure(c.initiate(INITIATE_BODY, { idempotencyKey: 'k-1' }));
    expect(e).toMatchObject({ kind: 'invalid-response', outcome: 'unknown', status: 201 });
    expect(e.fieldErrors.map((f) => f.field)).toContain('status');
    expect(seen).toHaveLength(1);
  });

  it('an initiate answer with an id and a status is a created payout, whatever else is missing or extra', async () => {
    const { c, seen } = client([
      json(201, { statusCode: 201, message: 'ok', data: { id: PAYOUT.id, status: 'pending', extra: { a: 1 } } }),
    ]);
    const r = await c.initiate(INITIATE_BODY, { idempotencyKey: 'k-2' });
    expect(r.payout).toMatchObject({ id: PAYOUT.id, status: 'PENDING' });
    expect(r.payout.payoutRef).toBeUndefined();
    expect(r.payout.transactionFees).toBeUndefined();
    expect(seen).toHaveLength(1);
  });

  it('reports a body that is not JSON', async () => {
    const { c } = client([new Response('<html>gateway</html>', { status: 200 })]);
    const e = await failure(c.listWallets());
    expect(e.message).toMatch(/not JSON/);
  });
});

describe('error answers', () => {
  it('carry status, the spec code, message and field errors, and are not retried', async () => {
    const { c, seen } = client([
      json(400, {
        statusCode: 400,
        message: 'Missing required fields',
        error: 'MISSING_REQUIRED_FIELDS',
        errors: [{ field: 'beneficiary.iban', message: 'required for SEPA' }],
      }),
    ]);
    const e = await failure(c.initiate(INITIATE_BODY, { idempotencyKey: 'k-2' }));
    expect(e).toMatchObject({
      kind: 'http',
      status: 400,
      code: 'MISSING_REQUIRED_FIELDS',
      outcome: 'definitive',
      route: 'initiate',
      method: 'POST',
    });
    expect(e.fieldErrors).toEqual([{ field: 'beneficiary.iban', message: 'required for SEPA' }]);
    expect(seen).toHaveLength(1);
  });

  it('keep "no code" when the body has none (401, and the swap amount message)', async () => {
    const { c } = client([json(401, { statusCode: 401, message: 'Unauthorized' })]);
    const e = await failure(c.listWallets());
    expect(e.code).toBeUndefined();
    expect(e.status).toBe(401);
    expect(e.message).toMatch(/refused the API key/);
    const { c: c2 } = client([json(400, { statusCode: 400, message: 'Invalid payout amount', error: 'Bad Request' })]);
    const e2 = await failure(c2.listWallets());
    expect(e2.code).toBeUndefined();
    expect(e2.message).toContain('Invalid payout amount');
  });

  it('explain a 403 as key propagation', async () => {
    const { c, seen } = client([json(403, { statusCode: 403, message: 'Forbidden' })]);
    const e = await failure(c.listWallets());
    expect(e.message).toMatch(/new.*key needs 20 to 30 minutes/);
    expect(seen).toHaveLength(1);
  });

  it('never carry the key, even when the service echoes it', async () => {
    const f = scriptedFetch([
      (req) => json(400, { statusCode: 400, message: `bad key ${req.headers['x-api-key']}`, error: 'VALIDATION_ERROR' }),
    ]);
    const c = new PayoutClient({
      baseUrl: 'https://x.test',
      apiKey: 'sk_sandbox_echo_0123456789',
      fetch: f.fetch,
      requestsPerSecond: 1000,
    });
    const e = await failure(c.listWallets());
    const everything = `${e.message} ${JSON.stringify(e)} ${String(e)} ${e.stack}`;
    expect(everything).not.toContain('sk_sandbox_echo_0123456789');
    expect(everything).toContain('[redacted]');
    expect(JSON.stringify({ key: c.apiKey })).not.toContain('sk_sandbox_echo_0123456789');
  });
});

describe('retries', () => {
  it('honour Retry-After given as an HTTP date, and slow the key down', async () => {
    const inTwoSeconds = new Date(Date.now() + 2000).toUTCString();
    const { c, delays, seen } = client([
      json(429, { statusCode: 429, message: 'Too Many Requests' }, { 'retry-after': inTwoSeconds }),
      json(200, { data: [] }),
    ]);
    await c.listWallets();
    expect(seen).toHaveLength(2);
    expect(delays).toHaveLength(1);
    expect(delays[0]).toBeGreaterThan(900);
    expect(delays[0]).toBeLessThanOrEqual(2000);
  });

  it('resend initiate with the same Idempotency-Key and byte-identical body after 5xx, timeout and a dropped connection', async () => {
    const { c, seen } = client(
      [json(502, { statusCode: 502, message: 'Bad gateway' }), { hang: true }, { networkError: 'UND_ERR_SOCKET' }, json(201, PAYOUT)],
      { timeoutMs: 30 },
    );
    const r = await c.initiate(INITIATE_BODY, { idempotencyKey: 'idem-77' });
    expect(r.payout.id).toBe(PAYOUT.id);
    expect(r.attempts).toBe(4);
    expect(seen).toHaveLength(4);
    expect(new Set(seen.map((s) => s.headers['idempotency-key']))).toEqual(new Set(['idem-77']));
    const first = seen[0]!.bytes!;
    for (const s of seen) expect(Buffer.compare(Buffer.from(s.bytes!), Buffer.from(first))).toBe(0);
    expect(r.body).toBe(seen[0]!.body);
    expect(new Set(seen.map((s) => s.headers['x-request-id'])).size).toBe(1);
  });

  it('send a pre-serialised body exactly as given', async () => {
    const raw =
      '{ "narration":"Invoice 42", "sourceAmount":100.10,"sourceCurrency":"USD","destinationCurrency":"EUR","destinationCountryCode":"DEU","method":"SEPA","beneficiary":{"accountName":"E","accountCurrency":"EUR","iban":"DE89370400440532013000"} }';
    const { c, seen } = client([json(500, { statusCode: 500, message: 'x' }), json(201, PAYOUT)]);
    const r = await c.initiate(raw, { idempotencyKey: 'idem-raw' });
    expect(seen.map((s) => s.body)).toEqual([raw, raw]);
    expect(r.body).toBe(raw);
  });

  it('end "unknown" when the last attempts were refused after an earlier one may have acted', async () => {
    const { c } = client([{ networkError: 'ECONNRESET' }, json(429, { statusCode: 429, message: 'slow down' })], {
      retry: { maxAttempts: 3 },
    });
    const e = await failure(c.initiate(INITIATE_BODY, { idempotencyKey: 'k-3' }));
    expect(e.status).toBe(429);
    expect(e.outcome).toBe('unknown');
    expect(e.attempts).toBe(3);
  });

  it('are "definitive" when the connection never opened, on any route', async () => {
    const { c, seen } = client([{ networkError: 'ECONNREFUSED' }], { retry: { maxAttempts: 3 } });
    const e = await failure(c.initiate(INITIATE_BODY, { idempotencyKey: 'k-4' }));
    expect(e).toMatchObject({ kind: 'network', outcome: 'definitive', attempts: 3 });
    expect(seen).toHaveLength(3);
  });

  it('a port fetch will not connect to (6000, a "bad port"): said at once, not retried as a connection lost', async () => {
    const c = new PayoutClient({
      baseUrl: 'http://127.0.0.1:6000',
      apiKey: `${KEY}_${n++}`,
      sleep: async () => {},
      retry: { maxAttempts: 3 },
    });
    const e = await failure(c.getPayout(PAYOUT.id));
    expect(e).toMatchObject({ kind: 'network', outcome: 'definitive', attempts: 1 });
    expect(e.message).toMatch(/port 6000 .*bad port.*another port.*nothing was sent/);
  });

  it('give up on initiate with "unknown" after timeouts', async () => {
    const { c, seen } = client([{ hang: true }], { timeoutMs: 20, retry: { maxAttempts: 2 } });
    const e = await failure(c.initiate(INITIATE_BODY, { idempotencyKey: 'k-5' }));
    expect(e).toMatchObject({ kind: 'timeout', outcome: 'unknown', attempts: 2 });
    expect(seen).toHaveLength(2);
  });

  it('retry reads after 5xx and timeouts, ending definitive: a read has no effect', async () => {
    const { c, seen } = client([json(503, { statusCode: 503, message: 'down' }), { hang: true }], {
      timeoutMs: 20,
      retry: { maxAttempts: 3 },
    });
    const e = await failure(c.getPayout(PAYOUT.id));
    expect(e.outcome).toBe('definitive');
    expect(seen).toHaveLength(3);
  });

  it('refuse a webhook url that is no URL before sending, as a field error (not a crash)', async () => {
    const { c, seen } = client([json(201, { id: 'w1' })]);
    const e = await failure(c.registerWebhook({ url: 'nope' }));
    expect(e).toMatchObject({ outcome: 'definitive' });
    expect(e.message).toMatch(/url/);
    expect(seen).toHaveLength(0);
  });

  it('do not resend a route that is not safe to resend when its effect is unknown', async () => {
    const { c, seen } = client([json(503, { statusCode: 503, message: 'down' })]);
    const e = await failure(c.registerWebhook({ url: 'https://hooks.example.test/payouts' }));
    expect(e).toMatchObject({ status: 503, outcome: 'unknown', attempts: 1 });
    expect(seen).toHaveLength(1);
    const t = client([{ networkError: 'ECONNRESET' }, json(200, {})]);
    const e2 = await failure(t.c.togglePair('p1'));
    expect(e2.outcome).toBe('unknown');
    expect(t.seen).toHaveLength(1);
  });

  it('stop waiting when the caller aborts', async () => {
    const ac = new AbortController();
    const { c } = client([{ hang: true }], { timeoutMs: 10_000 });
    const p = c.initiate(INITIATE_BODY, { idempotencyKey: 'k-6', signal: ac.signal });
    setTimeout(() => ac.abort(new Error('user stop')), 20);
    const e = await failure(p);
    expect(e).toMatchObject({ kind: 'aborted', outcome: 'unknown' });
  });
});

describe('requests the client refuses to send', () => {
  it('a body that does not match the spec: nothing is sent, the field is named', async () => {
    const { c, seen } = client([json(200, {})]);
    const e = await failure(c.initiate({ ...INITIATE_BODY, sourceCurrency: 'usd' }, { idempotencyKey: 'k-7' }));
    expect(e).toMatchObject({ kind: 'invalid-request', outcome: 'definitive', attempts: 0 });
    expect(e.message).toMatch(/field "sourceCurrency"/);
    const e2 = await failure(c.initiate(INITIATE_BODY, { idempotencyKey: '' }));
    expect(e2.message).toMatch(/Idempotency-Key/);
    const e3 = await failure(c.initiate('{"not json', { idempotencyKey: 'k-8' }));
    expect(e3.message).toMatch(/not JSON/);
    expect(seen).toHaveLength(0);
  });
});

describe('uploadDocument', () => {
  it('asks for the upload URL, then PUTs the bytes with exactly the returned headers and no key', async () => {
    const { c, seen } = client([
      json(200, {
        uploadUrl: 'https://storage.example.test/b/doc-1?sig=abc',
        documentUrl: 'https://files.example.test/doc-1',
        headers: { 'Content-Type': 'application/pdf', 'x-amz-acl': 'private' },
      }),
      new Response(null, { status: 200 }),
    ]);
    const bytes = new TextEncoder().encode('%PDF-1.4 test');
    const r = await c.uploadDocument({ bytes, filename: 'invoice.pdf', contentType: 'application/pdf' });
    expect(r.documentUrl).toBe('https://files.example.test/doc-1');
    expect(JSON.parse(seen[0]!.body!)).toEqual({ filename: 'invoice.pdf', contentType: 'application/pdf' });
    const put = seen[1]!;
    expect(put.method).toBe('PUT');
    expect(put.url).toBe('https://storage.example.test/b/doc-1?sig=abc');
    expect(put.headers).toEqual({ 'content-type': 'application/pdf', 'x-amz-acl': 'private' });
    expect(Buffer.from(put.bytes!).toString()).toBe('%PDF-1.4 test');
  });

  it('expects exactly 200 from the storage', async () => {
    const { c } = client([
      json(200, { uploadUrl: 'https://storage.example.test/u', documentUrl: 'https://files.example.test/d', headers: {} }),
      new Response(null, { status: 204 }),
    ]);
    const e = await failure(c.uploadDocument({ bytes: new Uint8Array([1]), filename: 'a.png', contentType: 'image/png' }));
    expect(e).toMatchObject({ route: 'uploadDocument', status: 204 });
  });

  it("never quotes the upload URL's signature nor its headers' token when the storage's refusal echoes them", async () => {
    const sig = 'f0e1d2c3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a5968778695a4b3c2d1e0f';
    const token = 'IQoJb3JpZ2luX2VjEHwaCWV1LXdlc3QtMSJHMEUCIQDx';
    const { c } = client([
      json(200, {
        uploadUrl: `https://storage.example.test/u?X-Amz-Expires=900&X-Amz-Signature=${sig}`,
        documentUrl: 'https://files.example.test/d',
        headers: { 'x-amz-security-token': token },
      }),
      new Response(`<Error><SignatureProvided>${sig}</SignatureProvided><Token>${token}</Token></Error>`, { status: 403 }),
    ]);
    const e = await failure(c.uploadDocument({ bytes: new Uint8Array([1]), filename: 'a.png', contentType: 'image/png' }));
    expect(e).toMatchObject({ route: 'uploadDocument', status: 403 });
    expect(e.message).toContain('SignatureProvided');
    expect(e.message).not.toMatch(/f0e1d2c3|c2d1e0f|IQoJb3Jp|EUCIQDx/);
  });
});

describe('the start the pace counts', () => {
  it("is when the request is handed to the transport, the caller's fetch as much as the global one", async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(l) } });
    const handed: number[] = [];
    const answered: number[] = [];
    const step = () => {
      handed.push(wallNow());
      const r = json(200, { data: [] });
      answered.push(wallNow());
      return r;
    };
    const { c } = client([step, step], { logger });
    await c.listWallets();
    await c.listWallets();
    const sentAt = lines.flatMap((l) => {
      const e = JSON.parse(l) as { msg: string; sentAt?: number };
      return e.msg === 'response' ? [e.sentAt] : [];
    });
    // the first, before any answer, counts from its answer; the next from when it was handed over
    expect(sentAt[0]).toBeGreaterThanOrEqual(answered[0]!);
    expect(sentAt[1]).toBeGreaterThanOrEqual(sentAt[0]!); // (whole milliseconds: the wall clock)
    expect(sentAt[1]).toBeLessThanOrEqual(handed[1]!);
  });
});

describe('the quota counter', () => {
  it('counts every attempt against the key fingerprint and never stores the key', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'usage-'));
    const usage = new UsageCounter({ stateDir: dir, flushMs: 0 });
    const { c } = client([json(503, { statusCode: 503, message: 'x' }), json(200, { data: [] }), json(200, { data: [] })], { usage });
    await c.listWallets();
    await c.listWallets();
    expect((await c.quotaUsage())!.used).toBe(3);
    await usage.close();
    const text = await readFile(join(dir, 'usage.json'), 'utf8');
    expect(text).toContain(c.apiKey.fingerprint);
    expect(text).not.toContain(c.apiKey.reveal());
    // beside it, the key's request pace shared with other processes (pace.ts): no key there either
    expect((await readdir(dir)).sort()).toEqual(['pace', 'usage.json']);
    for (const f of await readdir(join(dir, 'pace'))) expect(await readFile(join(dir, 'pace', f), 'utf8')).not.toContain(c.apiKey.reveal());
    const again = new UsageCounter({ stateDir: dir });
    expect((await again.usage(c.apiKey.fingerprint)).used).toBe(3);
  });
});

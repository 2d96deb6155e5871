// Test helpers: a sandbox per test file, and a tiny fetch wrapper. Every test talks HTTP.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSandbox, DEFAULT_KEYS, type LocalSandbox, type SandboxOptions } from '../../src/sandbox/start-sandbox.ts';
import { PAYOUTS_PREFIX, WEBHOOKS_PREFIX } from '../../src/spec/endpoints.ts';

export { DEFAULT_KEYS };
export const ACME = DEFAULT_KEYS.acmePrimary;
export const GLOBEX = DEFAULT_KEYS.globex;

export interface Answer<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** Starts a sandbox with limits off unless a test asks for them. */
export const start = (options: SandboxOptions = {}): Promise<LocalSandbox> => startSandbox({ rateLimitPerSecond: null, ...options });

export async function call<T = any>(
  sb: { url: string },
  method: string,
  path: string,
  opts: { key?: string | null; body?: unknown; headers?: Record<string, string>; idem?: string } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  const key = opts.key === undefined ? ACME : opts.key;
  if (key !== null) headers['x-api-key'] = key;
  if (opts.idem) headers['idempotency-key'] = opts.idem;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${sb.url}${path}`, {
    method,
    headers,
    ...(opts.body !== undefined ? { body: typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body) } : {}),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: body as T, headers: res.headers };
}

export const P = PAYOUTS_PREFIX;
export const W = WEBHOOKS_PREFIX;

let n = 0;
export const uniqueKey = (label = 'k'): string => `${label}-${process.pid}-${Date.now()}-${++n}`;

/** A complete USD→NGN NIP initiate body. */
export function nipBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    sourceAmount: 1000,
    sourceCurrency: 'USD',
    destinationCurrency: 'NGN',
    destinationCountryCode: 'NGA',
    method: 'NIP',
    narration: 'Invoice 2024-001',
    beneficiary: { accountName: 'Ada Okafor', accountCurrency: 'NGN', accountNumber: '0123456789', bankCode: '058' },
    ...overrides,
  };
}

/** A USD→USD SWIFT initiate body of 10 to the USA, the beneficiary's country `beneficiaryCountry`. */
export function swiftUsdBody(beneficiaryCountry = 'USA'): Record<string, unknown> {
  return {
    sourceAmount: 10,
    sourceCurrency: 'USD',
    destinationCurrency: 'USD',
    destinationCountryCode: 'USA',
    method: 'SWIFT',
    narration: 'x',
    beneficiary: { accountName: 'A', accountCurrency: 'USD', accountNumber: '1', swiftCode: 'CHASUS33', bankName: 'B', beneficiaryCountry },
  };
}

/** A complete EUR→EUR SEPA initiate body. */
export function sepaBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    sourceAmount: 250.5,
    sourceCurrency: 'EUR',
    destinationCurrency: 'EUR',
    destinationCountryCode: 'DEU',
    method: 'SEPA',
    narration: 'Supplier invoice 77',
    beneficiary: { accountName: 'Muster GmbH', accountCurrency: 'EUR', iban: 'DE89370400440532013000' },
    ...overrides,
  };
}

export async function initiate(sb: { url: string }, body: Record<string, unknown>, key: string = ACME): Promise<Answer> {
  return call(sb, 'POST', `${P}/initiate`, { key, body, idem: uniqueKey('init') });
}

/** upload-url then PUT: returns the documentUrl. */
export async function uploadDocument(
  sb: { url: string },
  key: string = ACME,
  contentType = 'application/pdf',
  filename = 'invoice.pdf',
): Promise<string> {
  const u = await call(sb, 'POST', `${P}/documents/upload-url`, { key, body: { filename, contentType } });
  if (u.status !== 200) throw new Error(`upload-url answered ${u.status}`);
  const put = await fetch(u.body.uploadUrl, { method: 'PUT', headers: u.body.headers, body: Buffer.from('%PDF-1.4 test document') });
  if (put.status !== 200) throw new Error(`PUT answered ${put.status}`);
  return u.body.documentUrl;
}

export async function walletBalance(sb: { url: string }, currency: string, key: string = ACME): Promise<number> {
  const w = await call(sb, 'GET', `${P}/wallets`, { key });
  return w.body.data.find((x: { currency: string }) => x.currency === currency).balance;
}

export async function setStatus(
  sb: { url: string },
  kind: 'payouts' | 'swaps',
  id: string,
  body: Record<string, unknown>,
): Promise<Answer> {
  return call(sb, 'POST', `/_sandbox/${kind}/${id}/status`, { key: null, body });
}

/** Polls until `check` returns a value (not undefined) or the time runs out. */
export async function eventually<T>(check: () => T | undefined | Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface Received {
  headers: IncomingMessage['headers'];
  raw: string;
  body: any;
}

/** A webhook receiver on 127.0.0.1; `answer` decides each status (default 200). */
export async function receiver(
  answer: (n: number) => number = () => 200,
): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  let count = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const status = answer(++count);
      if (status >= 200 && status < 300) received.push({ headers: req.headers, raw, body: JSON.parse(raw) });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

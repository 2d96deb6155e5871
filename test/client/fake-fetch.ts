// A scripted fetch for the client's unit tests: each call takes the next step of the script.
import { expect } from 'vitest';
import type { PayoutClient } from '../../src/client/client.ts';
import { PayoutApiError } from '../../src/client/errors.ts';

export interface SeenRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  bytes: Uint8Array | undefined;
  redirect: string | undefined;
}

export type Step = Response | { hang: true } | { networkError: string } | ((req: SeenRequest) => Response | Promise<Response>);

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

export function scriptedFetch(steps: Step[]) {
  const seen: SeenRequest[] = [];
  const fn = (async (input: string | URL | Request, init: RequestInit = {}) => {
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => (headers[k] = v));
    const bytes = init.body instanceof Uint8Array ? init.body : undefined;
    const req: SeenRequest = {
      url: input instanceof Request ? input.url : String(input),
      method: init.method ?? 'GET',
      headers,
      body: bytes ? Buffer.from(bytes).toString('utf8') : undefined,
      bytes,
      redirect: init.redirect,
    };
    seen.push(req);
    const step = steps.length > 1 ? steps.shift()! : steps[0];
    if (!step) throw new Error('script ran out');
    if (step instanceof Response) return step.clone();
    if (typeof step === 'function') return step(req);
    if ('hang' in step) {
      return new Promise<Response>((_, reject) => {
        init.signal?.addEventListener('abort', () => reject(init.signal!.reason as Error), { once: true });
      });
    }
    throw new TypeError('fetch failed', { cause: Object.assign(new Error(step.networkError), { code: step.networkError }) });
  }) as typeof fetch;
  return { fetch: fn, seen };
}

export const PAYOUT = {
  id: '0b6d3c9e-1f49-4f0e-9a6f-0c1d2e3f4a5b',
  payoutRef: 'PO-000001',
  sourceAmount: 100,
  sourceCurrency: 'USD',
  destinationAmount: 92.5,
  destinationCurrency: 'EUR',
  status: 'PENDING',
  method: 'SEPA',
  transactionFees: 5,
  exchangeRate: 0.925,
  createdAt: '2025-03-01T12:00:00.000Z',
  updatedAt: '2025-03-01T12:00:00.000Z',
  supportingDocuments: [],
};

export const INITIATE_BODY = {
  sourceAmount: 100,
  sourceCurrency: 'USD',
  destinationCurrency: 'EUR',
  destinationCountryCode: 'DEU',
  method: 'SEPA',
  beneficiary: { accountName: 'Erika Mustermann', accountCurrency: 'EUR', iban: 'DE89370400440532013000' },
  narration: 'Invoice 42',
};

/** The PayoutApiError a call fails with (the test fails if it succeeds or throws anything else). */
export async function failure(p: Promise<unknown>): Promise<PayoutApiError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(PayoutApiError);
    return e as PayoutApiError;
  }
  throw new Error('expected the call to fail');
}

/** The ids of every payout a client can list, page by page until a short page. */
export async function allPayoutIds(client: PayoutClient): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; ; page++) {
    const r = await client.listPayouts({ page, limit: 100 });
    ids.push(...r.data.map((p) => p.id));
    if (r.data.length < 100) return ids;
  }
}

// A refusal the client takes as the service's own (src/client/definitive.ts) is read as one: its code and
// message kept, whatever form of the body made it definitive (statusCode as text or absent, no message).
import { describe, expect, it } from 'vitest';
import { PayoutClient } from '../../src/client/client.ts';
import { INITIATE_BODY, failure, json, scriptedFetch } from './fake-fetch.ts';

let n = 0;
const client = (response: Response) =>
  new PayoutClient({
    baseUrl: 'https://gateway.staging.example.test',
    apiKey: `sk_sandbox_refusal_reading_${n++}`,
    requestsPerSecond: 1000,
    fetch: scriptedFetch([response]).fetch,
    sleep: async () => undefined,
    random: () => 0.5,
  });

describe('a definitive refusal keeps what the service said', () => {
  it.each([
    ['statusCode as text', { statusCode: '400', message: 'Insufficient funds', error: 'INSUFFICIENT_FUNDS' }],
    ['no statusCode', { message: 'Insufficient funds', error: 'INSUFFICIENT_FUNDS' }],
  ])('%s: the code and the message', async (_what, body) => {
    const e = await failure(client(json(400, body)).initiate(INITIATE_BODY, { idempotencyKey: `k-${n}` }));
    expect(e).toMatchObject({ status: 400, outcome: 'definitive', code: 'INSUFFICIENT_FUNDS' });
    expect(e.message).toContain('Insufficient funds');
    expect(e.message).not.toContain('not the service error body');
  });

  it('no message: the code alone, not "not the service error body"', async () => {
    const e = await failure(
      client(json(404, { statusCode: 404, error: 'PAYOUT_NOT_FOUND' })).patchDocuments('p-1', ['https://x.test/a.pdf']),
    );
    expect(e).toMatchObject({ status: 404, outcome: 'definitive', code: 'PAYOUT_NOT_FOUND' });
    expect(e.message).not.toContain('not the service error body');
  });

  it("the swap's 'Invalid payout amount' with statusCode as text: the message kept (the engine recomputes the amount by it)", async () => {
    const swap = {
      sourceWalletId: 'w-1',
      destinationWalletId: 'w-2',
      swapAmount: 100,
      swapCurrency: 'USD',
      amountToBeSent: 92.5,
      currencyToBeSent: 'EUR',
    };
    const e = await failure(
      client(json(400, { statusCode: '400', message: 'Invalid payout amount', error: 'Bad Request' })).swap(swap, {
        idempotencyKey: 'k-swap',
      }),
    );
    expect(e).toMatchObject({ status: 400, outcome: 'definitive', code: undefined });
    expect(e.message).toContain('Invalid payout amount');
  });
});

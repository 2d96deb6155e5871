// The sandbox's swap faults (issue 28): the rate moving between the pairs read and the swap, a
// swap coming out REJECTED, and the after-create faults reaching POST swap (spec §4.7) as they
// reach initiate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Dec } from '../../src/money.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { call, P, start, uniqueKey, walletBalance } from './helpers.ts';

let sb: LocalSandbox;
let wallets: Record<string, string>;
beforeAll(async () => {
  // set at start: the rate moves after the first pairs read (startSandbox's option)
  sb = await start({ faults: { rateMoveAfterPairsRead: { pct: 2, times: 1 } } });
  const w = (await call(sb, 'GET', `${P}/wallets`)).body.data as { currency: string; walletId: string }[];
  wallets = Object.fromEntries(w.map((x) => [x.currency, x.walletId]));
});
afterAll(() => sb.close());

/** The live USD/EUR rate as GET pairs gives it. */
const usdEurRate = async (): Promise<string> => {
  const pairs = (await call(sb, 'GET', `${P}/pairs`)).body.data as { baseCurrency: string; quoteCurrency: string; rate: number }[];
  return String(pairs.find((p) => p.baseCurrency === 'USD' && p.quoteCurrency === 'EUR')!.rate);
};
/** 1000 USD to EUR priced at `rate`, as a client pricing from the pairs route sends it. */
const swapBody = (rate: string, reference = uniqueKey('ref')) => ({
  sourceWalletId: wallets.USD,
  destinationWalletId: wallets.EUR,
  swapAmount: 1000,
  swapCurrency: 'USD',
  amountToBeSent: Number(new Dec(1000).times(rate).toDecimalPlaces(2, Dec.ROUND_HALF_UP).toFixed()),
  currencyToBeSent: 'EUR',
  reference,
});
const swap = (body: unknown, idem = uniqueKey('swap')) => call(sb, 'POST', `${P}/swap`, { body, idem });
const swapsWith = async (reference: string) =>
  ((await call(sb, 'GET', `${P}/swaps?limit=100`)).body.data as { payoutRef: string; id: string; status: string }[]).filter(
    (s) => s.payoutRef === reference,
  );

describe('rateMoveAfterPairsRead', () => {
  it('moves the rate once after a pairs read: one "Invalid payout amount", then the swap priced again goes through', async () => {
    const read = await usdEurRate();
    const stale = await swap(swapBody(read));
    expect(stale.status).toBe(400);
    expect(stale.body).toEqual({ statusCode: 400, message: 'Invalid payout amount', error: 'Bad Request' });
    expect(sb.faults().rateMoveAfterPairsRead).toBeUndefined(); // spent
    const moved = await usdEurRate();
    expect(moved).toBe(new Dec(read).times('1.02').toSignificantDigits(12).toFixed());
    const ok = await swap(swapBody(moved));
    expect(ok.status).toBe(201);
    expect(ok.body.exchangeRate).toBe(Number(moved));
  });

  it('is set by PUT /_sandbox/faults, moves nothing without a pairs read, and spends one move per `times`', async () => {
    const before = await usdEurRate();
    const put = await call(sb, 'PUT', '/_sandbox/faults', { key: null, body: { rateMoveAfterPairsRead: { pct: -1.5, times: 2 } } });
    expect(put.status).toBe(200);
    expect(put.body.rateMoveAfterPairsRead).toEqual({ pct: -1.5, times: 2 });
    // a pairs read before the fault was set does not count
    expect((await swap(swapBody(before))).status).toBe(201);
    const rate = await usdEurRate();
    // the pairs read arms the move; a swap priced at the rate read is refused, the rate having moved
    expect((await swap(swapBody(rate))).status).toBe(400);
    expect(sb.faults().rateMoveAfterPairsRead).toEqual({ pct: -1.5, times: 1 });
    const second = await usdEurRate();
    expect((await swap(swapBody(second))).status).toBe(400);
    expect(sb.faults().rateMoveAfterPairsRead).toBeUndefined();
    // no pairs read since, no fault left: the rate read last still prices a swap
    const third = await usdEurRate();
    expect((await swap(swapBody(third))).status).toBe(201);
    expect((await call(sb, 'PUT', '/_sandbox/faults', { key: null, body: { rateMoveAfterPairsRead: { pct: 0 } } })).status).toBe(400);
  });
});

describe('rejectNextSwaps', () => {
  it('answers 201 PROCESSING, then the swap reads REJECTED with both wallets put back; only the next one', async () => {
    sb.setFaults({ rejectNextSwaps: 1 });
    const [usd, eur] = [await walletBalance(sb, 'USD'), await walletBalance(sb, 'EUR')];
    const body = swapBody(await usdEurRate());
    const r = await swap(body);
    expect(r.status).toBe(201);
    expect(r.body.status).toBe('PROCESSING');
    expect((await call(sb, 'GET', `${P}/swaps/${r.body.id}`)).body.status).toBe('REJECTED');
    expect(await swapsWith(body.reference)).toMatchObject([{ id: r.body.id, status: 'REJECTED' }]);
    expect([await walletBalance(sb, 'USD'), await walletBalance(sb, 'EUR')]).toEqual([usd, eur]);
    expect(sb.faults().rejectNextSwaps).toBeUndefined();
    const next = await swap(swapBody(await usdEurRate()));
    expect((await call(sb, 'GET', `${P}/swaps/${next.body.id}`)).body.status).toBe('PROCESSING');
  });
});

describe('after-create faults on POST swap', () => {
  it('errorAfterCreate, dropAfterCreate and a gateway: the swap exists once, a retry with the same key finds it', async () => {
    for (const faults of [
      { errorAfterCreate: 1, routes: ['swap' as const] },
      { dropAfterCreate: 1, routes: ['swap' as const] },
      { gatewayAfterCreate: { probability: 1, status: 504, body: 'html' as const }, routes: ['swap' as const] },
    ]) {
      sb.setFaults(faults);
      const body = swapBody(await usdEurRate());
      const key = uniqueKey('swap');
      const first = await swap(body, key).catch(() => ({ status: 0, body: undefined }));
      expect(first.status === 0 || first.status >= 500).toBe(true);
      const listed = await swapsWith(body.reference);
      expect(listed).toHaveLength(1);
      sb.setFaults({});
      const retry = await swap(body, key);
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.body.id).toBe(listed[0]!.id);
      expect(await swapsWith(body.reference)).toHaveLength(1);
    }
    expect(sb.requestLog().filter((e) => e.route === 'swap' && e.status === 0)).toHaveLength(1);
  });
});

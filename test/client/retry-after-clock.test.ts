// Retry-After as an HTTP date (RFC 9110 §10.2.3) is a time on the service's clock: the wait is measured from the
// answer's own Date, so a host whose clock is off by minutes waits what the service asks, no more and no less.
import { describe, expect, it } from 'vitest';
import { PayoutClient } from '../../src/client/client.ts';
import { INITIATE_BODY, PAYOUT, json, scriptedFetch } from './fake-fetch.ts';

let n = 0;
function client(skewMs: number) {
  const serviceNow = Date.now() + skewMs;
  const f = scriptedFetch([
    json(
      429,
      { statusCode: 429, message: 'Too Many Requests' },
      { date: new Date(serviceNow).toUTCString(), 'retry-after': new Date(serviceNow + 2000).toUTCString() },
    ),
    json(201, PAYOUT),
  ]);
  const delays: number[] = [];
  const c = new PayoutClient({
    baseUrl: 'https://gateway.staging.example.test',
    apiKey: `sk_sandbox_retry_after_clock_${n++}`,
    requestsPerSecond: 1000,
    fetch: f.fetch,
    sleep: async (ms) => void delays.push(ms),
    random: () => 0.5,
  });
  return { c, delays, seen: f.seen };
}

describe('Retry-After as a date, read on the clock of the answer', () => {
  it.each([
    ['the service 10 minutes ahead of this host', 10 * 60_000],
    ['the service 10 minutes behind this host', -10 * 60_000],
  ])('%s: waits the 2 s asked, then sends again', async (_what, skewMs) => {
    const { c, delays, seen } = client(skewMs);
    const r = await c.initiate(INITIATE_BODY, { idempotencyKey: `k-clock-${n}` });
    expect(r.payout.id).toBe(PAYOUT.id);
    expect(seen).toHaveLength(2);
    expect(delays).toEqual([2000]);
  });
});

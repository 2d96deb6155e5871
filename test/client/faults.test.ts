// The acceptance run: 200 payouts through the client, 20 in flight, with the sandbox's
// faults on, at the spec's 5 requests per rolling second. Exactly 200 payouts must exist at the
// end, and the sandbox's own request log must never show more than 5 requests of the key in any
// rolling second. Slow by nature (>= 40 s at 5/s): the only such test.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pLimit from 'p-limit';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/index.ts';
import { PayoutClient } from '../../src/client/client.ts';
import { PayoutApiError } from '../../src/client/errors.ts';
import { Dec, toApi } from '../../src/money.ts';

const KEY = 'sk_sandbox_acme_primary';
const PAYOUTS = 200;
let sb: LocalSandbox;

beforeAll(async () => {
  sb = await startSandbox({
    rateLimitPerSecond: 5,
    faults: { latencyMs: [50, 300], errorAfterCreate: 0.1, dropAfterCreate: 0.05, spurious429: 0.05 },
  });
});
afterAll(async () => {
  await sb?.close();
});

/** Most requests of one key inside any rolling 1000 ms, by the server's arrival times. */
function maxPerRollingSecond(times: number[]): number {
  const t = [...times].sort((a, b) => a - b);
  let max = 0;
  for (let i = 0, j = 0; i < t.length; i++) {
    while (t[i]! - t[j]! >= 1000) j++;
    max = Math.max(max, i - j + 1);
  }
  return max;
}

describe('200 payouts under faults', () => {
  it('creates exactly 200 payouts and never exceeds 5 requests per rolling second', async () => {
    // The sandbox runs in this worker's event loop and dates an arrival when the loop gets to it, so
    // a stall (GC, another test file on the same 2 cores) bunches arrivals: the 50 ms margin of a
    // remote link, not the 25 ms a loopback link gets by default.
    const client = new PayoutClient({ baseUrl: sb.url, apiKey: KEY, concurrency: 20, timeoutMs: 10_000, safetyMarginMs: 50 });
    const inFlight = pLimit(20);
    let unknownOutcomes = 0;
    const ids = await Promise.all(
      Array.from({ length: PAYOUTS }, (_, i) =>
        inFlight(async () => {
          // What the engine will do: serialise once, and on an unknown outcome resend the same key and bytes.
          const body = JSON.stringify({
            sourceAmount: toApi(new Dec(10).plus(new Dec(i).div(100))),
            sourceCurrency: 'USD',
            destinationCurrency: 'EUR',
            destinationCountryCode: 'DEU',
            method: 'SEPA',
            beneficiary: { accountName: `Beneficiary ${i}`, accountCurrency: 'EUR', iban: 'DE89370400440532013000' },
            narration: `Batch row ${i}`,
          });
          for (;;) {
            try {
              return (await client.initiate(body, { idempotencyKey: `faults-test-row-${i}` })).payout.id;
            } catch (e) {
              if (e instanceof PayoutApiError && e.outcome === 'unknown') {
                unknownOutcomes++;
                continue;
              }
              throw e;
            }
          }
        }),
      ),
    );
    expect(new Set(ids).size).toBe(PAYOUTS);

    const log = sb.requestLog().filter((e) => e.apiKey === KEY);
    const initiates = log.filter((e) => e.route === 'initiate');
    // The faults really happened: answers after creation were lost and resent.
    expect(initiates.filter((e) => e.status >= 500 || e.status === 0).length).toBeGreaterThan(5);
    expect(initiates.filter((e) => e.status === 429).length).toBeGreaterThan(0);
    expect(initiates.length).toBeGreaterThan(PAYOUTS);

    sb.setFaults({});
    const listed = new Set<string>();
    for await (const p of client.allPages((q) => client.listPayouts(q))) listed.add(p.id);
    expect(listed.size).toBe(PAYOUTS);
    expect([...listed].sort()).toEqual([...new Set(ids)].sort());

    const all = sb.requestLog().filter((e) => e.apiKey === KEY);
    expect(maxPerRollingSecond(all.map((e) => e.at))).toBeLessThanOrEqual(5);
    console.info(
      `faults run: ${all.length} requests for ${PAYOUTS} payouts, ${unknownOutcomes} calls ended unknown and were resent, random seed ${sb.randomSeed}`,
    );
  }, 150_000);
});

// The acceptance run: 200 payouts through the client, 20 in flight, with the sandbox's
// faults on (latency, errors and dropped answers after creation, spurious 429s). Exactly 200
// payouts must exist at the end, each found by listing.
// The rate promise (never more than 5 starts per rolling second) is not measured here: counted at
// the server's arrival times it depends on the machine's load. It is tested where it is decided,
// the client's own record of its starts under a fake clock (test/client/throttle.test.ts), and the
// sandbox's refusal of the 6th request in a window on a clock of its own (test/sandbox/limits.test.ts);
// test/bench/throughput.ts measures the real thing. So this run has the sandbox's limit off and the
// client's rate high: it takes seconds, not the >= 40 s of 5/s. A fixed random seed makes the faults
// drawn the same from one run to the next.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pLimit from 'p-limit';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { PayoutClient } from '../../src/client/client.ts';
import { PayoutApiError } from '../../src/client/errors.ts';
import { allPayoutIds } from './fake-fetch.ts';
import { Dec, toApi } from '../../src/money.ts';

const KEY = 'sk_sandbox_acme_primary';
const PAYOUTS = 200;
let sb: LocalSandbox;

beforeAll(async () => {
  sb = await startSandbox({
    rateLimitPerSecond: null,
    randomSeed: 18,
    faults: { latencyMs: [50, 300], errorAfterCreate: 0.1, dropAfterCreate: 0.05, spurious429: 0.05 },
  });
});
afterAll(async () => {
  await sb?.close();
});

describe('200 payouts under faults', () => {
  it('creates exactly 200 payouts, none twice, whatever answers were lost', async () => {
    const client = new PayoutClient({ baseUrl: sb.url, apiKey: KEY, concurrency: 20, timeoutMs: 10_000, requestsPerSecond: 1000 });
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
    const listed = new Set(await allPayoutIds(client));
    expect(listed.size).toBe(PAYOUTS);
    expect([...listed].sort()).toEqual([...new Set(ids)].sort());

    const all = sb.requestLog().filter((e) => e.apiKey === KEY);
    console.info(
      `faults run: ${all.length} requests for ${PAYOUTS} payouts, ${unknownOutcomes} calls ended unknown and were resent, random seed ${sb.randomSeed}`,
    );
  });
});

// Preflight against the sandbox over HTTP: the reads of a batch with corridors that are enabled,
// disabled (one pair into two countries) and prohibited, asked together and each at most once.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PayoutClient } from '../../src/client/client.ts';
import { loadBatch } from '../../src/engine/batch.ts';
import { preflight } from '../../src/engine/preflight.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/index.ts';
import type { RouteName } from '../../src/sandbox/contract.ts';
import type { PayoutRow } from '../../src/validation/schemas.ts';
import { HEADER, KEY, workDir } from './helpers.ts';

const LATENCY = 400;
let sb: LocalSandbox;
let rows: { rowNumber: number; payout: PayoutRow }[];

/** A USD SWIFT row into `currency` in `country` (the sample's Indian SWIFT row, moved). */
const swiftRow = (ref: string, currency: string, country: string, amount: string) => {
  const cells: Record<string, string> = {
    reference: ref,
    sourceAmount: amount,
    sourceCurrency: 'USD',
    destinationCurrency: currency,
    destinationCountryCode: country,
    method: 'SWIFT',
    accountName: 'Priya Sharma',
    accountCurrency: currency,
    accountNumber: '123456789012',
    swiftCode: 'SBININBB',
    bankName: 'State Bank',
    beneficiaryCountry: country,
    city: 'Town',
    narration: 'Invoice',
    withdrawal: 'true',
  };
  return HEADER.map((h) => cells[h] ?? '').join(',');
};

beforeAll(async () => {
  // Both sides at 50/s so that the rate limit never spaces the reads: what is measured is whether
  // they wait for each other's latency.
  sb = await startSandbox({ rateLimitPerSecond: 50, monthlyQuota: null, faults: { latencyMs: [LATENCY, LATENCY] } });
  const dir = await workDir('pb-preflight-');
  const file = join(dir, 'corridors.csv');
  await writeFile(
    file,
    [
      HEADER.join(','),
      swiftRow('P-1', 'NGN', 'NGA', '101.00'), // enabled pair USD/NGN
      swiftRow('P-2', 'GHS', 'GHA', '102.00'), // pair USD/GHS disabled
      swiftRow('P-3', 'XOF', 'SEN', '103.00'), // pair USD/XOF disabled ...
      swiftRow('P-4', 'XOF', 'CIV', '104.00'), // ... into a second country
      swiftRow('P-5', 'USD', 'IRN', '105.00'), // a prohibited destination
    ].join('\n') + '\n',
  );
  const batch = await loadBatch(file);
  rows = batch.rows.flatMap((r) => (r.payout ? [{ rowNumber: r.rowNumber, payout: r.payout }] : []));
  expect(batch.rows.map((r) => r.problems.filter((p) => p.severity === 'error'))).toEqual([[], [], [], [], []]);
});
afterAll(() => sb?.close());

const client = () => new PayoutClient({ baseUrl: sb.url, apiKey: KEY, requestsPerSecond: 50, concurrency: 20 });
const routes = (from: number) =>
  sb
    .requestLog()
    .slice(from)
    .filter((r) => r.apiKey === KEY);
const count = (log: { route: RouteName }[], route: RouteName) => log.filter((r) => r.route === route).length;

describe('preflight', () => {
  it('asks the methods of every corridor at once, skips the prohibited one, and finds the pairs to enable with one pairs read', async () => {
    const from = sb.requestLog().length;
    const r = await preflight(client(), rows);
    const log = routes(from);
    expect(r.requests).toBe(log.length);
    expect(count(log, 'wallets')).toBe(1);
    expect(count(log, 'countries')).toBe(1);
    expect(count(log, 'methods')).toBe(4); // NGA, GHA, SEN, CIV: none for IRN
    expect(count(log, 'pairs')).toBe(1); // three corridors not enabled, one read of the pairs
    expect(count(log, 'togglePair')).toBe(0);
    const methods = log.filter((x) => x.route === 'methods').map((x) => x.at);
    // Sent together: the last left before the first could have been answered.
    expect(Math.max(...methods) - Math.min(...methods)).toBeLessThan(LATENCY);

    const issue = (ref: string) => r.rowIssues.get(rows.find((x) => x.payout.reference === ref)!.rowNumber);
    expect(issue('P-1')).toBeUndefined();
    expect(issue('P-2')).toMatchObject({ status: 'NOT_SENT', code: 'CORRIDOR_NOT_ENABLED' });
    expect(issue('P-3')).toMatchObject({ status: 'NOT_SENT', code: 'CORRIDOR_NOT_ENABLED' });
    expect(issue('P-4')).toMatchObject({ status: 'NOT_SENT', code: 'CORRIDOR_NOT_ENABLED' });
    expect(issue('P-5')).toMatchObject({ status: 'INVALID', code: 'PROHIBITED_DESTINATION' });
    const xof = r.corridors.filter((c) => c.destinationCurrency === 'XOF');
    expect(xof).toHaveLength(2);
    expect(xof[0]!.pairId).toBeDefined();
    expect(xof[1]!.pairId).toBe(xof[0]!.pairId);
    expect(r.estimatedFees.has(rows[0]!.rowNumber)).toBe(true);
  });

  it('--enable-pairs turns on each disabled pair once, even when two corridors need it at the same time', async () => {
    const from = sb.requestLog().length;
    const r = await preflight(client(), rows, { enablePairs: true });
    const log = routes(from);
    expect(r.requests).toBe(log.length);
    expect(count(log, 'togglePair')).toBe(2); // USD/GHS and USD/XOF
    expect(count(log, 'methods')).toBe(4 + 3); // each disabled corridor asked again once its pair is on
    expect([...r.rowIssues.values()].map((i) => i.code)).toEqual(['PROHIBITED_DESTINATION']);
    expect(
      r.corridors
        .filter((c) => c.enabledNow)
        .map((c) => c.destinationCountryCode)
        .sort(),
    ).toEqual(['CIV', 'GHA', 'SEN']);
  });

  it('asks nothing when there is nothing to send', async () => {
    const from = sb.requestLog().length;
    expect((await preflight(client(), [])).requests).toBe(0);
    expect(routes(from)).toHaveLength(0);
  });
});

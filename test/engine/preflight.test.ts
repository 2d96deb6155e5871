// Preflight against the sandbox over HTTP: the reads of a batch with corridors that are enabled,
// disabled (one pair into two countries) and prohibited, asked together and each at most once; a
// methods route that asks for more fields than the spec, or names none.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PayoutClient } from '../../src/client/client.ts';
import { loadBatch } from '../../src/engine/prepare.ts';
import { listedPairs, preflight } from '../../src/engine/preflight.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import type { RouteName } from '../../src/sandbox/contract.ts';
import type { PayoutRow } from '../../src/validation/row-schemas.ts';
import { HEADER, KEY, workDir } from './helpers.ts';

let sb: LocalSandbox;
let rows: PayoutRow[];

/** A USD SWIFT row into `currency` in `country` (the sample's Indian SWIFT row, moved). */
const swiftRow = (ref: string, currency: string, country: string, amount: string, beneficiaryCountry = country) => {
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
    beneficiaryCountry,
    city: 'Town',
    narration: 'Invoice',
    withdrawal: 'true',
  };
  return HEADER.map((h) => cells[h] ?? '').join(',');
};

beforeAll(async () => {
  // The limits off: whether reads are asked together is seen by the client's fetch (gatedFetch).
  sb = await startSandbox({ rateLimitPerSecond: null, monthlyQuota: null });
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
      swiftRow('P-6', 'NGN', 'NGA', '106.00', 'IRN'), // an enabled corridor, the beneficiary's country prohibited
    ].join('\n') + '\n',
  );
  const batch = await loadBatch(file);
  rows = batch.rows.flatMap((r) => (r.payout ? [r.payout] : []));
  expect(batch.rows.map((r) => r.problems.filter((p) => p.severity === 'error'))).toEqual([[], [], [], [], [], []]);
});
afterAll(() => sb?.close());

/**
 * A fetch that holds every `GET .../methods` until `n` of them have been started, and records the
 * most that were waiting for an answer at once: n when preflight asks them together, 1 when it waits
 * for each answer before the next question. (If fewer than n are ever started together, the gate
 * opens after 5 s so that the test fails on the count instead of hanging.)
 */
function gatedMethods(n: number) {
  let started = 0;
  let waiting = 0;
  let most = 0;
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  const fallback = setTimeout(() => open(), 5000);
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (!url.pathname.endsWith('/methods')) return fetch(input, init);
    started++;
    most = Math.max(most, ++waiting);
    if (started >= n) {
      clearTimeout(fallback);
      open();
    }
    try {
      await opened;
      return await fetch(input, init);
    } finally {
      waiting--;
    }
  }) as typeof fetch;
  return { fetch: fetchImpl, most: () => most, done: () => clearTimeout(fallback) };
}

const client = (fetchImpl?: typeof fetch) =>
  new PayoutClient({ baseUrl: sb.url, apiKey: KEY, requestsPerSecond: 1000, concurrency: 20, ...(fetchImpl ? { fetch: fetchImpl } : {}) });
const routes = (from: number) =>
  sb
    .requestLog()
    .slice(from)
    .filter((r) => r.apiKey === KEY);
const count = (log: { route: RouteName }[], route: RouteName) => log.filter((r) => r.route === route).length;

describe('preflight', () => {
  it('asks the methods of every corridor at once, skips the prohibited one, and finds the pairs to enable with one pairs read', async () => {
    const from = sb.requestLog().length;
    const gate = gatedMethods(4);
    const r = await preflight(client(gate.fetch), rows);
    gate.done();
    const log = routes(from);
    expect(r.requests).toBe(log.length);
    expect(count(log, 'wallets')).toBe(1);
    expect(count(log, 'countries')).toBe(1);
    expect(count(log, 'methods')).toBe(4); // NGA, GHA, SEN, CIV: none for IRN
    expect(count(log, 'pairs')).toBe(1); // three corridors not enabled, one read of the pairs
    expect(count(log, 'togglePair')).toBe(0);
    // Asked together: all four were started before any was answered.
    expect(gate.most()).toBe(4);

    const issue = (ref: string) => r.rowIssues.get(rows.find((x) => x.reference === ref)!.rowNumber);
    expect(issue('P-1')).toBeUndefined();
    expect(issue('P-2')).toMatchObject({ status: 'NOT_SENT', code: 'CORRIDOR_NOT_ENABLED' });
    expect(issue('P-3')).toMatchObject({ status: 'NOT_SENT', code: 'CORRIDOR_NOT_ENABLED' });
    expect(issue('P-4')).toMatchObject({ status: 'NOT_SENT', code: 'CORRIDOR_NOT_ENABLED' });
    expect(issue('P-5')).toMatchObject({ status: 'INVALID', code: 'PROHIBITED_DESTINATION' });
    expect(issue('P-6')).toMatchObject({
      status: 'INVALID',
      code: 'PROHIBITED_DESTINATION',
      message: expect.stringContaining('beneficiaryCountry'),
    });
    const xof = r.corridors.filter((c) => c.destinationCurrency === 'XOF');
    expect(xof).toHaveLength(2);
    expect(xof[0]!.pairId).toBeDefined();
    expect(xof[1]!.pairId).toBe(xof[0]!.pairId);
    expect(r.estimatedFees.has(rows[0]!.rowNumber)).toBe(true);
  });

  it('--enable-pairs turns on each disabled pair once, even when two corridors need it at the same time', async () => {
    const from = sb.requestLog().length;
    // The first four methods reads held until all are asked: both XOF corridors learn together
    // that their pair is off.
    const gate = gatedMethods(4);
    const r = await preflight(client(gate.fetch), rows, { enablePairs: true });
    gate.done();
    expect(gate.most()).toBe(4);
    const log = routes(from);
    expect(r.requests).toBe(log.length);
    expect(count(log, 'togglePair')).toBe(2); // USD/GHS and USD/XOF
    expect(count(log, 'methods')).toBe(4 + 3); // each disabled corridor asked again once its pair is on
    expect([...r.rowIssues.values()].map((i) => i.code)).toEqual(['PROHIBITED_DESTINATION', 'PROHIBITED_DESTINATION']);
    expect(
      r.corridors
        .filter((c) => c.enabledNow)
        .map((c) => c.destinationCountryCode)
        .sort(),
    ).toEqual(['CIV', 'GHA', 'SEN']);
  });

  it('warns about trading hours in one line for the rule, its rows counted, every closed country listed (issues 29, 31)', async () => {
    const r = await preflight(client(), rows, { now: new Date('2026-11-27T03:00:00Z') });
    const hours = r.warnings.filter((w) => w.includes('trading hours'));
    expect(hours).toEqual([
      "outside trading hours now: 4 rows (rows 2, 3, 4 and 1 more), whose payouts wait for the next window: Nigeria (NGA) 08:00:00-17:00:00 UTC+1; Ghana (GHA) 08:00:00-17:00:00 UTC+0; Senegal (SEN) 08:00:00-16:00:00 UTC+0; Cote d'Ivoire (CIV) 08:00:00-16:00:00 UTC+0",
    ]);
  });

  it('asks nothing when there is nothing to send', async () => {
    const from = sb.requestLog().length;
    expect((await preflight(client(), [])).requests).toBe(0);
    expect(routes(from)).toHaveLength(0);
  });
});

describe('preflight at an account with no pair enabled', () => {
  it('reports the row whose pair is off, as the service answers GET pairs "400 when no pair is enabled" (spec §4.9)', async () => {
    // The variant reading ignores ?status=all, as a service that does not know it would.
    const variant = await startSandbox({ rateLimitPerSecond: null, monthlyQuota: null, shapes: 'variant' });
    try {
      const globex = new PayoutClient({ baseUrl: variant.url, apiKey: 'sk_sandbox_globex', requestsPerSecond: 1000 });
      for (const p of (await globex.listPairs()).data) await globex.togglePair(p.currencyPairId!, { enabled: false });
      const dir = await workDir('pb-preflight-');
      const file = join(dir, 'gbp.csv');
      await writeFile(file, `${HEADER.join(',')}\n${swiftRow('G-1', 'GBP', 'GBR', '100.00')}\n`);
      const [row] = (await loadBatch(file)).rows.flatMap((r) => (r.payout ? [r.payout] : []));
      const r = await preflight(globex, [row!], { enablePairs: true });
      expect(r.rowIssues.get(row!.rowNumber)).toMatchObject({ status: 'NOT_SENT', code: 'CORRIDOR_NOT_ENABLED' });
    } finally {
      await variant.close();
    }
  });

  it.each([
    ['asks for more than the spec: the row the method cannot take is INVALID, named, and not quoted', 'more'],
    ['gives no requiredFields: offline validation alone decides, said once', 'none'],
  ])("the methods route's SWIFT %s", async (_what, change) => {
    /** The SWIFT method of every methods answer, asking for a postCode too, or without its requiredFields. */
    const rewrite = (v: unknown): void => {
      if (Array.isArray(v)) return v.forEach(rewrite);
      if (!v || typeof v !== 'object') return;
      const o = v as Record<string, unknown>;
      if ((o.code ?? o.method) === 'SWIFT' && Array.isArray(o.requiredFields)) {
        if (change === 'more') o.requiredFields.push({ name: 'postCode', type: 'string' });
        else delete o.requiredFields;
      }
      Object.values(o).forEach(rewrite);
    };
    const rewriting = (async (input: string | URL | Request, init?: RequestInit) => {
      const r = await fetch(input, init);
      if (!new URL(input instanceof Request ? input.url : String(input)).pathname.endsWith('/methods')) return r;
      const body = (await r.json()) as unknown;
      rewrite(body);
      return new Response(JSON.stringify(body), { status: r.status, headers: r.headers });
    }) as typeof fetch;
    const p1 = rows.filter((x) => x.reference === 'P-1'); // (no postCode: the spec lists it as optional for SWIFT)
    const r = await preflight(client(rewriting), p1);
    const issue = r.rowIssues.get(p1[0]!.rowNumber);
    if (change === 'more') {
      expect(issue).toEqual({
        status: 'INVALID',
        code: 'MISSING_REQUIRED_FIELDS',
        message: 'the methods route requires postCode for SWIFT',
      });
      expect(r.quoteGroups.size).toBe(0);
    } else {
      expect(issue).toBeUndefined();
      expect(
        r.warnings.filter((w) => w.includes('requiredFields for SWIFT (USD -> NGN) could not be read: offline validation alone')),
      ).toHaveLength(1);
    }
  });

  it("prices a swap from the enabled pairs when a service refuses ?status=all, the strict sandbox's addition", async () => {
    // (the client asks with a string URL)
    const refusing = (async (input: string, init?: RequestInit) => {
      if (!input.endsWith('/pairs?status=all')) return fetch(input, init);
      const body = { statusCode: 400, message: 'property status should not exist', error: 'VALIDATION_ERROR' };
      return new Response(JSON.stringify(body), { status: 400, headers: { 'content-type': 'application/json' } });
    }) as typeof fetch;
    // Globex: USD/EUR enabled, USD/GBP not
    const globex = new PayoutClient({ baseUrl: sb.url, apiKey: 'sk_sandbox_globex', requestsPerSecond: 1000, fetch: refusing });
    const file = join(await workDir('pb-preflight-'), 'gbp.csv');
    await writeFile(file, `${HEADER.join(',')}\n${swiftRow('G-2', 'GBP', 'GBR', '100.00')}\n`);
    const [row] = (await loadBatch(file)).rows.flatMap((r) => (r.payout ? [r.payout] : []));
    const r = await preflight(globex, [row!]);
    expect(r.rowIssues.get(row!.rowNumber)).toMatchObject({ status: 'NOT_SENT', code: 'CORRIDOR_NOT_ENABLED' });
    const pairs = (await listedPairs(globex)) ?? [];
    expect(pairs.map((p) => `${p.baseCurrency}/${p.quoteCurrency}`)).toEqual(['USD/EUR']);
  });
});

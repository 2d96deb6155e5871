// The send step of a swap (issue 28; spec §4.7 swap, §4.8 swaps list, §4.9 pairs) against the
// sandbox over real HTTP: one swap per batch and currency whatever happens (a kill after the
// journalled `initiating`, an unknown outcome, the rate moving), and the refusals that stop a
// currency with nothing of it sent. Each test is a business of its own (its own key and wallets):
// a short USD wallet, a full EUR wallet, the USD/EUR pair enabled.
import { EventEmitter } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyFingerprint } from '../../src/client/api-key.ts';
import { PayoutClient } from '../../src/client/client.ts';
import { batchIdentity, idempotencyKey } from '../../src/engine/identity.ts';
import { FileLedger } from '../../src/ledger/file.ts';
import { openSession, recordInitiating, type BatchSession } from '../../src/engine/session.ts';
import { fundBySwaps, swapBody, type SwapFunding } from '../../src/engine/swap-send.ts';
import { swapReference, type SwapProposal } from '../../src/engine/swap.ts';
import type { SwapEvent } from '../../src/journal/lines.ts';
import { Dec } from '../../src/money.ts';
import { INVALID_PAYOUT_AMOUNT_MESSAGE } from '../../src/spec/codes.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { connectionTo, ROOT, startSb, unattended, until, workDir } from '../ops/helpers.ts';
import { runBatch, type EngineEvents, type RunSettings } from '../../src/engine/pipeline.ts';
import { exitReasonText } from '../../src/cli/render.ts';
import { cleanEnv, generateCsv, ledgerJournals, runCli, runMain, type CliRun } from './helpers.ts';
import type { ChildProcess } from 'node:child_process';

const RATE = '0.9215'; // USD/EUR: EUR per USD (the default seed's)
const BUSINESSES = 26;
const keyOf = (n: number) => `sk_sandbox_swap_${n}`;

let sb: LocalSandbox;
beforeAll(async () => {
  const seed = JSON.parse(readFileSync(join(ROOT, 'src/sandbox/default-seed.json'), 'utf8')) as { businesses: unknown[] };
  seed.businesses = Array.from({ length: BUSINESSES }, (_, i) => ({
    name: `Swap ${i + 1}`,
    keys: [keyOf(i + 1)],
    wallets: [
      { currency: 'USD', balance: '20.00' },
      { currency: 'EUR', balance: i === 6 ? '5.00' : '10000.00' },
      { currency: 'GBP', balance: '10000.00' },
      // (businesses 19 to 21: a second short wallet, funded from EUR too)
      ...(i >= 18 ? [{ currency: 'HKD', balance: '20.00' }] : []),
    ],
    pairs: [
      { baseCurrency: 'USD', quoteCurrency: 'EUR', rate: RATE, enabled: true },
      ...(i >= 18 ? [{ baseCurrency: 'EUR', quoteCurrency: 'HKD', rate: '8.48', enabled: true }] : []),
    ],
  }));
  sb = await startSb({ seed, monthlyQuota: null });
});
afterAll(() => sb.close());

interface Fixture {
  key: string;
  client: PayoutClient;
  session: BatchSession;
  proposal: SwapProposal;
  /** The routes this business's requests went to, in order. */
  routes: () => string[];
  /** The swaps of this business at the sandbox with the proposal's reference. */
  swapsAtSandbox: () => Promise<{ id: string; status: string; destinationAmount: number }[]>;
  fund: (session?: BatchSession) => Promise<SwapFunding>;
}

/** Business n, a batch of its own, and the proposal that funds 100.00 USD from EUR at the seed's rate. */
async function fixture(n: number, o: { retries?: boolean } = {}): Promise<Fixture> {
  const key = keyOf(n);
  const client = new PayoutClient({
    baseUrl: sb.url,
    apiKey: key,
    requestsPerSecond: 500,
    retry: { maxAttempts: o.retries === false ? 1 : 2, baseDelayMs: 5, maxDelayMs: 20 },
  });
  const wallets = new Map((await client.listWallets()).data.map((w) => [w.currency, w.walletId]));
  const dir = await workDir('pb-swap-send-');
  const identity = batchIdentity(String(n).repeat(64).slice(0, 64));
  const session = await openSession({
    identity,
    env: 'custom',
    file: join(dir, 'b.csv'),
    ledger: new FileLedger('test', dir),
    command: 'run',
  });
  // 100.00 USD: the shortfall 99.00 plus a 1% margin, at the seed's rate (EUR is the pair's quote: ÷ rate)
  const swapAmount = new Dec('100.00').times(RATE).toDecimalPlaces(2, Dec.ROUND_UP);
  const proposal: SwapProposal = {
    reference: swapReference([identity.batchId], 'USD'),
    currency: 'USD',
    fromCurrency: 'EUR',
    sourceWalletId: wallets.get('EUR')!,
    destinationWalletId: wallets.get('USD')!,
    swapAmount: swapAmount.toFixed(2),
    amountToBeSent: swapAmount.div(RATE).toDecimalPlaces(2).toFixed(2),
    pair: { baseCurrency: 'USD', quoteCurrency: 'EUR', rate: RATE },
    shortfall: '99.00',
    margin: '1.00',
    balances: [],
  };
  const start = sb.requestLog().length;
  return {
    key,
    client,
    session,
    proposal,
    routes: () =>
      sb
        .requestLog()
        .slice(start)
        .filter((r) => r.apiKey === key)
        .map((r) => r.route),
    swapsAtSandbox: async () =>
      (
        (await client.listSwaps({ limit: 100 })).data as unknown as {
          payoutRef: string;
          id: string;
          status: string;
          destinationAmount: number;
        }[]
      ).filter((s) => s.payoutRef === proposal.reference),
    fund: async (s = session) =>
      (await fundBySwaps({ client, session: s, need: () => new Dec('119.00'), rateTolerance: new Dec('0.01') }, [proposal])).get('USD')!,
  };
}

/** The batch's swap lines in its journal, in order. */
async function swapLines(s: BatchSession): Promise<SwapEvent[]> {
  const lines: SwapEvent[] = [];
  await s.ledger.read(s.header.batchId, (e) => void (e.t === 'swap' && lines.push(e as SwapEvent)));
  return lines;
}
const phases = async (s: BatchSession) => (await swapLines(s)).map((l) => `${l.phase}${'attempt' in l ? `:${l.attempt}` : ''}`);
const count = (routes: string[], route: string) => routes.filter((r) => r === route).length;

describe('the swap is sent once', () => {
  it('finds none, prices at the live rate, journals `initiating` before POST swap, sees the credit; a rerun sends nothing', async () => {
    const f = await fixture(1);
    const funded = await f.fund();
    expect(funded).toMatchObject({ currency: 'USD', funded: true, swap: { status: 'PROCESSING', destinationAmount: '100.00' } });
    expect(f.routes()).toEqual(['listSwaps', 'pairs', 'swap', 'wallets']); // the 4 requests of a swap
    expect(await phases(f.session)).toEqual(['initiating:1', 'created:1']);
    const [initiating] = await swapLines(f.session);
    expect(initiating).toMatchObject({
      key: idempotencyKey(f.proposal.reference, 1, 'swap'),
      body: swapBody(f.proposal, new Dec('100.00')),
    });
    // resumed (a new session on the same journal): the journalled swap; only the credit is read
    f.session.writer.close();
    const again = await f.fund(await openSession({ ...sessionArgs(f.session) }));
    expect(again.funded).toBe(true);
    expect(f.routes()).toEqual(['listSwaps', 'pairs', 'swap', 'wallets', 'wallets']);
    expect(await f.swapsAtSandbox()).toHaveLength(1);
  });

  it('killed after `initiating` was journalled: the swap that left is found in the list; the one that did not is sent with the same key and bytes', async () => {
    const f = await fixture(2);
    const body = swapBody(f.proposal, new Dec(f.proposal.amountToBeSent));
    const line = { t: 'swap' as const, currency: 'USD', reference: f.proposal.reference, at: new Date().toISOString(), body };
    // the request never left: resent as journalled
    await recordInitiating(f.session, {
      ...line,
      phase: 'initiating',
      attempt: 1,
      key: idempotencyKey(f.proposal.reference, 1, 'swap'),
    });
    // (resumed: a new process opens the journal)
    expect((await f.fund(await reopened(f.session))).funded).toBe(true);
    expect(f.routes()).toEqual(['listSwaps', 'swap', 'wallets']);
    expect(sb.requestLog().filter((r) => r.apiKey === f.key && r.route === 'swap')).toHaveLength(1);

    // another batch of the same business: the request left and its answer was lost (the kill)
    const g = await fixture(3);
    const gBody = swapBody(g.proposal, new Dec(g.proposal.amountToBeSent));
    const gKey = idempotencyKey(g.proposal.reference, 1, 'swap');
    await recordInitiating(g.session, {
      ...line,
      reference: g.proposal.reference,
      body: gBody,
      phase: 'initiating',
      attempt: 1,
      key: gKey,
    });
    await g.client.swap(gBody, { idempotencyKey: gKey });
    const resumed = await reopened(g.session);
    const funded = await g.fund(resumed);
    expect(funded.funded).toBe(true);
    expect(count(g.routes(), 'swap')).toBe(1); // the one before the "kill": none by the send step
    expect(await phases(resumed)).toEqual(['initiating:1', 'created:1']);
    expect(await g.swapsAtSandbox()).toHaveLength(1);
  });

  it('an unknown outcome (5xx after the swap was made; the client does not retry) is settled through the list: one swap', async () => {
    const f = await fixture(4, { retries: false });
    sb.setFaults({ errorAfterCreate: 1, routes: ['swap'] });
    try {
      expect((await f.fund()).funded).toBe(true);
    } finally {
      sb.setFaults({});
    }
    expect(await phases(f.session)).toEqual(['initiating:1', 'unknown:1', 'created:1']);
    expect(
      new Set(
        sb
          .requestLog()
          .filter((r) => r.apiKey === f.key && r.route === 'swap')
          .map((r) => r.status),
      ),
    ).not.toContain(201);
    expect(await f.swapsAtSandbox()).toHaveLength(1);
  });

  it('the rate moves between the pairs read and the swap: one recomputation under a new key, one swap; a second move stops the currency', async () => {
    const f = await fixture(5);
    sb.setFaults({ rateMoveAfterPairsRead: { pct: 0.5, times: 1 } });
    const funded = await f.fund();
    expect(funded.funded).toBe(true);
    expect(await phases(f.session)).toEqual(['initiating:1', 'stale-rate:1', 'initiating:2', 'created:2']);
    expect(f.routes()).toEqual(['listSwaps', 'pairs', 'swap', 'listSwaps', 'pairs', 'swap', 'wallets']);
    const swaps = await f.swapsAtSandbox();
    expect(swaps).toHaveLength(1);
    // the approved swapAmount at the moved rate (0.9215 × 1.005)
    expect(Number(swaps[0]!.destinationAmount)).toBe(
      Number(new Dec(f.proposal.swapAmount).div(new Dec(RATE).times('1.005')).toDecimalPlaces(2).toFixed()),
    );

    const g = await fixture(6);
    sb.setFaults({ rateMoveAfterPairsRead: { pct: 0.2, times: 2 } });
    try {
      expect(await g.fund()).toMatchObject({ funded: false, halt: false, error: { code: 'SWAP_RATE_MOVED' } });
    } finally {
      sb.setFaults({});
    }
    expect(await phases(g.session)).toEqual(['initiating:1', 'stale-rate:1', 'initiating:2', 'stale-rate:2']);
    expect(await g.swapsAtSandbox()).toHaveLength(0);
  });
});

describe('another batch of the account spends from the short wallet meanwhile', () => {
  it('its swap made, the wallet short of its rows all the same: no row of it sent, the stop says why and what to do', async () => {
    const f = await fixture(26);
    // (after the plan read 20.00 USD: another batch's swap takes 15.00 of it into EUR)
    const wallets = new Map((await f.client.listWallets()).data.map((w) => [w.currency, w.walletId]));
    const other = { sourceWalletId: wallets.get('USD'), destinationWalletId: wallets.get('EUR'), swapAmount: 15 };
    const body = { ...other, swapCurrency: 'USD', amountToBeSent: 13.82, currencyToBeSent: 'EUR', reference: 'PBS2-OTHER-EUR' };
    await f.client.swap(JSON.stringify(body), { idempotencyKey: 'other-batch-swap' });
    const r = await f.fund();
    expect(r).toMatchObject({ funded: false, halt: true, error: { code: 'SWAP_CREDIT_NOT_SHOWN' } });
    expect(r.funded || r.error.message).toMatch(/holds 105\.00 after swap \S+ \(PROCESSING\), its rows need 119\.00: another batch/);
    expect(r.funded || r.error.message).toMatch(/top it up or send part with --allow-partial/);
    expect(await f.swapsAtSandbox()).toHaveLength(1);
  });
});

describe('a swap journalled by another API key of the business', () => {
  it('is not resent under this one (the service may keep its key per API key): no swap, its currency stopped naming that key', async () => {
    const f = await fixture(25);
    const other = keyFingerprint(`${f.key}_rotated`);
    await recordInitiating(f.session, {
      t: 'swap',
      currency: 'USD',
      reference: f.proposal.reference,
      phase: 'initiating',
      attempt: 1,
      key: idempotencyKey(f.proposal.reference, 1, 'swap'),
      body: swapBody(f.proposal, new Dec(f.proposal.amountToBeSent)),
      apiKeyFingerprint: other,
      at: new Date().toISOString(),
    });
    const funded = await f.fund(await reopened(f.session));
    expect(funded).toMatchObject({ funded: false, halt: true, error: { code: 'SWAP_OUTCOME_UNKNOWN' } });
    expect(!funded.funded && funded.error.message).toContain(other);
    expect(count(f.routes(), 'swap')).toBe(0);
    expect(await f.swapsAtSandbox()).toHaveLength(0);
  });
});

describe('a refused swap stops its currency, nothing of it sent', () => {
  it('the source wallet cannot pay (INSUFFICIENT_FUNDS): rejected, the run refused', async () => {
    const f = await fixture(7); // its EUR wallet holds 5.00
    const r = await f.fund();
    expect(r).toMatchObject({ funded: false, halt: false, error: { code: 'SWAP_REFUSED' } });
    expect(r.funded || r.error.message).toMatch(/INSUFFICIENT_FUNDS/);
    expect(await phases(f.session)).toEqual(['initiating:1', 'rejected:1']);
  });

  it('the live rate moved more than the tolerance: refused before POST swap, saying both rates; a swap that comes out REJECTED stops it too', async () => {
    const f = await fixture(8);
    const pairs = (await f.client.listPairs()).data;
    const id = pairs.find((p) => p.baseCurrency === 'USD' && p.quoteCurrency === 'EUR')!.currencyPairId!;
    const setRate = (rate: string) =>
      fetch(`${sb.url}/_sandbox/pairs/${id}/rate`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rate }),
      });
    expect((await setRate('0.94')).status).toBe(200);
    const r = await f.fund();
    expect(r).toMatchObject({ funded: false, halt: false, error: { code: 'SWAP_REFUSED' } });
    expect(r.funded || r.error.message).toMatch(/moved from 0\.9215 \(approved\) to 0\.94 \(live\), more than the tolerance of 1%/);
    expect(count(f.routes(), 'swap')).toBe(0);
    expect(await phases(f.session)).toEqual([]);

    // back at the approved rate, the service takes the swap and its operations reverse it (spec §3)
    expect((await setRate(RATE)).status).toBe(200);
    sb.setFaults({ rejectNextSwaps: 1 });
    const rejected = await f.fund();
    expect(rejected).toMatchObject({ funded: false, halt: false, error: { code: 'SWAP_REJECTED' } });
    expect(await phases(f.session)).toEqual(['initiating:1', 'created:1', 'status']);
    expect((await f.swapsAtSandbox()).map((s) => s.status)).toEqual(['REJECTED']);
  });

  it("the business's last pair disabled since the plan (the pairs route's 400): refused, not a service to resume later", async () => {
    const f = await fixture(22);
    for (const p of (await f.client.listPairs()).data) await f.client.togglePair(p.currencyPairId!, { enabled: false });
    const r = await f.fund();
    expect(r).toMatchObject({ funded: false, halt: false, error: { code: 'SWAP_REFUSED' } });
    expect(r.funded || r.error.message).toMatch(/^the USD\/EUR pair is not enabled any more/);
    expect(count(f.routes(), 'swap')).toBe(0);
  });
  it('its key bound to another body at the service (409, I5): stopped as a conflict, and no later run sends a new key', async () => {
    const f = await fixture(24);
    // the key of attempt 1 taken by another request (another reference: the list shows no swap of this batch)
    const other = swapBody({ ...f.proposal, reference: 'ANOTHER-REQUEST' }, new Dec(f.proposal.amountToBeSent));
    await f.client.swap(other, { idempotencyKey: idempotencyKey(f.proposal.reference, 1, 'swap') });
    const first = await f.fund();
    expect(first).toMatchObject({ funded: false, halt: false, error: { code: 'SWAP_CONFLICT' } });
    const again = await f.fund();
    expect(again).toMatchObject({ funded: false, error: { code: 'SWAP_CONFLICT' } });
    expect(await phases(f.session)).toEqual(['initiating:1', 'conflict:1']);
    expect(await f.swapsAtSandbox()).toEqual([]);
  });
});

describe('stopped on request (Ctrl-C)', () => {
  it('while the live pairs are read: no `initiating` line is written after it, so no swap starts', async () => {
    const f = await fixture(12);
    const stop = new AbortController();
    const client = Object.create(f.client) as PayoutClient;
    client.listPairs = async (...a) => {
      const r = await f.client.listPairs(...a);
      stop.abort();
      return r;
    };
    const ctx = { client, session: f.session, need: () => new Dec('119.00'), rateTolerance: new Dec('0.01'), stop: stop.signal };
    expect((await fundBySwaps(ctx, [f.proposal])).get('USD')).toMatchObject({ funded: false, halt: true });
    expect(await phases(f.session)).toEqual([]);
    expect(count(f.routes(), 'swap')).toBe(0);
  });
});

/** A fetch wrapper: the swap is made as sent but its answer lost, and the swaps list cannot be read after it. */
function swapLostThenListDown() {
  let swapped = false;
  return (f: typeof fetch): typeof fetch =>
    async (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (swapped && /\/swaps(\?|$)/.test(url)) throw new TypeError('fetch failed');
      const res = await f(input, init);
      if (!url.endsWith('/swap')) return res;
      swapped = true;
      throw new TypeError('fetch failed');
    };
}

describe('a swap answered not as sent', () => {
  /** Business n's batch of 2 USD rows (their wallet short: a swap) and `gbp` GBP rows, run with swap answers (or list items) rewritten. */
  async function swapRun(n: number, gbp: number, rewrite: (f: typeof fetch) => typeof fetch, settings: Partial<RunSettings> = {}) {
    return (await swapBatch(n, gbp)).run(rewrite, settings);
  }

  /** Business n's batch (as swapRun's, and `hkd` HKD rows), to run once or more from one state folder. */
  async function swapBatch(n: number, gbp: number, hkd = 0) {
    const dir = await workDir('pb-swap-answer-');
    const [header, ...usd] = generateCsv({ rows: 2, currencies: ['USD'], prefix: `SW${n}U` })
      .trim()
      .split('\n');
    const other = generateCsv({ rows: gbp, currencies: ['GBP'], prefix: `SW${n}G` })
      .trim()
      .split('\n')
      .slice(1);
    const more = generateCsv({ rows: hkd, currencies: ['HKD'], prefix: `SW${n}H` })
      .trim()
      .split('\n')
      .slice(1);
    const file = join(dir, 'payroll.csv');
    await writeFile(file, [header, ...usd, ...more, ...other].join('\n') + '\n');
    const retry = { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 20 };
    const run = async (rewrite: (f: typeof fetch) => typeof fetch, settings: Partial<RunSettings> = {}, fundBySwap = true) => {
      const client = new PayoutClient({ baseUrl: sb.url, apiKey: keyOf(n), requestsPerSecond: 500, retry, fetch: rewrite(fetch) });
      const conn = { ...connectionTo(sb), client };
      const r = await runBatch({
        file,
        conn,
        stateDir: join(dir, 'state'),
        ...unattended({ settleDelayMs: 10, ...settings }, { fundBySwap }),
      });
      return { r, payouts: (await client.listPayouts({ limit: 100 })).data };
    };
    const results = async () => (await import('../../src/results/results.ts')).readResults(join(dir, 'payroll.results.csv'));
    return { run, results, usdSwapReference: swapReference([`SW${n}U-0001`, `SW${n}U-0002`], 'USD') };
  }

  /** The currency a swap request credits (none for any other request). */
  const swapTo = (url: string, init?: RequestInit) =>
    url.endsWith('/swap')
      ? (JSON.parse(new TextDecoder().decode(init!.body as Uint8Array)) as { currencyToBeSent?: string }).currencyToBeSent
      : undefined;

  /** The answers of `route` (a swap, or each item of the swaps list) with ten times the credit. */
  const tenfold =
    (route: RegExp) =>
    (f: typeof fetch): typeof fetch =>
    async (input, init) => {
      const res = await f(input, init);
      if (!route.test(String(input instanceof Request ? input.url : input)) || !res.ok) return res;
      const answer = (await res.json()) as Record<string, unknown>;
      const swaps = (answer.data ?? answer) as Record<string, unknown> | Record<string, unknown>[]; // (the variant reading's envelope)
      for (const swap of [swaps].flat()) swap.destinationAmount = Number(swap.destinationAmount) * 10;
      return new Response(JSON.stringify(answer), { status: res.status, headers: res.headers });
    };

  it('another destinationAmount (amountToBeSent) than sent: no USD row is sent, the run stops saying to ask the service', async () => {
    // (the swap is made as sent; its answer says ten times the credit)
    const { r, payouts } = await swapRun(13, 1, tenfold(/\/swap$/));
    expect(r.kind).toBe('halted');
    expect(r.halted).toMatch(/the USD swap was answered with swap \S+ of destinationAmount \d+/);
    expect(exitReasonText(r)).toMatch(/ask the service about the payout named above before running the same command again/);
    expect(payouts.map((p) => p.sourceCurrency)).not.toContain('USD');
  });

  it('no row of another currency starts after it, as after a payout answered not as sent', async () => {
    const events: EngineEvents = new EventEmitter();
    const swapStopped = new Promise<void>((resolve) => events.on('event', (e) => e.type === 'halted' && resolve()));
    // (one GBP row at a time; the first is answered once the run halted on the swap's answer)
    let held = false;
    const holding =
      (f: typeof fetch): typeof fetch =>
      async (input, init) => {
        if (String(input instanceof Request ? input.url : input).endsWith('/payouts/initiate') && !held) {
          held = true;
          await swapStopped;
        }
        return tenfold(/\/swap$/)(f)(input, init);
      };
    const { r, payouts } = await swapRun(14, 3, holding, { concurrency: 1, events });
    expect(r.kind).toBe('halted');
    expect(r.answerNotAsSent).toBe(true);
    expect(r.halted).toMatch(/the USD swap was answered with swap \S+ of destinationAmount/);
    expect(payouts.map((p) => p.sourceCurrency)).toEqual(['GBP']);
  });

  it('a swap whose answer was lost, listed with another credit than sent: no USD row is sent, the run stops', async () => {
    // (the swap is made as sent; its answer never arrives, and the list says ten times the credit)
    const lost =
      (f: typeof fetch): typeof fetch =>
      async (input, init) => {
        const res = await f(input, init);
        if (String(input instanceof Request ? input.url : input).endsWith('/swap')) throw new TypeError('fetch failed');
        return res;
      };
    const { r, payouts } = await swapRun(15, 1, (f) => tenfold(/\/swaps(\?|$)/)(lost(f)));
    expect(r.kind).toBe('halted');
    expect(r.answerNotAsSent).toBe(true);
    expect(r.halted).toMatch(/the USD swap was listed as swap \S+ of destinationAmount \d+/);
    expect(payouts.map((p) => p.sourceCurrency)).not.toContain('USD');
  });

  it('a swap whose credit does not show, read by its id with another credit than sent: the run stops saying to ask the service', async () => {
    // (once the swap is sent, the USD wallet reads empty and the swap, read by its id, ten times the credit)
    let swapped = false;
    const empty =
      (f: typeof fetch): typeof fetch =>
      async (input, init) => {
        const url = String(input instanceof Request ? input.url : input);
        swapped ||= url.endsWith('/swap');
        const res = await f(input, init);
        if (!swapped || !url.endsWith('/wallets')) return res;
        const answer = (await res.json()) as { data: Record<string, unknown>[] };
        for (const w of answer.data) if (w.currency === 'USD') w.balance = 0;
        return new Response(JSON.stringify(answer), { status: res.status, headers: res.headers });
      };
    const { r, payouts } = await swapRun(16, 1, (f) => tenfold(/\/swaps\/[0-9a-f-]+$/)(empty(f)));
    expect(r.kind).toBe('halted');
    expect(r.answerNotAsSent).toBe(true);
    expect(r.halted).toMatch(/the USD swap was read as swap \S+ of destinationAmount \d+/);
    expect(payouts.map((p) => p.sourceCurrency)).not.toContain('USD');
  });

  it('no row of another currency starts after it while another swap is still being made', async () => {
    const events: EngineEvents = new EventEmitter();
    const halted = new Promise<void>((resolve) => events.on('event', (e) => e.type === 'halted' && resolve()));
    let usdAnswered!: () => void;
    const answered = new Promise<void>((resolve) => (usdAnswered = resolve));
    let initiates = 0;
    let secondGbp!: () => void;
    const gbpAgain = new Promise<void>((resolve) => (secondGbp = resolve));
    // (one row at a time: the first GBP row is held until the USD swap is answered with ten times its credit; the HKD
    // swap, until the run halts or a second GBP row starts)
    const holding =
      (f: typeof fetch): typeof fetch =>
      async (input, init) => {
        const url = String(input instanceof Request ? input.url : input);
        if (url.endsWith('/payouts/initiate') && initiates++ === 0) await answered;
        if (url.endsWith('/payouts/initiate') && initiates > 1) secondGbp();
        const to = swapTo(url, init);
        if (to === 'HKD') await Promise.race([halted, gbpAgain]);
        const res = await (to === 'USD' ? tenfold(/\/swap$/)(f) : f)(input, init);
        if (to === 'USD') usdAnswered();
        return res;
      };
    const { r, payouts } = await (await swapBatch(19, 3, 2)).run(holding, { concurrency: 1, events });
    expect(r.plan?.swaps.map((s) => s.currency).sort()).toEqual(['HKD', 'USD']);
    expect(r.kind).toBe('halted');
    expect(r.answerNotAsSent).toBe(true);
    expect(r.halted).toMatch(/the USD swap was answered with swap \S+ of destinationAmount/);
    expect(payouts.map((p) => p.sourceCurrency)).toEqual(['GBP']);
  });

  it('no other swap is sent after it, not even one priced again after a stale rate', async () => {
    const events: EngineEvents = new EventEmitter();
    const halted = new Promise<void>((resolve) => events.on('event', (e) => e.type === 'halted' && resolve()));
    let hkdSwaps = 0;
    // (the HKD swap's first attempt is refused as priced at a stale rate once the run halted on the USD swap's answer)
    const staleHkd =
      (f: typeof fetch): typeof fetch =>
      async (input, init) => {
        const url = String(input instanceof Request ? input.url : input);
        const to = swapTo(url, init);
        if (to === 'HKD' && hkdSwaps++ === 0) {
          await halted;
          return new Response(JSON.stringify({ statusCode: 400, message: INVALID_PAYOUT_AMOUNT_MESSAGE }), { status: 400 });
        }
        return (to === 'USD' ? tenfold(/\/swap$/)(f) : f)(input, init);
      };
    const { r } = await (await swapBatch(20, 0, 2)).run(staleHkd, { events });
    expect(r.plan?.swaps.map((s) => s.currency).sort()).toEqual(['HKD', 'USD']);
    expect(r.answerNotAsSent).toBe(true);
    expect(hkdSwaps).toBe(1);
  });

  it("holds the rows of another currency's swap made as sent NOT_SENT by the halt, not as that swap not as sent", async () => {
    const usdTenfold =
      (f: typeof fetch): typeof fetch =>
      async (input, init) => {
        const url = String(input instanceof Request ? input.url : input);
        const to = swapTo(url, init);
        return (to === 'USD' ? tenfold(/\/swap$/)(f) : f)(input, init);
      };
    const b = await swapBatch(21, 0, 2);
    const { r, payouts } = await b.run(usdTenfold);
    expect(r.plan?.swaps.map((s) => s.currency).sort()).toEqual(['HKD', 'USD']);
    expect(r.answerNotAsSent).toBe(true);
    expect(payouts).toEqual([]);
    const rows = (await b.results()).rows.map((x) => [x.cells.sourceCurrency, x.result.status, x.result.errorCode, x.result.errorMessage]);
    const why = expect.stringMatching(/^the USD swap was answered with swap \S+ of destinationAmount/);
    const held = expect.stringMatching(/^not sent: the USD swap was answered with swap \S+ of destinationAmount/);
    expect(rows).toEqual([
      ['USD', 'NOT_SENT', 'SWAP_NOT_AS_SENT', why],
      ['USD', 'NOT_SENT', 'SWAP_NOT_AS_SENT', why],
      ['HKD', 'NOT_SENT', 'NOT_SENT', held],
      ['HKD', 'NOT_SENT', 'NOT_SENT', held],
    ]);
  });

  it('a swap an earlier run left unsettled, no longer proposed, listed with another credit than sent: no USD row is sent, the run stops', async () => {
    const b = await swapBatch(17, 0);
    // (the first run: the swap is made as sent, its answer lost, then the list cannot be read: the run halts, the swap unsettled)
    const lostThenDown = swapLostThenListDown();
    const first = await b.run(lostThenDown);
    expect(first.r.kind).toBe('halted');
    expect(first.payouts).toHaveLength(0);
    // (a run while the list still cannot be read: the swap cannot be compared, so no USD row goes)
    const listDown =
      (f: typeof fetch): typeof fetch =>
      async (input, init) => {
        if (/\/swaps(\?|$)/.test(String(input instanceof Request ? input.url : input))) throw new TypeError('fetch failed');
        return f(input, init);
      };
    const blind = await b.run(listDown);
    expect(blind.r.kind).toBe('halted');
    expect(blind.r.halted).toMatch(/the swaps list could not be read or sent for the USD swap/);
    expect(blind.payouts).toHaveLength(0);
    // (the second: the swap's credit shows, so no swap is proposed; the list says ten times the credit)
    const { r, payouts } = await b.run(tenfold(/\/swaps(\?|$)/));
    expect(r.plan?.swaps).toHaveLength(0);
    expect(r.kind).toBe('halted');
    expect(r.answerNotAsSent).toBe(true);
    expect(r.halted).toMatch(/the USD swap was listed as swap \S+ of destinationAmount \d+/);
    expect(payouts.map((p) => p.sourceCurrency)).not.toContain('USD');
  });

  it('the same swap, the batch resumed without --fund-by-swap: the list is still read first, and no USD row is sent', async () => {
    const b = await swapBatch(23, 0);
    const lostThenDown = swapLostThenListDown();
    expect((await b.run(lostThenDown)).r.kind).toBe('halted');
    // (the swap's credit shows, so the wallet covers the rows without a swap: a plain run)
    const { r, payouts } = await b.run(tenfold(/\/swaps(\?|$)/), {}, false);
    expect(r.kind).toBe('halted');
    expect(r.answerNotAsSent).toBe(true);
    expect(r.halted).toMatch(/the USD swap was listed as swap \S+ of destinationAmount \d+/);
    expect(payouts.map((p) => p.sourceCurrency)).not.toContain('USD');
  });

  it('a swap of the batch made from another ledger of the account, of another amount than approved: no USD row is sent, the run stops', async () => {
    const b = await swapBatch(18, 0);
    // (made once the plan is approved, before this run looks for the swap: another host's run of the batch)
    const other = new PayoutClient({ baseUrl: sb.url, apiKey: keyOf(18), requestsPerSecond: 500 });
    let made = false;
    const elsewhere =
      (f: typeof fetch): typeof fetch =>
      async (input, init) => {
        if (/\/swaps(\?|$)/.test(String(input instanceof Request ? input.url : input)) && !made) {
          made = true;
          const wallets = new Map((await other.listWallets()).data.map((w) => [w.currency, w.walletId]));
          const proposal = { sourceWalletId: wallets.get('EUR')!, destinationWalletId: wallets.get('USD')! };
          const amountToBeSent = new Dec('50.00').div(RATE).toDecimalPlaces(2);
          const swap = { ...proposal, swapAmount: '50.00', fromCurrency: 'EUR', currency: 'USD', reference: b.usdSwapReference };
          await other.swap(swapBody(swap as SwapProposal, amountToBeSent), { idempotencyKey: `elsewhere-${b.usdSwapReference}` });
        }
        return f(input, init);
      };
    const { r, payouts } = await b.run(elsewhere);
    expect(made).toBe(true);
    expect(r.kind).toBe('halted');
    expect(r.answerNotAsSent).toBe(true);
    expect(r.halted).toMatch(
      /the USD swap was listed \(this ledger sent none: compared with the approved swap\) as swap \S+ of sourceAmount 50/,
    );
    expect(payouts.map((p) => p.sourceCurrency)).not.toContain('USD');
  });
});

/** The session a resumed process opens on the same journal. */
function reopened(s: BatchSession): Promise<BatchSession> {
  s.writer.close();
  return openSession(sessionArgs(s));
}

/** What opens the same batch's journal again (a resumed run). */
function sessionArgs(s: BatchSession): Parameters<typeof openSession>[0] {
  return {
    identity: batchIdentity(s.header.batchId),
    env: 'custom',
    file: s.header.file,
    ledger: s.ledger,
    command: 'run',
  };
}

describe('payout-batch run with a swap', () => {
  /** Business n's CLI in a folder of its own, with a batch of 2 USD and 2 GBP rows (USD 31.01 with fees; the wallet holds 20.00). */
  async function batchOf(n: number) {
    const dir = await workDir('pb-swap-run-');
    const state = join(dir, 'state');
    const env = cleanEnv({ PAYOUT_API_KEY: keyOf(n), PAYOUT_BATCH_STATE_DIR: state });
    const [header, ...usd] = generateCsv({ rows: 2, currencies: ['USD'], prefix: `SW${n}U` })
      .trim()
      .split('\n');
    const gbp = generateCsv({ rows: 2, currencies: ['GBP'], prefix: `SW${n}G`, amount: (i) => `${20 + i}.50` })
      .trim()
      .split('\n')
      .slice(1);
    await writeFile(join(dir, 'payroll.csv'), [header, usd[0], gbp[0], usd[1], gbp[1]].join('\n') + '\n');
    const start = sb.requestLog().length;
    return {
      dir,
      state,
      cli: (args: string[], onSpawn?: (c: ChildProcess) => void): Promise<CliRun> =>
        runCli([...args, '--base-url', sb.url, '--rate', '200'], { cwd: dir, env, onSpawn }),
      /** The same by main() in this process, for a step not about a process: one that sets a run up, a refusal, a resume. */
      inProcess: (args: string[]): Promise<CliRun> => runMain([...args, '--base-url', sb.url, '--rate', '200'], { cwd: dir, env }),
      routes: () =>
        sb
          .requestLog()
          .slice(start)
          .filter((r) => r.apiKey === keyOf(n))
          .map((r) => r.route),
      results: async () => (await import('../../src/results/results.ts')).readResults(join(dir, 'payroll.results.csv')),
    };
  }

  it('plan --out; the rate moves past the tolerance: run --plan pays GBP, not USD (exit 3); back within it: one swap, then the USD rows', async () => {
    const b = await batchOf(9);
    const plan = await b.inProcess(['plan', 'payroll.csv', '--out', 'payroll.plan.json']);
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    const client = new PayoutClient({ baseUrl: sb.url, apiKey: keyOf(9) });
    const id = (await client.listPairs()).data.find((p) => p.baseCurrency === 'USD' && p.quoteCurrency === 'EUR')!.currencyPairId!;
    const setRate = (rate: string) =>
      fetch(`${sb.url}/_sandbox/pairs/${id}/rate`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rate }),
      });
    expect((await setRate('0.90')).status).toBe(200);
    const refused = await b.inProcess(['run', '--plan', 'payroll.plan.json', '--yes']);
    expect(refused.code, refused.stdout + refused.stderr).toBe(3);
    expect(refused.stderr).toMatch(/moved from 0\.9215 \(approved\) to 0\.9 \(live\)/);
    expect(count(b.routes(), 'swap')).toBe(0);
    const status = async () => (await b.results()).rows.map((r) => [r.cells.sourceCurrency, r.result.status, r.result.errorCode ?? '']);
    expect(await status()).toEqual([
      ['USD', 'NOT_SENT', 'SWAP_REFUSED'],
      ['GBP', 'PENDING', ''],
      ['USD', 'NOT_SENT', 'SWAP_REFUSED'],
      ['GBP', 'PENDING', ''],
    ]);

    expect((await setRate('0.9230')).status).toBe(200); // moved 0.16%: within the tolerance, priced again
    const run = await b.cli(['run', '--plan', 'payroll.plan.json', '--yes']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(count(b.routes(), 'swap')).toBe(1);
    expect(count(b.routes(), 'initiate')).toBe(4);
    expect((await status()).map(([c, s]) => `${c} ${s}`)).toEqual(['USD PENDING', 'GBP PENDING', 'USD PENDING', 'GBP PENDING']);
    const [swap] = (await client.listSwaps({ limit: 100 })).data;
    expect(swap).toMatchObject({ sourceCurrency: 'EUR', destinationCurrency: 'USD' });
    expect(Number(swap!.exchangeRate)).toBe(Number(new Dec(1).div('0.9230').toSignificantDigits(12).toFixed()));
  });

  it('a re-saved copy of a paid file run with --fund-by-swap from another ledger swaps nothing and pays nothing again (issue 39)', async () => {
    const b = await batchOf(11);
    const first = await b.inProcess(['run', 'payroll.csv', '--fund-by-swap', '--yes']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(count(b.routes(), 'swap')).toBe(1);
    // the same rows, other bytes (a spreadsheet's re-save: CRLF line ends), run from another state folder
    await writeFile(join(b.dir, 'copy.csv'), readFileSync(join(b.dir, 'payroll.csv'), 'utf8').replace(/\n/g, '\r\n'));
    const other = cleanEnv({ PAYOUT_API_KEY: keyOf(11), PAYOUT_BATCH_STATE_DIR: join(b.dir, 'other-state') });
    const copy = await runMain(['run', 'copy.csv', '--fund-by-swap', '--yes', '--base-url', sb.url, '--rate', '200'], {
      cwd: b.dir,
      env: other,
    });
    expect(copy.stdout + copy.stderr).not.toMatch(/unexpected error/);
    const client = new PayoutClient({ baseUrl: sb.url, apiKey: keyOf(11) });
    expect((await client.listSwaps({ limit: 100 })).data).toHaveLength(1);
    expect((await client.listPayouts({ limit: 100 })).data).toHaveLength(4);
  });

  it("killed right after the swap's `initiating` line, then resumed: one swap, every row paid", async () => {
    const b = await batchOf(10);
    const killed = await b.cli(['run', 'payroll.csv', '--fund-by-swap', '--yes'], (child) => {
      const poll = setInterval(() => {
        const [journal] = ledgerJournals(b.state);
        if (!journal || !existsSync(journal) || !readFileSync(journal, 'utf8').includes('"phase":"initiating"')) return;
        clearInterval(poll);
        child.kill('SIGKILL');
      }, 1);
      child.on('exit', () => clearInterval(poll));
    });
    expect(killed.signal).toBe('SIGKILL');
    await until(() => sb.inFlight() === 0);
    const resumed = await b.inProcess(['run', 'payroll.csv', '--fund-by-swap', '--yes']);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    const [journal] = ledgerJournals(b.state);
    const lines = readFileSync(journal!, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"t":"swap"'))
      .map((l) => JSON.parse(l) as { phase: string; attempt: number });
    expect(lines.every((l) => l.attempt === 1)).toBe(true); // never a second key
    expect(lines.at(-1)!.phase).toBe('created');
    const client = new PayoutClient({ baseUrl: sb.url, apiKey: keyOf(10) });
    expect((await client.listSwaps({ limit: 100 })).data).toHaveLength(1);
    expect((await b.results()).rows.every((r) => r.result.status === 'PENDING')).toBe(true);
  });
});

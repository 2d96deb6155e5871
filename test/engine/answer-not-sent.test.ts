// An initiate answered with a payout of another amount or currency than the body sent (spec §4.2:
// the payout of that body) is a payout not as approved: the run stops before another row is paid
// so, and says which. Amounts as strings or with other trailing zeros are the same amount.
import { EventEmitter } from 'node:events';
import { afterEach, expect, it } from 'vitest';
import { exitReasonText } from '../../src/cli/render.ts';
import { runBatch, type EngineEvents } from '../../src/engine/pipeline.ts';
import { readResults } from '../../src/results/read.ts';
import { Dec } from '../../src/money.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { connectionTo, unattended } from '../ops/helpers.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { allPayouts, workDir, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

/** A fetch whose initiate answers are rewritten by `change`. */
const answering =
  (change: (payout: Record<string, unknown>) => void): typeof fetch =>
  async (input, init) => {
    const res = await fetch(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!url.endsWith('/payouts/initiate') || !res.ok) return res;
    const payout = (await res.json()) as Record<string, unknown>;
    change(payout);
    return new Response(JSON.stringify(payout), { status: res.status, headers: res.headers });
  };

async function run(change: (payout: Record<string, unknown>) => void) {
  sb = await startSandbox({ rateLimitPerSecond: null });
  const file = await writeBatch(await workDir(), 'batch.csv', { rows: 4, currencies: ['GBP'] });
  return runBatch({ file, conn: connectionTo(sb, answering(change)), ...unattended({ settleDelayMs: 10, concurrency: 1 }) });
}

it('a sourceAmount a hundred times the one sent: the run stops after that row, naming it', async () => {
  const r = await run((p) => (p.sourceAmount = Number(p.sourceAmount) * 100));
  expect(r.kind).toBe('halted');
  expect(r.halted).toMatch(/row 2 \(GEN-0001\).*sourceAmount 1000 .*10/);
  expect(await allPayouts(sb!)).toHaveLength(1);
  // not a transient stop: running again would pay the next row so
  expect(exitReasonText(r)).not.toMatch(/run the same command again/);
  expect(exitReasonText(r)).toMatch(/ask the service about the payout named above before running the same command again/);
});

it('a payout answered not as sent while the run halts on a 503: the stop names that payout, not the 503', async () => {
  sb = await startSandbox({ rateLimitPerSecond: null });
  const events: EngineEvents = new EventEmitter();
  const halted = new Promise<void>((resolve) => events.on('event', (e) => e.type === 'halted' && resolve()));
  const tenfold = answering((p) => (p.sourceAmount = Number(p.sourceAmount) * 10));
  let failing: string | undefined;
  // (one row's initiate answers 503; the other's, in flight meanwhile, is answered once the run halted)
  const f: typeof fetch = async (input, init) => {
    if (!String(input instanceof Request ? input.url : input).endsWith('/payouts/initiate')) return fetch(input, init);
    const key = new Headers(init?.headers).get('idempotency-key');
    failing ??= key ?? undefined;
    if (key === failing) return new Response(JSON.stringify({ statusCode: 503, message: 'down' }), { status: 503 });
    await halted;
    return tenfold(input, init);
  };
  const file = await writeBatch(await workDir(), 'batch.csv', { rows: 2, currencies: ['GBP'] });
  const r = await runBatch({ file, conn: connectionTo(sb, f), ...unattended({ settleDelayMs: 10, concurrency: 2, events }) });
  expect(r.halted).toMatch(/not what was sent/);
  expect(exitReasonText(r)).toMatch(/ask the service about the payout named above/);
});

it('another source or destination currency: the run stops', async () => {
  const r = await run((p) => (p.destinationCurrency = 'EUR'));
  expect(r.kind).toBe('halted');
  expect(r.halted).toMatch(/destinationCurrency EUR/);
  expect(await allPayouts(sb!)).toHaveLength(1);
});

it('the same amounts as strings, with other trailing zeros, and extra fields: every row goes', async () => {
  const r = await run((p) => {
    p.sourceAmount = `${String(p.sourceAmount)}${String(p.sourceAmount).includes('.') ? '0' : '.000'}`;
    p.sourceCurrency = 'gbp';
    p.extra = { note: 'x' };
  });
  expect(r.kind).toBe('ok');
  expect(await allPayouts(sb!)).toHaveLength(4);
});

it('a created answer that cannot be read (an amount "1,000.00"): the run stops, the row unknown', async () => {
  const r = await run((p) => (p.sourceAmount = '1,000.00'));
  // (before: every row sent, each unreadable, and twice more in the settle passes; exit 1 "fix rows")
  expect(r.kind).toBe('halted');
  expect(r.halted).toMatch(/does not match the spec: field "sourceAmount"/);
  expect([...r.outcomes.values()].map((o) => o.status)).toContain('UNKNOWN_OUTCOME');
  expect(await allPayouts(sb!)).toHaveLength(1);
  expect(exitReasonText(r)).toMatch(/run the same command again to continue/);
});

it('a sourceAmount that is the amount sent plus its fee (spec §2 "amount debited"): every row goes', async () => {
  const r = await run((p) => (p.sourceAmount = Number(p.sourceAmount) + Number(p.transactionFees)));
  expect(r.kind).toBe('ok');
  expect(await allPayouts(sb!)).toHaveLength(4);
});

it('an answer without its fee, its sourceAmount the amount sent plus that fee: every row goes, the fee counted once', async () => {
  const r = await run((p) => {
    p.sourceAmount = Number(p.sourceAmount) + Number(p.transactionFees);
    delete p.transactionFees;
  });
  expect(r.kind, r.halted).toBe('ok');
  expect(await allPayouts(sb!)).toHaveLength(4);
  for (const { cells, result } of (await readResults(r.resultsPath)).rows) {
    expect(new Dec(result.fee!).gt(0), 'a fee to count').toBe(true);
    expect(result.totalDeductible).toBe(new Dec(cells.sourceAmount!).plus(result.fee!).toFixed(2));
  }
});

it('an answer without its fee, of the amount sent plus a fee no plan knew: the payout read tells, every row goes', async () => {
  const debit = answering((p) => {
    p.sourceAmount = Number(p.sourceAmount) + Number(p.transactionFees);
    delete p.transactionFees;
  });
  // (the methods route without fees: no fee planned for any row)
  const f: typeof fetch = async (input, init) => {
    if (!String(input instanceof Request ? input.url : input).includes('/payouts/methods')) return debit(input, init);
    const res = await fetch(input, init);
    const text = JSON.stringify(await res.json(), (k, v: unknown) => (k === 'fee' ? undefined : v));
    return new Response(text, { status: res.status, headers: res.headers });
  };
  sb = await startSandbox({ rateLimitPerSecond: null });
  const file = await writeBatch(await workDir(), 'batch.csv', { rows: 4, currencies: ['GBP'] });
  const r = await runBatch({ file, conn: connectionTo(sb, f), ...unattended({ settleDelayMs: 10, concurrency: 1 }) });
  expect(r.kind, r.halted).toBe('ok');
  expect(sb.requestLog().filter((e) => e.route === 'getPayout')).toHaveLength(4);
  for (const { result } of (await readResults(r.resultsPath)).rows) expect(new Dec(result.fee!).gt(0)).toBe(true);
});

it('an answer without its fee, a hundred times the sourceAmount sent: the run still stops after that row', async () => {
  const r = await run((p) => {
    p.sourceAmount = Number(p.sourceAmount) * 100;
    delete p.transactionFees;
  });
  expect(r.kind).toBe('halted');
  expect(r.halted).toMatch(/row 2 \(GEN-0001\).*sourceAmount 1000 /);
  expect(await allPayouts(sb!)).toHaveLength(1);
});

/** A fetch whose initiate answers lack the fee (completed from the payout list after the rows), the list's items rewritten by `change`. */
const listing =
  (change: (item: Record<string, unknown>) => void, answer?: (payout: Record<string, unknown>) => void): typeof fetch =>
  async (input, init) => {
    const res = await fetch(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const initiate = url.endsWith('/payouts/initiate');
    if (!res.ok || !(initiate || /\/payouts\?/.test(url))) return res;
    const body = (await res.json()) as Record<string, unknown>;
    const data = (body.data ?? body) as Record<string, unknown> | Record<string, unknown>[]; // (the variant reading's envelope)
    if (Array.isArray(data)) data.forEach(change);
    else if (answer) answer(data);
    else delete data.transactionFees;
    return new Response(JSON.stringify(body), { status: res.status, headers: res.headers });
  };

async function listed(...how: Parameters<typeof listing>) {
  sb = await startSandbox({ rateLimitPerSecond: null, shapes: TEST_SHAPES });
  const file = await writeBatch(await workDir(), 'batch.csv', { rows: 4, currencies: ['GBP'] });
  return runBatch({ file, conn: connectionTo(sb, listing(...how)), ...unattended({ settleDelayMs: 10 }) });
}

it('a payout the list shows with a hundred times the sourceAmount sent: the run stops naming it, not recorded in silence', async () => {
  const r = await listed((p) => (p.sourceAmount = Number(p.sourceAmount) * 100));
  expect(r.kind).toBe('halted');
  // (1200 in the variant reading: its sourceAmount the debit, 10 plus a fee of 2)
  expect(r.halted).toMatch(/row 2 \(GEN-0001\): the service now shows payout \S+ of sourceAmount 1[02]00 .*10/);
  expect(exitReasonText(r)).toMatch(/ask the service about the payout named above before running the same command again/);
});

it('a payout the list shows with another destinationCurrency: the run stops', async () => {
  const r = await listed((p) => (p.destinationCurrency = 'JPY'));
  expect(r.kind).toBe('halted');
  expect(r.halted).toMatch(/destinationCurrency JPY/);
});

it('a payout listed as sent, its sourceAmount without the fee the answer added, its currencies left out: every row goes', async () => {
  const r = await listed(
    (p) => void (delete p.sourceCurrency, delete p.destinationCurrency),
    // (an answer with the fee: its sourceAmount the amount debited, the payoutRef left for the list)
    (p) => {
      if (p.transactionFees === undefined) return;
      p.sourceAmount = Number(p.sourceAmount) + Number(p.transactionFees);
      delete p.payoutRef;
    },
  );
  expect(r.kind).toBe('ok');
  expect(await allPayouts(sb!)).toHaveLength(4);
});

it('rows still uploading their documents when a payout is answered not as sent: none of them is initiated', async () => {
  sb = await startSandbox({ rateLimitPerSecond: null });
  const events: EngineEvents = new EventEmitter();
  const halted = new Promise<void>((resolve) => events.on('event', (e) => e.type === 'halted' && resolve()));
  const tenfold = answering((p) => (p.sourceAmount = Number(p.sourceAmount) * 10));
  // (the rows start together; all but the first wait in their document's upload until the run halted)
  let uploads = 0;
  const f: typeof fetch = async (input, init) => {
    if (String(input instanceof Request ? input.url : input).endsWith('/documents/upload-url') && uploads++ > 0) await halted;
    return tenfold(input, init);
  };
  const file = await writeBatch(await workDir(), 'batch.csv', { rows: 3, currencies: ['GBP'], documentsEvery: 1 });
  const r = await runBatch({ file, conn: connectionTo(sb, f), ...unattended({ settleDelayMs: 10, concurrency: 3, events }) });
  expect(r.answerNotAsSent).toBe(true);
  expect(uploads).toBe(3);
  expect(await allPayouts(sb)).toHaveLength(1);
  // (not sent, as rows that had not started: the service was working)
  expect([...r.outcomes.values()].map((o) => o.error?.code).filter(Boolean)).toEqual(['NOT_SENT', 'NOT_SENT']);
});

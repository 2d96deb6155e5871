// A large batch brings deliveries faster than a results file of 100,000 rows is read and written:
// `listen` applies the deliveries waiting together, the file read and written once for them all,
// each change still in arrival order and on its own journal line; `applyStatus` finds each
// change's update without a search per change; `status` reads the file once after applying
// (issue: listen and status at 100,000 rows).
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { applyStatus, type StatusUpdate } from '../../src/follow-up/apply-status.ts';
import { startListener } from '../../src/follow-up/webhook-receiver.ts';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import { readResults, writeResults } from '../../src/results/results.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { tempDirs } from '../engine/helpers.ts';
import { connectionTo, ledgerJournals, paidBatch, setStatus, startSb } from './helpers.ts';

/** The results files read (parsed) and written, by path. */
const io = vi.hoisted(() => ({ reads: [] as string[], writes: [] as string[] }));
vi.mock('../../src/results/read.ts', async (original) => {
  const m = await original<typeof import('../../src/results/read.ts')>();
  return {
    ...m,
    readResults: (...a: Parameters<typeof m.readResults>) => (io.reads.push(a[0]), m.readResults(...a)),
    streamResults: (...a: Parameters<typeof m.streamResults>) => (io.reads.push(a[0]), m.streamResults(...a)),
    spillResults: (...a: Parameters<typeof m.spillResults>) => (io.reads.push(a[0]), m.spillResults(...a)),
  };
});
vi.mock('../../src/results/write.ts', async (original) => {
  const m = await original<typeof import('../../src/results/write.ts')>();
  return { ...m, writeResults: (...a: Parameters<typeof m.writeResults>) => (io.writes.push(a[0]), m.writeResults(...a)) };
});

const SECRET = 'whsec_together_0123456789abcdef';
const dirs = tempDirs('pb-listen-together-');
let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

const statusLines = () =>
  ledgerJournals().flatMap((f) =>
    readFileSync(f, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.t === 'status'),
  );

/** Deliveries recorded, then the listener stopped before applying them: all waiting at its next start. */
function waitingInInbox(stateDir: string, events: { eventType: string; data: unknown }[]): void {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const fd = openSync(join(stateDir, 'inbox.jsonl'), 'w', 0o600);
  const receivedAt = new Date().toISOString();
  events.forEach((e, i) => {
    const raw = JSON.stringify({ ...e, deliveryId: `d${i}`, occurredAt: receivedAt });
    writeSync(
      fd,
      `${JSON.stringify({ t: 'delivery', deliveryId: `d${i}`, eventType: e.eventType, receivedAt, eventKey: `k${i}`, raw })}\n`,
    );
  });
  closeSync(fd);
}
const at = (s: number) => new Date(Date.now() + s * 1000).toISOString();
const status = (payoutId: string, newStatus: string, changedAt: string) => ({
  eventType: 'payout.status.changed',
  data: { payoutId, businessId: 'biz_acme', oldStatus: 'PENDING', newStatus, changedAt },
});

describe('listen: the deliveries waiting are applied together', () => {
  it('reads and writes the results file once for them all, in arrival order, a journal line per change', async () => {
    sb = await startSb();
    const { dir, results, ids } = await paidBatch(sb, { rows: 2, dir: await dirs.make() });
    const stateDir = join(dir, 'listen-state');
    const wallet = { eventType: 'wallet.credited', data: { amount: 10, currency: 'GBP', transactionType: 'cr', transactionId: 'txn_1' } };
    const events = [
      status(ids[0]!, 'PROCESSING', at(1)),
      wallet,
      status(ids[1]!, 'PROCESSING', at(1)),
      status(ids[0]!, 'SUCCESSFUL', at(3)),
      status(ids[1]!, 'PENDING', at(2)), // older than PROCESSING: not applied
      status('po_in_no_file', 'PROCESSING', at(1)),
    ];
    waitingInInbox(stateDir, events);
    io.reads.length = io.writes.length = 0;

    const listener = await startListener({ port: 0, secret: SECRET, stateDir, results: [results] });
    await listener.idle();
    await listener.close();
    expect(io.reads.filter((f) => resolve(f) === resolve(results))).toHaveLength(1);
    expect(io.writes.filter((f) => resolve(f) === resolve(results))).toHaveLength(1);
    expect((await readResults(results)).rows.map((r) => r.result.status)).toEqual(['SUCCESSFUL', 'PROCESSING']);
    const inbox = readFileSync(join(stateDir, 'inbox.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(inbox.filter((l) => l.t === 'applied').map((l) => [l.deliveryId, l.rows])).toEqual(
      ['d0', 'd1', 'd2', 'd3', 'd4', 'd5'].map((d) => [d, ['d0', 'd2', 'd3'].includes(d) ? 1 : 0]),
    );
    expect(statusLines().map((l) => [l.payoutId, l.status, l.deliveryId])).toEqual([
      [ids[0], 'PROCESSING', 'd0'],
      [ids[1], 'PROCESSING', 'd2'],
      [ids[0], 'SUCCESSFUL', 'd3'],
    ]);
  });

  it("each change to its own batch's journal, when the payouts waiting are two batches' and in no results file", async () => {
    sb = await startSb();
    const one = await paidBatch(sb, { rows: 1, dir: await dirs.make() });
    const two = await paidBatch(sb, { rows: 1, prefix: 'TWO', amount: () => '13.37', dir: await dirs.make() });
    const stateDir = join(one.dir, 'listen-state');
    waitingInInbox(stateDir, [status(one.ids[0]!, 'PROCESSING', at(1)), status(two.ids[0]!, 'PROCESSING', at(1))]);
    const listener = await startListener({ port: 0, secret: SECRET, stateDir });
    await listener.idle();
    await listener.close();
    const journals = ledgerJournals().map((f) => readFileSync(f, 'utf8'));
    expect(journals).toHaveLength(2);
    for (const id of [one.ids[0]!, two.ids[0]!])
      expect(journals.filter((j) => j.includes(id)).map((j) => j.includes(`"t":"status","payoutId":"${id}"`))).toEqual([true]);
  });
});

describe('applyStatus', () => {
  it('journals each update applied, two of one payout too, with no search of the updates per change', async () => {
    sb = await startSb();
    const { results, ids } = await paidBatch(sb, { rows: 1, dir: await dirs.make() });
    // 300 rows of payouts of no journal, and the batch's own row
    const table = await readResults(results);
    const row = table.rows[0]!;
    for (let i = 0; i < 300; i++)
      table.rows.push({ ...row, rowNumber: row.rowNumber + 1 + i, result: { ...row.result, payoutId: `po_many_${i}` } });
    await writeResults(results, table);
    const at = (s: number) => new Date(Date.now() + s * 1000).toISOString();
    const updates: StatusUpdate[] = [
      ...table.rows.slice(1).map((r) => ({ payoutId: r.result.payoutId!, status: 'PROCESSING', at: at(1), source: 'get' as const })),
      { payoutId: ids[0]!, status: 'ADDITIONAL_INFO_REQUIRED', statusDetail: 'first', at: at(1), source: 'webhook', deliveryId: 'a' },
      { payoutId: ids[0]!, status: 'ADDITIONAL_INFO_REQUIRED', statusDetail: 'second', at: at(2), source: 'webhook', deliveryId: 'b' },
    ];
    // each read of an update's payout id counted: a search of the updates per change reads them 300 × 300 / 2 times
    let reads = 0;
    const counted = updates.map(({ payoutId, ...u }) =>
      Object.defineProperty(u, 'payoutId', { get: () => (reads++, payoutId), enumerable: true }),
    );
    const r = await applyStatus([{ file: results }], counted as StatusUpdate[]);
    expect(r.applied).toHaveLength(302);
    expect(reads).toBeLessThan(10 * updates.length);
    expect(statusLines().map((l) => [l.status, l.statusDetail, l.deliveryId])).toEqual([
      ['ADDITIONAL_INFO_REQUIRED', 'first', 'a'],
      ['ADDITIONAL_INFO_REQUIRED', 'second', 'b'],
    ]);
  });
});

describe('status', () => {
  it('reads the results file once to catch up and plan, once to apply, once for refunds, swaps and the summary', async () => {
    sb = await startSb();
    const { results, ids } = await paidBatch(sb, { rows: 2, dir: await dirs.make() });
    await setStatus(sb, ids[0]!, 'PROCESSING');
    const conn = connectionTo(sb);
    io.reads.length = io.writes.length = 0;
    const r = await refreshStatus({ client: conn.client, resultsFile: results, ledgers: [ledgerOf(conn)] });
    expect(r.moved.map((c) => c.to)).toEqual(['PROCESSING']);
    expect(r.byStatus).toEqual({ PROCESSING: 1, PENDING: 1 });
    expect(io.reads.filter((f) => resolve(f) === resolve(results))).toHaveLength(3);
  });
});

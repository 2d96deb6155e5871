// A large batch brings deliveries faster than a results file of 100,000 rows is read and written:
// `listen` applies the deliveries waiting together, the file read and written once for them all,
// each change still in arrival order and on its own journal line; `applyStatus` finds each
// change's update without a search per change (issue: listen and status at 100,000 rows).
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { applyStatus, type StatusUpdate } from '../../src/follow-up/apply-status.ts';
import { readResults, writeResults } from '../../src/results/results.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { tempDirs } from '../engine/helpers.ts';
import { ledgerJournals, paidBatch, startSb } from './helpers.ts';

/** The results files read (parsed) and written, by path. */
const io = vi.hoisted(() => ({ reads: [] as string[], writes: [] as string[] }));
vi.mock('../../src/results/read.ts', async (original) => {
  const m = await original<typeof import('../../src/results/read.ts')>();
  return { ...m, readResults: (...a: Parameters<typeof m.readResults>) => (io.reads.push(a[0]), m.readResults(...a)) };
});
vi.mock('../../src/results/write.ts', async (original) => {
  const m = await original<typeof import('../../src/results/write.ts')>();
  return { ...m, writeResults: (...a: Parameters<typeof m.writeResults>) => (io.writes.push(a[0]), m.writeResults(...a)) };
});

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

// A sanctions clearance that expires while its run sends: the row it clears is not sent after its
// expiry, though the rows before it were (src/approvals/REFERENCE.md: a clearance counts until it expires).
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { readFile, writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { loadBatch } from '../../src/engine/prepare.ts';
import { payeeDigest, screenRows } from '../../src/engine/screen-batch.ts';
import type { EngineEvents } from '../../src/engine/execute.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { connectionTo, startSb, unattended } from '../ops/helpers.ts';
import { tempDirs, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-clearance-lapse-');
afterEach(async () => {
  vi.restoreAllMocks();
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

describe('a clearance expiring after the first payout of its run', () => {
  it('holds the row it cleared, not yet sent: no payout to the listed payee after its expiry', async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const path = await writeBatch(dir, 'pay.csv', { rows: 3, currencies: ['GBP'], prefix: 'LAP' });
    // Oliver Brown, listed, the last row
    const [head, first, ...others] = (await readFile(path, 'utf8')).trimEnd().split('\n');
    await writeFile(path, [head, ...others, first].join('\n') + '\n');
    const list = join(dir, 'names.csv');
    await writeFile(list, 'name,id\nOliver Brown,E1\n');
    const batch = await loadBatch(path, {});
    const [row, held] = [...(await screenRows(batch.rows, { lists: [list] })).held][0]!;
    const payout = batch.rows.at(row - 2)!.payout!;
    expect(payout.reference).toBe('LAP-0001');
    const hit = held.hits[0]!;
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const clearance = {
      id: 'c1',
      reference: payout.reference,
      payee: payeeDigest(payout),
      ...hit,
      reason: 'another',
      expiresAt,
      signedBy: ['Alice'],
    };
    // the clocks past the expiry once the first row is done
    const now = Date.now.bind(Date);
    let shift = 0;
    vi.spyOn(Date, 'now').mockImplementation(() => now() + shift);
    const events: EngineEvents = new EventEmitter();
    events.on('event', (e) => {
      if (e.type === 'row-done') shift = 2 * 3_600_000;
    });
    const run = await runBatch({
      file: path,
      conn: connectionTo(sb),
      screening: { lists: [list], clearances: [clearance] },
      ...unattended({ concurrency: 1, events }, { allowPartial: true }),
    });
    expect(run.plan!.toSend).toEqual([2, 3, 4]);
    // the bodies of the service's payouts: the two others', none to the listed payee
    const made = sb.snapshot().idempotency.filter((e) => e.recordId && String(e.fingerprint).startsWith('initiate'));
    expect(made.map((e) => String(e.fingerprint).includes('Oliver Brown'))).toEqual([false, false]);
    expect(run.outcomes.get(4)).toMatchObject({ error: { code: 'HELD_SCREENING' } });
  });
});

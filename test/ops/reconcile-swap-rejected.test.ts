// A batch's swap REJECTED at the service since the journal last read it (spec §3: a REJECTED swap is
// put back in both wallets): reconcile reads the swap's status as it reads the payouts', so the two
// legs and their reversal tie out, without a `status` first.
import { expect, it } from 'vitest';
import { JournalWriter } from '../../src/journal/journal.ts';
import { readJournal } from '../journal/read-journal.ts';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { swapReference, swapSnapshotOf } from '../../src/engine/swap.ts';
import type { SwapEvent } from '../../src/journal/lines.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import { reconcile } from '../../src/follow-up/reconciliation.ts';
import { connectionTo, eurToGbpSwap, ledgerJournals, paidBatch, startSb } from './helpers.ts';

it('ties out a swap REJECTED after the run, the journal still saying PROCESSING', async () => {
  const sb = await startSb();
  try {
    const { results } = await paidBatch(sb, { rows: 2 });
    const conn = connectionTo(sb);
    const journal = ledgerJournals()[0]!;
    const batchId = readJournal(journal).events.find((e) => e.t === 'batch')!.batchId as string;
    const reference = swapReference([batchId], 'GBP');
    const key = idempotencyKey(reference, 1, 'swap');
    const body = JSON.stringify(await eurToGbpSwap(conn.client, reference));
    const at = new Date().toISOString();
    const created = await conn.client.swap(body, { idempotencyKey: key });
    const lines: SwapEvent[] = [
      { t: 'swap', phase: 'initiating', currency: 'GBP', reference, attempt: 1, key, body, at },
      { t: 'swap', phase: 'created', currency: 'GBP', reference, attempt: 1, key, swap: swapSnapshotOf(created.swap), at },
    ];
    const w = JournalWriter.open(journal);
    for (const l of lines) w.append(l);
    w.close();
    const rejected = await fetch(`${sb.url}/_sandbox/swaps/${created.swap.id}/status`, { method: 'POST', body: '{"status":"REJECTED"}' });
    expect(rejected.status).toBe(200);

    const rc = await reconcile({ client: conn.client, resultsFile: results, ledgers: [ledgerOf(conn)] });
    expect(rc.report?.problems).toEqual([]);
    expect(rc.report?.swaps).toMatchObject([{ reference, status: 'REJECTED', debit: '0.00', credit: '0.00', ok: true }]);
  } finally {
    await sb.close();
  }
});

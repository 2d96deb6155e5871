// A batch's swap made well before its payouts (the run stopped after the swap, resumed later),
// a page of the account's other movements in between: reconcile reads the wallet transactions down
// to the swap too, so both its legs tie out.
import { expect, it } from 'vitest';
import { JournalWriter } from '../../src/journal/journal.ts';
import { readJournal } from '../journal/read-journal.ts';
import { swapSnapshotOf } from '../../src/engine/swap.ts';
import type { SwapEvent } from '../../src/journal/lines.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import { reconcile } from '../../src/follow-up/reconciliation.ts';
import { connectionTo, eurToGbpSwap, ledgerJournals, paidBatch, startSb } from './helpers.ts';

it('ties out a swap made two hours before the batch paid its rows', async () => {
  const sb = await startSb();
  try {
    const conn = connectionTo(sb);
    const reference = 'PBS-EARLIER-GBP';
    const body = JSON.stringify(await eurToGbpSwap(conn.client, reference));
    const key = 'swap-key-earlier';
    const created = await conn.client.swap(body, { idempotencyKey: key });
    const advance = async () =>
      expect((await fetch(`${sb.url}/_sandbox/clock/advance`, { method: 'POST', body: JSON.stringify({ ms: 3_600_000 }) })).status).toBe(
        200,
      );
    // an hour later, a page of the account's other movements (50 swaps of someone else's), then the batch an hour after
    await advance();
    for (let i = 0; i < 50; i++)
      await conn.client.swap(body.replace(reference, `OTHER-${i}`).replace('1000', '10').replace('851.8', '8.52'), {
        idempotencyKey: `other-${i}`,
      });
    await advance();

    const { results } = await paidBatch(sb, { rows: 2 });
    // the swap's lines, as swap-send journalled them before the rows
    const journal = ledgerJournals()[0]!;
    expect(readJournal(journal).events.some((e) => e.t === 'batch')).toBe(true);
    const at = new Date().toISOString();
    const lines: SwapEvent[] = [
      { t: 'swap', phase: 'initiating', currency: 'GBP', reference, attempt: 1, key, body, at },
      { t: 'swap', phase: 'created', currency: 'GBP', reference, attempt: 1, key, swap: swapSnapshotOf(created.swap), at },
    ];
    const w = JournalWriter.open(journal);
    for (const l of lines) w.append(l);
    w.close();

    const rc = await reconcile({ client: conn.client, resultsFile: results, ledgers: [ledgerOf(conn)] });
    expect(rc.report?.problems).toEqual([]);
    expect(rc.report?.swaps).toMatchObject([{ reference, debit: '-1000.00', credit: '851.80', ok: true }]);
  } finally {
    await sb.close();
  }
});

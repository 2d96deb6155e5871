// The batch's swaps after the run (spec §4.7, §4.8), for `status` and `reconcile`: from the batch's
// journal, refreshed from the swaps list, never sent. A results file names no batch: its journal is
// the one whose rows carry the file's idempotency keys (or whose header names the file).
import { resolve } from 'node:path';
import { isFinalStatus, LIST_MAX_LIMIT } from '../spec/codes.ts';
import { appendToBatch, eachJournal, type Ledger } from '../ledger/account-ledger.ts';
import { foldJournal, type SwapEvent } from '../journal/lines.ts';
import { groupThousands } from '../money.ts';
import { plural } from '../text.ts';
import { readResults, writeResults } from '../results/results.ts';
import type { SwapLine } from '../results/swap-summary.ts';
import { swapLinesOf } from '../engine/outcome.ts';
import { swapSnapshotOf } from '../engine/swap.ts';
import type { ResultRow, ResultsList } from '../results/types.ts';
import { counted, failureOf, readItems, type FetchOptions, type RequestCounts } from './reconcile-fetch.ts';
import { underResultsLock } from './apply-status.ts';

/** The batch's journal and its swaps, one per short currency. */
type BatchSwaps = NonNullable<Awaited<ReturnType<typeof swapsIn>>>;

/** One pass over each journal, no fold: undefined when none is the batch's. `rows`: a results file's, read as they come. */
export async function batchSwapsOf(
  rows: Iterable<ResultRow> | AsyncIterable<ResultRow>,
  file: string,
  ledgers: Iterable<Ledger>,
): Promise<BatchSwaps | undefined> {
  const keys = new Set<string>();
  for await (const r of rows) if (r.result.idempotencyKey) keys.add(r.result.idempotencyKey);
  // (a journal that sent the file's keys; else the newest whose header names the path: next month's run writes it again)
  let named: BatchSwaps | undefined;
  for await (const { ledger, batchId } of eachJournal(ledgers)) {
    const found = await swapsIn(ledger, batchId, keys, resolve(file));
    if (found?.sent) return found;
    if (found && !(named && named.since > found.since)) named = found;
  }
  return named;
}

async function swapsIn(ledger: Ledger, journal: string, keys: Set<string>, path: string) {
  let batchId: string | undefined;
  let [named, sent, since] = [false, false, ''];
  const lines: SwapEvent[] = [];
  await ledger.read(journal, (e) => {
    if (e.t === 'batch' && typeof e.batchId === 'string') {
      batchId = e.batchId;
      if (e.results === path) [named, since] = [true, String(e.createdAt)];
    } else if (e.t === 'initiating' && typeof e.key === 'string' && keys.has(e.key)) sent = true;
    else if (e.t === 'swap') lines.push(e as SwapEvent);
  });
  return (named || sent) && batchId ? { ledger, batchId, swaps: foldJournal(lines).swaps, sent, since } : undefined;
}

/** The swaps not final (spec §3: SUCCESSFUL or REJECTED, a payout's final statuses), from the swaps list (spec §4.8); a move is journalled. No swap to ask about: no request. */
export async function refreshSwaps(o: FetchOptions, batch: BatchSwaps, requests: RequestCounts) {
  const asked = new Map([...batch.swaps.values()].flatMap((s) => (s.swap && !isFinalStatus(s.swap.status) ? [[s.swap.id, s]] : [])));
  const moved: { currency: string; reference: string; id: string; from: string; to: string }[] = [];
  if (!asked.size) return { moved, failures: [] };
  const read = await readItems(asked.keys(), {
    ...o,
    what: 'swaps',
    list: counted(requests, 'swapPages', (page: number) => o.client.listSwaps({ page, limit: LIST_MAX_LIMIT }, { signal: o.stop })),
    get: counted(requests, 'getSwap', (id: string) => o.client.getSwap(id, { signal: o.stop })),
  });
  const lines: SwapEvent[] = [];
  for (const [id, answer] of [...read.listed, ...read.got]) {
    const state = asked.get(id);
    if (!state || answer.status === state.swap!.status) continue;
    const { currency, reference } = state;
    moved.push({ currency, reference, id, from: state.swap!.status, to: answer.status });
    state.swap = swapSnapshotOf(answer);
    lines.push({ t: 'swap', phase: 'status', currency, reference, swap: state.swap, at: new Date().toISOString() });
  }
  appendToBatch(batch.ledger, batch.batchId, lines);
  const failures = [...read.errors].map(([id, e]) => ({ currency: asked.get(id)!.currency, id, ...failureOf(e) }));
  return { moved, failures, halted: read.halted?.message };
}

/** `status`'s step for the batch's swaps; an XLSX results file's Swaps sheet rewritten when it differs. */
export async function statusOfSwaps(o: FetchOptions, file: string, table: ResultsList, ledgers: Iterable<Ledger>, requests: RequestCounts) {
  const batch = await batchSwapsOf(table.rows, file, ledgers);
  if (!batch?.swaps.size) return { swaps: [], moved: [], failures: [] };
  const refresh = await refreshSwaps(o, batch, requests);
  const swaps = swapLinesOf(batch.swaps.values());
  if (table.format === 'xlsx')
    await underResultsLock(file, async () => {
      const now = await readResults(file);
      if (JSON.stringify(now.swaps ?? []) !== JSON.stringify(swaps)) await writeResults(file, { ...now, swaps });
    });
  return { ...refresh, swaps };
}

/** ", 1 swap page, 0 swap status", when swaps were asked about. */
export const swapRequestsText = (r: RequestCounts): string =>
  r.swapPages === undefined && r.getSwap === undefined ? '' : `, ${plural(r.swapPages ?? 0, 'swap page')}, ${r.getSwap ?? 0} swap status`;

/** One line of a swap for a person (spec §2 Swap). */
export function swapText(s: SwapLine): string {
  const amount = (a: string | undefined, c: string | undefined) => (a ? `${groupThousands(a)} ${c ?? ''}`.trim() : '?');
  if (!s.id) return `swap to ${s.currency} ${s.reference}: ${s.status} (no swap known)`;
  return (
    `swap to ${s.currency} ${s.reference}: ${s.id} ${s.status}, ${amount(s.sourceAmount, s.sourceCurrency)} -> ` +
    `${amount(s.destinationAmount, s.destinationCurrency)}${s.exchangeRate ? ` at ${s.exchangeRate}` : ''}`
  );
}

// Reading a paged listing of the service (spec §4.4 payouts, §4.15 wallet transactions: `page`
// from 1, `limit` at most 100, {data, meta}) for what a command needs, and no more: every request
// counts against the key's month (spec §8). The spec says neither in which order a list comes nor
// that every service honours `page`, so a listing ends at the first of:
//
//   found          every item wanted has been seen;
//   end            an empty or short page, or the last one by meta.total;
//   period         the pages are newest first by createdAt and one reached below `stopBelow`
//                  (less a margin: the clocks of a payout and of a movement may differ a little);
//   repeated page  a page equal to the one before (a service ignoring `page`), with a warning;
//   budget         the pages read reach the number of items still missing: asking for each of
//                  those by itself (one request each) costs no more than reading on;
//   stopped        the caller's signal.
//
// A movement made while paging pushes the older ones down a place: an item seen twice is kept once.
import type { Logger } from 'pino';
import { LIST_MAX_LIMIT } from '../spec/codes.ts';
import { isoTime } from '../spec/status-order.ts';

/** One page as the client read it (answers.ts listOf): meta may be missing or partial. */
export interface ListedPage<T> {
  data: T[];
  meta?: { total?: number; limit?: number };
}

export type ListingEnd = 'found' | 'end' | 'period' | 'repeated page' | 'budget' | 'stopped';

export interface PagesOptions<T> {
  fetch: (page: number) => Promise<ListedPage<T>>;
  /** The ids wanted and not seen yet: each is deleted as an item settles it. */
  wanted?: Set<string>;
  /** Default: the item's id. */
  settles?: (item: T) => string | undefined;
  /** Epoch ms: a newest-first listing ends once a page reaches below this, less the margin. */
  stopBelow?: number;
  /** What is listed, for the warning ("payouts", "transactions"). */
  what: string;
  logger?: Logger;
  stop?: AbortSignal;
}

export interface Pages<T> {
  items: T[];
  pages: number;
  ended: ListingEnd;
}

/** Pages go on this long below `stopBelow`. */
const PERIOD_MARGIN_MS = 5 * 60_000;

/** Reads pages until one of the endings above; `wanted` is left holding the ids no page showed. */
export async function readPages<T extends { id?: string; createdAt?: string }>(o: PagesOptions<T>): Promise<Pages<T>> {
  const items: T[] = [];
  const seen = new Set<string>();
  const settles = o.settles ?? ((item: T) => item.id);
  let newestFirst = true;
  let previousFirst: string | undefined;
  let lastTime: number | undefined;
  for (let page = 1; ; page++) {
    if (o.wanted && o.wanted.size === 0) return { items, pages: page - 1, ended: 'found' };
    if (o.wanted && page - 1 >= o.wanted.size) return { items, pages: page - 1, ended: 'budget' };
    if (o.stop?.aborted) return { items, pages: page - 1, ended: 'stopped' };
    const r = await o.fetch(page);
    if (r.data.length === 0) return { items, pages: page, ended: 'end' };
    const firstKey = JSON.stringify(r.data[0]);
    if (page > 1 && firstKey === previousFirst) {
      o.logger?.warn({ page }, `the ${o.what} route gave the same page again (page ignored?): listing stopped`);
      return { items, pages: page, ended: 'repeated page' };
    }
    previousFirst = firstKey;
    for (const item of r.data) {
      if (item.id !== undefined && seen.has(item.id)) continue;
      if (item.id !== undefined) seen.add(item.id);
      items.push(item);
      const id = o.wanted && settles(item);
      if (id !== undefined) o.wanted?.delete(id);
      const at = isoTime(item.createdAt);
      if (at === undefined || (lastTime !== undefined && at > lastTime)) newestFirst = false;
      if (at !== undefined) lastTime = at;
    }
    const size = r.meta?.limit || LIST_MAX_LIMIT;
    const total = r.meta?.total;
    if (total !== undefined ? page * size >= total : r.data.length < size) return { items, pages: page, ended: 'end' };
    if (newestFirst && o.stopBelow !== undefined && lastTime !== undefined && lastTime < o.stopBelow - PERIOD_MARGIN_MS)
      return { items, pages: page, ended: 'period' };
  }
}

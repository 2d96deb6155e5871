// A paged listing (spec §4.4, §4.15) read only as far as a command needs: each request counts against
// the month (§8). The spec promises no order nor that `page` is honoured. An item seen twice (pushed
// down by a new one while paging) is kept once.
import type { Logger } from 'pino';
import { LIST_MAX_LIMIT } from '../spec/codes.ts';
import { utcTime } from '../text.ts';

export interface ListedPage<T> {
  data: T[];
  meta?: { total?: number; limit?: number };
}

export type ListingEnd = 'found' | 'end' | 'period' | 'repeated page' | 'budget' | 'stopped';

export interface PagesOptions<T> {
  fetch: (page: number) => Promise<ListedPage<T>>;
  wanted?: Set<string>;
  settles?: (item: T) => string | undefined;
  /** Epoch ms. */
  stopBelow?: number;
  /** For the warning ("payouts", "transactions"). */
  what: string;
  logger?: Logger;
  stop?: AbortSignal;
}

const PERIOD_MARGIN_MS = 5 * 60_000;

/**
 * Ends at the first of: found (every wanted item seen); end (an empty or short page, or meta.total); period (newest
 * first and below `stopBelow`, less a margin for clocks); repeated page (a service ignoring `page`); budget (pages
 * read reach the items still missing: asking for each costs no more); stopped. `wanted` keeps the ids not shown.
 */
export async function readPages<T extends { id?: string; createdAt?: string }>(
  o: PagesOptions<T>,
): Promise<{ items: T[]; pages: number; ended: ListingEnd }> {
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
      const at = utcTime(item.createdAt);
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

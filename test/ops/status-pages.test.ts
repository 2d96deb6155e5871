// The one pager of status and reconcile (src/client/pages.ts): it reads pages until what is wanted
// is seen, the listing ends or goes below the period, a page repeats, or more pages would cost more
// than asking for each missing item by itself. Pure: the pages come from a function.
import { describe, expect, it } from 'vitest';
import { readPages, type ListedPage } from '../../src/client/pages.ts';

interface Item {
  id: string;
  createdAt?: string;
}

const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString();
/** `n` items, newest first: item i was made i minutes before the newest. */
const listing = (n: number): Item[] => Array.from({ length: n }, (_, i) => ({ id: `p${i}`, createdAt: at(10_000 - i) }));

/** A service's list route over `items`: pages of 100, with meta unless told not to; every page asked is recorded. */
function service(items: Item[], o: { meta?: boolean; ignorePage?: boolean } = {}) {
  const asked: number[] = [];
  const fetch = (page: number): Promise<ListedPage<Item>> => {
    asked.push(page);
    const p = o.ignorePage ? 1 : page;
    const data = items.slice((p - 1) * 100, p * 100);
    return Promise.resolve(o.meta === false ? { data } : { data, meta: { total: items.length, limit: 100 } });
  };
  return { asked, fetch };
}

describe('readPages', () => {
  it('stops once every wanted item is seen, and leaves the wanted set holding what no page showed', async () => {
    const s = service(listing(1000));
    const wanted = new Set(['p3', 'p150', 'p160']);
    const r = await readPages({ fetch: s.fetch, wanted, what: 'payouts' });
    expect(r).toMatchObject({ pages: 2, ended: 'found' });
    expect(s.asked).toEqual([1, 2]);
    expect(wanted.size).toBe(0);
  });

  it('ends on the last page by meta.total, or without meta on a short page', async () => {
    const withMeta = service(listing(200));
    expect(await readPages({ fetch: withMeta.fetch, what: 'payouts' })).toMatchObject({ pages: 2, ended: 'end' });
    expect(withMeta.asked).toEqual([1, 2]); // no empty third page
    const bare = service(listing(250), { meta: false });
    const r = await readPages({ fetch: bare.fetch, what: 'payouts' });
    expect(r).toMatchObject({ pages: 3, ended: 'end' });
    expect(r.items).toHaveLength(250);
  });

  it('never reads more pages than items are still missing: those are for one request each', async () => {
    const s = service(listing(1000));
    const wanted = new Set(['gone-1', 'gone-2', 'p0']);
    const r = await readPages({ fetch: s.fetch, wanted, what: 'payouts' });
    expect(r).toMatchObject({ pages: 2, ended: 'budget' });
    expect([...wanted].sort()).toEqual(['gone-1', 'gone-2']);
    expect(await readPages({ fetch: s.fetch, wanted: new Set(), what: 'payouts' })).toMatchObject({ pages: 0, ended: 'found' });
  });

  it('stops with a warning when a page repeats (a service ignoring page), instead of looping', async () => {
    const s = service(listing(1000), { ignorePage: true });
    const warned: string[] = [];
    const logger = { warn: (_: unknown, m: string) => warned.push(m) } as never;
    const r = await readPages({ fetch: s.fetch, what: 'transactions', logger });
    expect(r).toMatchObject({ pages: 2, ended: 'repeated page' });
    expect(r.items).toHaveLength(100);
    expect(warned).toEqual(['the transactions route gave the same page again (page ignored?): listing stopped']);
  });

  it('stops below the period only when the pages are newest first', async () => {
    const stopBelow = Date.parse(at(10_000 - 150)) + 5 * 60_000 + 1; // inside page 2, less the margin
    const newest = service(listing(1000));
    expect(await readPages({ fetch: newest.fetch, stopBelow, what: 'transactions' })).toMatchObject({ pages: 2, ended: 'period' });
    const oldest = service(listing(300).reverse());
    expect(await readPages({ fetch: oldest.fetch, stopBelow, what: 'transactions' })).toMatchObject({ pages: 3, ended: 'end' });
  });

  it('keeps an item pushed onto the next page by a new one once', async () => {
    const items = listing(150);
    let calls = 0;
    const fetch = (page: number): Promise<ListedPage<Item>> => {
      // a new item arrives after page 1 was read: page 2 starts with page 1's last item
      const now = calls++ ? [{ id: 'new', createdAt: at(20_000) }, ...items] : items;
      return Promise.resolve({ data: now.slice((page - 1) * 100, page * 100), meta: { total: now.length } });
    };
    const r = await readPages({ fetch, what: 'transactions' });
    expect(r.items.map((i) => i.id)).toEqual(items.map((i) => i.id));
  });
});

// A SpillList (src/files/spill.ts): a batch's rows kept in a file, not in memory (issue 44).
import { readdirSync, readlinkSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SpillList, listView } from '../../src/files/spill.ts';
import { Dec } from '../../src/money.ts';

type Item = { n: number; amount: Dec; name: string };
const revive = (j: unknown): Item => {
  const x = j as Item;
  return { ...x, amount: new Dec(x.amount) };
};

describe('a SpillList', () => {
  it('gives back each item as written, by index and in order, decimals exact, across its write buffer', () => {
    const list = new SpillList(revive);
    const n = 3000; // (several 64 KB flushes)
    for (let i = 0; i < n; i++) list.push({ n: i, amount: new Dec(`1234567890123456789.${i}`), name: `payee ${i} – Zoë` });
    expect(list.length).toBe(n);
    expect(list.at(0)!.amount.toFixed()).toBe('1234567890123456789');
    expect(list.at(2999)!.amount.toFixed()).toBe('1234567890123456789.2999');
    expect(list.at(-1)!.n).toBe(2999);
    expect(list.at(n)).toBeUndefined();
    expect([...list].map((x) => x.n)).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(list.filter((x) => x.n % 1000 === 0).map((x) => x.name)).toEqual(['payee 0 – Zoë', 'payee 1000 – Zoë', 'payee 2000 – Zoë']);
    expect(list.some((x) => x.n === 2500)).toBe(true);
    expect(list.find((x) => x.n === 2500)!.name).toBe('payee 2500 – Zoë');
    expect(list.find((x) => x.n === n)).toBeUndefined();
    expect(list.flatMap((x) => (x.n < 2 ? [x.n, x.n] : []))).toEqual([0, 0, 1, 1]);
  });

  it('holds no item: each read is a new copy, and a change stays only when set', () => {
    const list = new SpillList(revive);
    list.push({ n: 1, amount: new Dec(1), name: 'a' });
    list.push({ n: 2, amount: new Dec(2), name: 'b' });
    const first = list.at(0)!;
    expect(list.at(0)).not.toBe(first);
    first.name = 'changed';
    expect(list.at(0)!.name).toBe('a');
    list.set(0, first);
    expect(list.at(0)!.name).toBe('changed');
    expect(list.at(1)!.name).toBe('b');
    expect(() => list.set(2, first)).toThrow(RangeError);
  });

  it('leaves no file behind: its file is unlinked as soon as it is open (Linux: /proc)', () => {
    const open = () =>
      readdirSync('/proc/self/fd').flatMap((fd) => {
        try {
          return [readlinkSync(`/proc/self/fd/${fd}`)];
        } catch {
          return []; // (the listing's own descriptor, closed since)
        }
      });
    const before = new Set(open());
    const list = new SpillList(revive);
    list.push({ n: 1, amount: new Dec(1), name: 'a' });
    expect(list.at(0)!.n).toBe(1);
    const mine = open().filter((l) => !before.has(l) && l.includes('/payout-batch-'));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatch(/ \(deleted\)$/);
  });
});

describe('a list view', () => {
  it('makes item i when it is read, never before', () => {
    const made: number[] = [];
    const view = listView(5, (i) => (made.push(i), i * 10));
    expect(made).toEqual([]);
    expect(view.at(3)).toBe(30);
    expect(view.at(5)).toBeUndefined();
    expect(made).toEqual([3]);
    expect(view.map((x) => x + 1)).toEqual([1, 11, 21, 31, 41]);
  });
});

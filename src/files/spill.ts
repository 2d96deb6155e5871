// A batch's rows in an unlinked file (README.md): a run holds two numbers a row, not the rows; the
// file is freed with the list (or the process).
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { attempt } from './attempt.ts';

/** What the engine reads of a batch's rows: an array, a SpillList, or a view of either (ReadList's methods). */
export type RowList<T> = Iterable<T> & Pick<ReadList<T>, 'length' | 'at' | 'map' | 'filter' | 'flatMap' | 'some' | 'find' | 'forEach'>;

/** A list read item by item: the array methods the engine uses, one item alive at a time. */
abstract class ReadList<T> {
  abstract readonly length: number;
  /** Item i, 0 <= i < length. */
  protected abstract item(i: number): T;

  at(i: number): T | undefined {
    if (i < 0) i += this.length;
    return i < 0 || i >= this.length ? undefined : this.item(i);
  }

  *[Symbol.iterator](): Iterator<T> {
    for (let i = 0; i < this.length; i++) yield this.item(i);
  }

  map<U>(f: (item: T, i: number) => U): U[] {
    return Array.from(this, f);
  }

  filter(f: (item: T) => boolean): T[] {
    return this.flatMap((x) => (f(x) ? [x] : []));
  }

  flatMap<U>(f: (item: T, i: number) => U | readonly U[]): U[] {
    return Array.from(this, f).flat() as U[];
  }

  some(f: (item: T) => boolean): boolean {
    return this.find(f) !== undefined;
  }

  find(f: (item: T) => boolean): T | undefined {
    for (const x of this) if (f(x)) return x;
    return undefined;
  }

  forEach(f: (item: T, i: number) => void): void {
    for (let i = 0; i < this.length; i++) f(this.item(i), i);
  }
}

/** `length` items, item i made by `item(i)` when read: a list of rows by number without holding them. */
export const listView = <T>(length: number, item: (i: number) => T): RowList<T> =>
  new (class extends ReadList<T> {
    readonly length = length;
    protected item = item;
  })();

/** Closes a list's file once the list is collected (a long `watch` or `listen` runs many batches). */
// (a callback that throws would end the process; the file goes with it anyway)
const closeFile = new FinalizationRegistry<number>((fd) => attempt(() => closeSync(fd)));
const FLUSH_AT = 1 << 16;

export class SpillList<T> extends ReadList<T> {
  private readonly fd: number;
  /** Where item i starts and ends in the file: two numbers an item. */
  private bounds = new Float64Array(1024);
  private size = 0;
  private end = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  /** `revive` turns an item's JSON back into the item (a decimal from its text, ...). */
  constructor(private readonly revive: (json: unknown) => T) {
    super();
    const dir = mkdtempSync(join(tmpdir(), 'payout-batch-'));
    this.fd = openSync(join(dir, 'list'), 'w+', 0o600);
    rmSync(dir, { recursive: true, force: true });
    closeFile.register(this, this.fd);
  }

  get length(): number {
    return this.size;
  }

  push(item: T): void {
    this.place(this.size++, item);
  }

  /** Item i is now `item` (the old text stays in the file, unread). */
  set(i: number, item: T): void {
    if (i < 0 || i >= this.size) throw new RangeError(`no item ${i} in a list of ${this.size}`);
    this.place(i, item);
  }

  protected item(i: number): T {
    this.flush();
    const start = this.bounds[2 * i]!;
    const buf = Buffer.allocUnsafe(this.bounds[2 * i + 1]! - start);
    readSync(this.fd, buf, 0, buf.length, start);
    return this.revive(JSON.parse(buf.toString('utf8')));
  }

  private place(i: number, item: T): void {
    const text = Buffer.from(JSON.stringify(item), 'utf8');
    if (2 * i + 1 >= this.bounds.length) {
      const grown = new Float64Array(this.bounds.length * 2);
      grown.set(this.bounds);
      this.bounds = grown;
    }
    this.bounds[2 * i] = this.end;
    this.bounds[2 * i + 1] = this.end += text.length;
    this.pending.push(text);
    this.pendingBytes += text.length;
    if (this.pendingBytes >= FLUSH_AT) this.flush();
  }

  private flush(): void {
    if (!this.pending.length) return;
    const all = Buffer.concat(this.pending);
    writeSync(this.fd, all, 0, all.length, this.end - all.length);
    this.pending = [];
    this.pendingBytes = 0;
  }
}

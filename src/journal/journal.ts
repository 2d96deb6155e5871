// The per-batch journal: one append-only JSON-lines file. Each line is one small event; folding
// the lines in order gives every row's state. Appending costs the same for the 1st row and the
// 100,000th (the file is never rewritten), and an append can be made durable with fsync before it
// returns: the engine does so around every request that can move money.
//
// A crash can tear the last line (a write cut short by kill -9 or a power loss). Such a line is
// not JSON: it is skipped and counted, never fatal; the next append starts on a fresh line.
import { closeSync, existsSync, fstatSync, fsyncSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/** Any event: a type `t` and plain JSON fields. The engine defines the types it writes. */
export interface JournalEvent {
  t: string;
  [field: string]: unknown;
}

const CHUNK = 1 << 20;
const NL = 0x0a;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** What a pass over a journal file found, besides its events. */
export interface JournalScan {
  /** Events handed to the callback. */
  events: number;
  /** Lines that were not JSON (a torn last line after a crash; in theory any damaged line). */
  skipped: number;
  /** The file did not end with a newline: its last line was torn. */
  tornTail: boolean;
}

/** One line: an event, blank, or damaged (not JSON, or not an event). */
export function parseLine<E extends JournalEvent>(line: string): E | 'blank' | 'damaged' {
  if (line.trim() === '') return 'blank';
  let v: unknown;
  try {
    v = JSON.parse(line) as unknown;
  } catch {
    return 'damaged';
  }
  return v && typeof v === 'object' && typeof (v as JournalEvent).t === 'string' ? (v as E) : 'damaged';
}

/**
 * Hands each complete line of the file from byte `from` to `onLine`, reading `chunkBytes` at a time:
 * nothing but the current chunk and the line it ends in is held. Lines are cut at the newline byte,
 * which is never part of a multi-byte UTF-8 character, so a character cut across reads is decoded
 * whole. As a TextDecoder does, a UTF-8 BOM at the start of the file is not part of the first line.
 * Returns the bytes after the last newline (a line not complete yet) and the offset just past it.
 */
function readLines(path: string, from: number, chunkBytes: number, onLine: (line: string) => void): { rest: Buffer; next: number } {
  let rest = Buffer.alloc(0);
  let next = from;
  if (!existsSync(path)) return { rest, next };
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(Math.max(chunkBytes, BOM.length));
    if (next === 0 && readSync(fd, buf, 0, BOM.length, 0) === BOM.length && buf.subarray(0, BOM.length).equals(BOM)) next = BOM.length;
    for (let n = readSync(fd, buf, 0, chunkBytes, next); n > 0; n = readSync(fd, buf, 0, chunkBytes, next + rest.length)) {
      const bytes = rest.length ? Buffer.concat([rest, buf.subarray(0, n)]) : buf.subarray(0, n);
      let start = 0;
      for (let nl = bytes.indexOf(NL); nl !== -1; nl = bytes.indexOf(NL, start)) {
        onLine(bytes.toString('utf8', start, nl));
        start = nl + 1;
      }
      next += start;
      rest = Buffer.from(bytes.subarray(start)); // a copy: buf is read into again
    }
  } finally {
    closeSync(fd);
  }
  return { rest, next };
}

/**
 * Hands every complete event of a journal file to `onEvent`, in order, while reading it (1 MiB at
 * a time), so a fold of a 100 MB journal keeps only the row states. A missing file is an empty
 * journal. `chunkBytes`: the size of a read (tests use tiny ones to cut lines and characters across reads).
 */
export function scanJournal<E extends JournalEvent = JournalEvent>(path: string, onEvent: (e: E) => void, chunkBytes = CHUNK): JournalScan {
  const scan: JournalScan = { events: 0, skipped: 0, tornTail: false };
  const take = (line: string) => {
    const e = parseLine<E>(line);
    if (e === 'damaged') scan.skipped++;
    else if (e !== 'blank') {
      scan.events++;
      onEvent(e);
    }
  };
  const { rest } = readLines(path, 0, chunkBytes, take);
  // No newline after the last line: the write was cut short. Kept only if it is whole JSON (a
  // crash between the text and its newline), else skipped.
  scan.tornTail = rest.length > 0;
  if (scan.tornTail) take(rest.toString('utf8'));
  return scan;
}

/** Reads every complete event of a journal file, in order, into an array. A missing file is an empty journal. */
export function readJournal<E extends JournalEvent = JournalEvent>(path: string): Omit<JournalScan, 'events'> & { events: E[] } {
  const events: E[] = [];
  const { skipped, tornTail } = scanJournal<E>(path, (e) => events.push(e));
  return { events, skipped, tornTail };
}

/**
 * The events of the complete lines appended to a journal after byte `from`, and where to read from
 * next time. While a run goes on, `listen` and `status` append status lines to its journal from
 * other processes; the run picks them up with this before it rewrites the results file. A line
 * still without its newline (being written right now) is left for the next call; `skipped` counts
 * the damaged ones (not JSON).
 */
export function readAppended<E extends JournalEvent = JournalEvent>(
  path: string,
  from: number,
): { events: E[]; next: number; skipped: number } {
  const events: E[] = [];
  let skipped = 0;
  const { next } = readLines(path, from, CHUNK, (line) => {
    const e = parseLine<E>(line);
    if (e === 'damaged') skipped++;
    else if (e !== 'blank') events.push(e);
  });
  return { events, next, skipped };
}

/**
 * An open journal for appending. Writes are synchronous: an event is on its way to the disk (and
 * with `sync`, on the disk) when append returns, and concurrent rows cannot interleave bytes.
 */
export class JournalWriter {
  private constructor(
    readonly path: string,
    private fd: number | undefined,
  ) {}

  /**
   * Opens (creating it and its folder when absent) for appending; repairs a torn tail. Created for
   * this user only (0600 in a 0700 folder): a journal holds beneficiaries and account numbers.
   */
  static open(path: string): JournalWriter {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const fd = openSync(path, 'a+', 0o600);
    const size = fstatSync(fd).size;
    if (size > 0) {
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      // A torn last line stays where it is (it is skipped when read); new events start on a new line.
      if (last[0] !== 0x0a) writeSync(fd, '\n');
    }
    return new JournalWriter(path, fd);
  }

  /** Appends one event as one line. `sync`: fsync before returning (the money-moving steps). */
  append(event: JournalEvent, options: { sync?: boolean } = {}): void {
    if (this.fd === undefined) throw new Error(`journal ${this.path} is closed`);
    const text = JSON.stringify(event);
    writeSync(this.fd, text + '\n');
    if (options.sync) fsyncSync(this.fd);
  }

  close(): void {
    if (this.fd === undefined) return;
    try {
      fsyncSync(this.fd);
    } finally {
      closeSync(this.fd);
      this.fd = undefined;
    }
  }
}

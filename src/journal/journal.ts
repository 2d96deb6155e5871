// The per-batch journal: one append-only JSON-lines file. Each line is one small event; folding
// the lines in order gives every row's state. Appending costs the same for the 1st row and the
// 100,000th (the file is never rewritten), and an append can be made durable with fsync before it
// returns: the engine does so around every request that can move money.
//
// A crash can tear the last line (a write cut short by kill -9 or a power loss). Such a line is
// not JSON: it is skipped and counted, never fatal; the next append starts on a fresh line.
import { closeSync, existsSync, fstatSync, fsyncSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { StringDecoder } from 'node:string_decoder';

/** Any event: a type `t` and plain JSON fields. The engine defines the types it writes. */
export interface JournalEvent {
  t: string;
  [field: string]: unknown;
}

const CHUNK = 1 << 20;
const NL = 0x0a;

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
function parseLine<E extends JournalEvent>(line: string): E | 'blank' | 'damaged' {
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
 * Hands every complete event of a journal file to `onEvent`, in order, while reading it (1 MiB at
 * a time): nothing but the current chunk and the line it ends in is held, so a fold of a 100 MB
 * journal keeps only the row states. A missing file is an empty journal. As a TextDecoder does, a
 * UTF-8 BOM at the start of the file is not part of the first line.
 *
 * `chunkBytes`: the size of a read (tests use tiny ones to cut lines and characters across reads).
 */
export function scanJournal<E extends JournalEvent = JournalEvent>(path: string, onEvent: (e: E) => void, chunkBytes = CHUNK): JournalScan {
  let events = 0;
  let skipped = 0;
  if (!existsSync(path)) return { events, skipped, tornTail: false };
  const take = (line: string) => {
    const e = parseLine<E>(line);
    if (e === 'blank') return;
    if (e === 'damaged') skipped++;
    else {
      events++;
      onEvent(e);
    }
  };
  const fd = openSync(path, 'r');
  let rest = ''; // the text after the last newline read: a line not complete yet
  try {
    const buf = Buffer.allocUnsafe(chunkBytes);
    const decoder = new StringDecoder('utf8'); // a character cut across two reads is decoded whole
    let start = true;
    for (let n = readSync(fd, buf, 0, buf.length, null); n > 0; n = readSync(fd, buf, 0, buf.length, null)) {
      let text = rest + decoder.write(buf.subarray(0, n));
      if (start && text !== '') {
        start = false;
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      }
      const lines = text.split('\n');
      rest = lines.pop()!;
      lines.forEach(take);
    }
    rest += decoder.end();
  } finally {
    closeSync(fd);
  }
  // No newline after the last line: the write was cut short. Kept only if it is whole JSON (a
  // crash between the text and its newline), else skipped.
  if (rest !== '') take(rest);
  return { events, skipped, tornTail: rest !== '' };
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
  if (!existsSync(path)) return { events, next: from, skipped };
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size <= from) return { events, next: from, skipped };
    const buf = Buffer.allocUnsafe(size - from);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, from + got);
      if (n === 0) break;
      got += n;
    }
    const last = got > 0 ? buf.lastIndexOf(NL, got - 1) : -1;
    if (last === -1) return { events, next: from, skipped };
    for (const line of buf.toString('utf8', 0, last).split('\n')) {
      const e = parseLine<E>(line);
      if (e === 'damaged') skipped++;
      else if (e !== 'blank') events.push(e);
    }
    return { events, next: from + last + 1, skipped };
  } finally {
    closeSync(fd);
  }
}

/**
 * An open journal for appending. Writes are synchronous: an event is on its way to the disk (and
 * with `sync`, on the disk) when append returns, and concurrent rows cannot interleave bytes.
 */
export class JournalWriter {
  private fd: number | undefined;

  private constructor(
    readonly path: string,
    fd: number,
  ) {
    this.fd = fd;
  }

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
    const line = JSON.stringify(event) + '\n';
    writeSync(this.fd, line);
    if (options.sync) fsyncSync(this.fd);
  }

  sync(): void {
    if (this.fd !== undefined) fsyncSync(this.fd);
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

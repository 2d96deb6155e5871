// The per-batch journal file: append-only JSON lines, fsynced when asked, a torn line skipped (README.md beside this file).
import { closeSync, fstatSync, fsyncSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { attempt, unlessMissing } from '../files/attempt.ts';

export interface JournalEvent {
  t: string;
  [field: string]: unknown;
}

const CHUNK = 1 << 20;
const NL = 0x0a;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export interface JournalScan {
  events: number;
  /** Lines that were not JSON (a torn last line after a crash). */
  skipped: number;
  /** The file did not end with a newline: its last line was torn. */
  tornTail: boolean;
}

/** One line: an event, blank, or damaged (not JSON, or not an event). */
export function parseLine<E extends JournalEvent>(line: string): E | 'blank' | 'damaged' {
  if (line.trim() === '') return 'blank';
  const v = attempt((): unknown => JSON.parse(line));
  return v && typeof v === 'object' && typeof (v as JournalEvent).t === 'string' ? (v as E) : 'damaged';
}

/**
 * Hands each event from byte `from` to `onEvent`, holding one chunk. Lines are cut at the newline byte, never inside a
 * UTF-8 character; a leading BOM is skipped. `next`: past the last newline; `tail`: read what follows it too (else left).
 */
function readEvents<E extends JournalEvent>(path: string, from: number, chunkBytes: number, tail: boolean, onEvent: (e: E) => void) {
  const scan = { events: 0, skipped: 0, tornTail: false, next: from };
  const take = (line: string) => {
    const e = parseLine<E>(line);
    if (e === 'damaged') scan.skipped++;
    else if (e !== 'blank') {
      scan.events++;
      onEvent(e);
    }
  };
  const fd = unlessMissing(() => openSync(path, 'r'));
  if (fd === undefined) return scan; // (only a missing journal is an empty one)
  let rest = Buffer.alloc(0);
  try {
    const buf = Buffer.allocUnsafe(Math.max(chunkBytes, BOM.length));
    if (from === 0 && readSync(fd, buf, 0, BOM.length, 0) === BOM.length && buf.subarray(0, BOM.length).equals(BOM)) scan.next = BOM.length;
    for (let n = readSync(fd, buf, 0, chunkBytes, scan.next); n > 0; n = readSync(fd, buf, 0, chunkBytes, scan.next + rest.length)) {
      const bytes = rest.length ? Buffer.concat([rest, buf.subarray(0, n)]) : buf.subarray(0, n);
      let start = 0;
      for (let nl = bytes.indexOf(NL); nl !== -1; nl = bytes.indexOf(NL, start)) {
        take(bytes.toString('utf8', start, nl));
        start = nl + 1;
      }
      scan.next += start;
      rest = Buffer.from(bytes.subarray(start)); // a copy: buf is read into again
    }
  } finally {
    closeSync(fd);
  }
  // (a last line without newline is kept only if it is whole JSON)
  scan.tornTail = tail && rest.length > 0;
  if (scan.tornTail) take(rest.toString('utf8'));
  return scan;
}

/** Hands every event of a journal file to `onEvent`, in order, while reading it. A missing file is an empty journal. */
export function scanJournal<E extends JournalEvent = JournalEvent>(path: string, onEvent: (e: E) => void, chunkBytes = CHUNK): JournalScan {
  const { events, skipped, tornTail } = readEvents(path, 0, chunkBytes, true, onEvent);
  return { events, skipped, tornTail };
}

/** Hands each event of the complete lines appended after byte `from` (by `listen`, `status` during a run) to `onEvent`; `next`: where to read next. */
export const scanAppended = <E extends JournalEvent = JournalEvent>(path: string, from: number, onEvent: (e: E) => void) =>
  readEvents(path, from, CHUNK, false, onEvent);

/** An open journal. Writes are synchronous: concurrent rows cannot interleave bytes. */
export class JournalWriter {
  private constructor(
    readonly path: string,
    private fd: number | undefined,
  ) {}

  /** Opens for appending, created 0600 in a 0700 folder (it holds account numbers); a torn tail gets a newline. */
  static open(path: string): JournalWriter {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const fd = openSync(path, 'a+', 0o600);
    const size = fstatSync(fd).size;
    const last = Buffer.alloc(1);
    if (size > 0 && (readSync(fd, last, 0, 1, size - 1) === 0 || last[0] !== NL)) writeSync(fd, '\n');
    return new JournalWriter(path, fd);
  }

  /** A write failed mid-line: the next line starts on a fresh one. */
  private torn = false;

  /** Appends one event as one line, whole or it throws (a full disk takes part of it). `sync`: fsync before returning (the money-moving steps). */
  append(event: JournalEvent, options: { sync?: boolean } = {}): void {
    if (this.fd === undefined) throw new Error(`journal ${this.path} is closed`);
    const bytes = Buffer.from(`${this.torn ? '\n' : ''}${JSON.stringify(event)}\n`);
    this.torn = true;
    for (let at = 0; at < bytes.length;) at += writeSync(this.fd, bytes, at);
    this.torn = false;
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

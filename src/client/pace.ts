// One request pace per API key for every process of this user on this host (issue 15: a cron
// `watch` and a person's `run` with one key each took the whole 5 a second, drew 429s, and each
// 429 also counted against the month).
//
// The limiter of a process (throttle.ts) paces its own starts; before it grants one, it also takes
// one here: a small JSON file per key and service in the per-user state folder (the quota
// counter's, quota.ts defaultStateDir), holding the starts of the last window of every process,
// read and written under a short lock (files/lock.ts: a holder that died on this host is known at
// once from the process table; one of another host is taken over after 2 s). A start is granted
// when fewer than N starts of all processes lie in the window; so the starts of all processes
// together keep the limiter's promise: at most N in any rolling window + margin.
//
// A start is dated when its request is sent (throttle.ts Slot.markSent), just after the grant, or
// later still for the first requests of a process (http.ts). Until then the other processes count
// it as starting now (for at most PENDING_MS), never earlier than it will.
//
// The file is named by a hash of the base URL and the key's fingerprint, never the key. A team
// ledger keeps the same promise in its database for every host (ledger/pg-pace.ts, waitBeforeStart).
// Everything here is synchronous and short: it runs when a start is granted, a few times a second.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readJsonFile, writeFileAtomicSync } from '../files/atomic.ts';
import { tryLock } from '../files/lock.ts';

/** A start granted and not marked sent yet counts as starting now, for at most this long. */
export const PENDING_MS = 2000;

export type Take = { ok: true; id: string } | { ok: false; waitMs: number };

/** The name of one key's pace at one service: a hash of the base URL and the key's fingerprint. */
export function paceName(baseUrl: string, fingerprint: string): string {
  return createHash('sha256')
    .update(`payout-batch pace v1\0${baseUrl.replace(/\/+$/, '')}\0${fingerprint}`)
    .digest('hex')
    .slice(0, 24);
}

/**
 * The rule of a shared pace: given the times the starts in the window count from (sorted), a new
 * one may start now when fewer than `limit` lie there; else how long until the one that blocks
 * it leaves the window.
 */
export function waitBeforeStart(times: readonly number[], limit: number, spanMs: number, now: number): number | undefined {
  if (times.length < limit) return undefined;
  const blocking = times[times.length - limit]!;
  return Math.max(1, Math.ceil(blocking + spanMs - now) + 1);
}

/** How soon to try again when another process holds the lock (for a millisecond or so). */
const BUSY_RETRY_MS = 2;

/** Wall-clock milliseconds with a fraction, the same clock in every process of the host. */
export const wallNow = (): number => performance.timeOrigin + performance.now();

interface Start {
  /** `<pid>.<tag>-<n>`: whose start, to date it when it is sent. */
  id: string;
  t: number;
  /** Granted, not marked sent yet. */
  p?: 1;
}

interface PaceFile {
  v: 1;
  starts: Start[];
}

/** A key's pace shared with other processes: this host's file (SharedPace), or the team ledger's for every host (asynchronous). */
export interface PaceShare {
  take(limit: number, spanMs: number): Take | Promise<Take>;
  /** The start was sent (at `at`, wallNow's clock, where the share keeps this host's clock). */
  markSent(id: string, at?: number): void;
  unsent(id: string): void;
}

/** The pace file of one key at one service, in a state folder. */
export function pacePath(stateDir: string, baseUrl: string, fingerprint: string): string {
  return join(stateDir, 'pace', `${paceName(baseUrl, fingerprint)}.json`);
}

export class SharedPace implements PaceShare {
  private seq = 0;
  /** Names this process's starts (its pid, and which SharedPace of it: tests run several). */
  private readonly tag = `${process.pid}.${randomBytes(3).toString('hex')}`;
  /** Our starts marked sent (id -> time), or that ended unsent ('unsent'), not written yet. */
  private marks = new Map<string, number | 'unsent'>();
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  /** The file could not be used: this process paces alone (the local limiter still holds). */
  failed: Error | undefined;

  constructor(
    readonly path: string,
    private readonly onError?: (e: Error) => void,
    /** wallNow, or a test's fixed clock. */
    private readonly now: () => number = wallNow,
  ) {}

  /**
   * Takes a start when fewer than `limit` starts of all processes lie in the last `spanMs`: then
   * records it (as not yet sent) and returns its id; otherwise says how long to wait. When the file
   * cannot be used, every start is let through (see `failed`).
   */
  take(limit: number, spanMs: number): Take {
    if (this.failed) return { ok: true, id: '' };
    const locked = this.lock();
    if (locked === 'busy') return { ok: false, waitMs: BUSY_RETRY_MS };
    if (!locked) return { ok: true, id: '' };
    try {
      const now = this.now();
      // the starts still inside the window (read() applied our marks: they are written with them)
      const starts = this.read().filter((s) => effective(s, now) > now - spanMs);
      const times = starts.map((s) => effective(s, now)).sort((a, b) => a - b);
      const waitMs = waitBeforeStart(times, limit, spanMs, now);
      if (waitMs !== undefined) {
        this.write(starts);
        return { ok: false, waitMs };
      }
      const id = `${this.tag}-${++this.seq}`;
      starts.push({ id, t: now, p: 1 });
      this.write(starts);
      return { ok: true, id };
    } catch (e) {
      this.fail(e);
      return { ok: true, id: '' };
    } finally {
      locked();
    }
  }

  /** The start was sent (now, or at `at`, wallNow's clock); a later mark moves it later. */
  markSent(id: string, at: number = this.now()): void {
    if (!id || this.failed) return;
    this.marks.set(id, at);
    this.scheduleFlush(0);
  }

  /** The request ended without being sent: the start keeps its grant time. */
  unsent(id: string): void {
    if (!id || this.failed || this.marks.has(id)) return;
    this.marks.set(id, 'unsent');
    this.scheduleFlush(0);
  }

  private scheduleFlush(ms: number): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      this.flush();
    }, ms);
    // a pending start left behind by an exiting process counts as now for PENDING_MS at most
    this.flushTimer.unref?.();
  }

  /** Writes the marks (under the lock); tried again shortly when the lock is busy. */
  flush(): void {
    if (!this.marks.size || this.failed) return;
    const locked = this.lock();
    if (locked === 'busy') return this.scheduleFlush(BUSY_RETRY_MS);
    if (!locked) return;
    try {
      this.write(this.read());
    } catch (e) {
      this.fail(e);
    } finally {
      locked();
    }
  }

  private read(): Start[] {
    const file = readJsonFile(this.path) as PaceFile | undefined;
    const starts = file?.v === 1 && Array.isArray(file.starts) ? file.starts.filter(isStart) : [];
    for (const s of starts) {
      const m = this.marks.get(s.id);
      if (m === undefined) continue;
      if (m !== 'unsent' && m > s.t) s.t = m;
      delete s.p;
    }
    this.marks.clear();
    return starts;
  }

  private write(starts: Start[]): void {
    writeFileAtomicSync(this.path, JSON.stringify({ v: 1, starts } satisfies PaceFile), { mode: 0o600 });
  }

  /** The lock's release function; 'busy' when another process holds it; undefined when unusable. */
  private lock(): (() => void) | 'busy' | undefined {
    try {
      mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
      const held = tryLock(`${this.path}.lock`, { staleMs: 2000, purpose: 'shared pace' });
      return held ? () => held.release() : 'busy';
    } catch (e) {
      this.fail(e);
      return undefined;
    }
  }

  private fail(e: unknown): void {
    if (this.failed) return;
    this.failed = e instanceof Error ? e : new Error(String(e));
    this.onError?.(this.failed);
  }
}

const isStart = (s: unknown): s is Start =>
  !!s && typeof (s as Start).id === 'string' && typeof (s as Start).t === 'number' && Number.isFinite((s as Start).t);

/** When a start counts: its time; a pending one counts as now, for PENDING_MS at most. */
function effective(s: Start, now: number): number {
  return s.p ? Math.max(s.t, Math.min(now, s.t + PENDING_MS)) : s.t;
}

// One pace per key for every process of this user on this host (a cron `watch` and a `run` drew 429s):
// a JSON file per key and service in the state folder holds every process's starts of the last window,
// under a short lock; synchronous, as it runs at each grant. A start not yet sent counts as now.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readJsonFile, writeFileAtomicSync } from '../files/atomic.ts';
import { tryLock } from '../files/lock.ts';

/** A start granted and not marked sent yet counts as starting now, for at most this long. */
export const PENDING_MS = 2000;

export type Take = { ok: true; id: string } | { ok: false; waitMs: number };

/** A hash of the base URL and the key's fingerprint, never the key. */
export function paceName(baseUrl: string, fingerprint: string): string {
  const base = baseUrl.replace(/\/+$/, '');
  return createHash('sha256').update(`payout-batch pace v1\0${base}\0${fingerprint}`).digest('hex').slice(0, 24);
}

/** Undefined when fewer than `limit` of the sorted `times` lie in the window; else how long until one leaves it. */
export function waitBeforeStart(times: readonly number[], limit: number, spanMs: number, now: number): number | undefined {
  if (times.length < limit) return undefined;
  const blocking = times[times.length - limit]!;
  return Math.max(1, Math.ceil(blocking + spanMs - now) + 1);
}

/** Another process holds the lock for a millisecond or so. */
const BUSY_RETRY_MS = 2;

/** The same clock in every process of the host. */
export const wallNow = (): number => performance.timeOrigin + performance.now();

interface Start {
  /** `<pid>.<tag>-<n>` */
  id: string;
  t: number;
  /** Not marked sent yet. */
  p?: 1;
}

interface PaceFile {
  v: 1;
  starts: Start[];
}

/** This host's file (SharedPace), or the team ledger's for every host (asynchronous). */
export interface PaceShare {
  take(limit: number, spanMs: number): Take | Promise<Take>;
  /** `at`: wallNow's clock. */
  markSent(id: string, at?: number): void;
  unsent(id: string): void;
}

export function pacePath(stateDir: string, baseUrl: string, fingerprint: string): string {
  return join(stateDir, 'pace', `${paceName(baseUrl, fingerprint)}.json`);
}

export class SharedPace implements PaceShare {
  private seq = 0;
  /** Which SharedPace of which process (tests run several). */
  private readonly tag = `${process.pid}.${randomBytes(3).toString('hex')}`;
  /** Not written yet. */
  private marks = new Map<string, number | 'unsent'>();
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  /** The file could not be used: this process paces alone. */
  failed: Error | undefined;

  constructor(
    readonly path: string,
    private readonly onError?: (e: Error) => void,
    private readonly now: () => number = wallNow,
  ) {}

  take(limit: number, spanMs: number): Take {
    if (this.failed) return { ok: true, id: '' };
    const locked = this.lock();
    if (locked === 'busy') return { ok: false, waitMs: BUSY_RETRY_MS };
    if (!locked) return { ok: true, id: '' };
    try {
      const now = this.now();
      // (read() applied our marks: they are written with them)
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

  markSent(id: string, at: number = this.now()): void {
    if (!id || this.failed) return;
    this.marks.set(id, at);
    this.scheduleFlush(0);
  }

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

function effective(s: Start, now: number): number {
  return s.p ? Math.max(s.t, Math.min(now, s.t + PENDING_MS)) : s.t;
}

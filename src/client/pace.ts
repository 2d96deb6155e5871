// A log of start times per key (SlidingWindowLimiter), not a token bucket: a full one lets 5 through and
// refills 5 at once, so the server counts 10 in a second. Shared through a JSON file per key under a
// short lock (SharedPace), or the team ledger. A start not yet sent counts as now.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readJsonFile, writeFileAtomicSync } from '../files/atomic.ts';
import { tryLock, type HeldLock } from '../files/lock.ts';
import { accountOf } from './environment.ts';
import { isLoopbackHost } from '../spec/schemas.ts';

/** A start granted and not marked sent yet counts as starting now, for at most this long. */
export const PENDING_MS = 2000;

export type Take = { ok: true; id: string } | { ok: false; waitMs: number };

/** A hash of the account (its base URL however spelled) and the key's fingerprint, never the key. */
export function paceName(baseUrl: string, fingerprint: string): string {
  return createHash('sha256')
    .update(`payout-batch pace v1\0${accountOf(baseUrl)}\0${fingerprint}`)
    .digest('hex')
    .slice(0, 24);
}

/** Undefined when fewer than `limit` of the sorted `times` lie in the window; else how long until one leaves it. */
export function waitBeforeStart(times: readonly number[], limit: number, spanMs: number, now: number): number | undefined {
  if (times.length < limit) return undefined;
  return Math.max(1, Math.ceil(times[times.length - limit]! + spanMs - now) + 1);
}

/** A take when the share cannot be used: this process paces alone. */
export const ALONE: Take = { ok: true, id: '' };

/** Another process holds the lock for a millisecond or so. */
const BUSY_RETRY_MS = 2;

/** The same clock in every process of the host (not timeOrigin + performance.now(): it stands still while the host sleeps). */
export const wallNow = (): number => Date.now();

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
    if (this.failed) return ALONE;
    return this.locked(
      () => {
        const now = this.now();
        // (read() applied our marks: they are written with them; a start after now: the clock stepped back)
        const starts = this.read()
          .map((s) => ({ ...s, t: Math.min(s.t, now) }))
          .filter((s) => effective(s, now) > now - spanMs);
        const times = starts.map((s) => effective(s, now)).sort((a, b) => a - b);
        const waitMs = waitBeforeStart(times, limit, spanMs, now);
        const id = `${this.tag}-${++this.seq}`;
        if (waitMs === undefined) starts.push({ id, t: now, p: 1 });
        this.write(starts);
        return waitMs === undefined ? { ok: true, id } : { ok: false, waitMs };
      },
      () => ({ ok: false, waitMs: BUSY_RETRY_MS }),
      ALONE,
    );
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
    this.locked(
      () => this.write(this.read()),
      () => this.scheduleFlush(BUSY_RETRY_MS),
      undefined,
    );
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

  /** `body` under the file's short lock; `busy` while another process holds it; `alone` once the file cannot be used. */
  private locked<T>(body: () => T, busy: () => T, alone: T): T {
    let held: HeldLock | undefined;
    try {
      mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
      held = tryLock(`${this.path}.lock`, { staleMs: 2000, purpose: 'shared pace' });
      return held ? body() : busy();
    } catch (e) {
      failOnce(this, e, this.onError);
      return alone;
    } finally {
      held?.release();
    }
  }
}

/** A share's first failure, told once: from then on it grants every start, and this process paces alone. */
export function failOnce(share: { failed: Error | undefined }, e: unknown, onError?: (e: Error) => void): void {
  if (share.failed) return;
  share.failed = e instanceof Error ? e : new Error(String(e));
  onError?.(share.failed);
}

const isStart = (s: unknown): s is Start =>
  !!s && typeof (s as Start).id === 'string' && typeof (s as Start).t === 'number' && Number.isFinite((s as Start).t);

function effective(s: Start, now: number): number {
  return s.p ? Math.max(s.t, Math.min(now, s.t + PENDING_MS)) : s.t;
}

/** Covers the jitter of the time from fetch to the service, not the latency: keeps 5/1.05 = 0.95 of the limit. */
export const DEFAULT_SAFETY_MARGIN_MS = 50;
/** On loopback, fetch to the service takes 2 to 6 ms on an open connection (a new one is dated by its answer, http.ts). */
export const LOOPBACK_SAFETY_MARGIN_MS = 25;

export function defaultSafetyMarginMs(baseUrl: string): number {
  return URL.canParse(baseUrl) && isLoopbackHost(new URL(baseUrl).hostname) ? LOOPBACK_SAFETY_MARGIN_MS : DEFAULT_SAFETY_MARGIN_MS;
}

export interface Clock {
  now(): number;
}

export interface RateLimiterOptions {
  /** Spec §8: 5 per second. */
  perWindow: number;
  windowMs?: number;
  safetyMarginMs?: number;
  /** After a 429 the pace drops by one start per window; one step comes back after this long (default 2 s). */
  cooldownMs?: number;
  clock?: Clock;
  shared?: PaceShare;
}

/** One granted start, dated at the grant; markSent moves it later (never earlier) when the request is sent. */
export interface Slot {
  t: number;
  /** Wall-clock ms (wallNow) of the last markSent. */
  sentAt?: number;
  markSent(): void;
  /** The request ended, sent or not. */
  done?(): void;
}

export class SlidingWindowLimiter {
  /** The window and the margin. */
  private readonly span: number;
  private readonly clock: Clock;
  /** A take of the (team ledger's) shared pace awaits its answer: one at a time. */
  private taking = false;
  /** Not necessarily in time order. */
  private starts: Slot[] = [];
  /** Each resolves a waiting acquire (and stops listening for its abort). */
  private queue: ((slot: Slot) => void)[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private penalty = 0;
  private lastPenaltyAt = -Infinity;

  constructor(private readonly o: RateLimiterOptions) {
    if (!Number.isInteger(o.perWindow) || o.perWindow < 1) {
      throw new RangeError(`requests per second must be a whole number of at least 1, not ${o.perWindow}`);
    }
    this.span = (o.windowMs ?? 1000) + (o.safetyMarginMs ?? DEFAULT_SAFETY_MARGIN_MS);
    this.clock = o.clock ?? { now: () => performance.now() };
  }

  effectiveLimit(now = this.clock.now()): number {
    const penalty = Math.max(0, this.penalty - Math.floor((now - this.lastPenaltyAt) / (this.o.cooldownMs ?? 2000)));
    return Math.max(1, this.o.perWindow - penalty);
  }

  /** On a 429. Several within one window are one event: requests in flight together are refused together. */
  penalize(): void {
    const now = this.clock.now();
    if (now - this.lastPenaltyAt < this.span) return;
    this.penalty = Math.min(this.o.perWindow - 1, this.o.perWindow - this.effectiveLimit(now) + 1);
    this.lastPenaltyAt = now;
  }

  acquire(signal?: AbortSignal): Promise<Slot> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<Slot>((resolve, reject) => {
      const onAbort = () => {
        const i = this.queue.indexOf(w);
        if (i >= 0) this.queue.splice(i, 1);
        reject(signal!.reason as Error);
      };
      const w = (slot: Slot) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(slot);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(w);
      this.drain();
    });
  }

  private drain(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    // the answer of the take on its way drains again: a start is granted once per answer
    if (this.taking) return;
    const now = this.clock.now();
    this.starts = this.starts.filter((s) => s.t > now - this.span);
    const limit = this.effectiveLimit(now);
    let sharedWait = 0;
    while (this.queue.length && this.starts.length < limit) {
      let id = '';
      if (this.o.shared) {
        const taken = this.o.shared.take(limit, this.span);
        if (taken instanceof Promise) return this.awaitTake(taken);
        if (!taken.ok) {
          sharedWait = taken.waitMs;
          break;
        }
        id = taken.id;
      }
      this.grant(id, now);
    }
    if (this.queue.length) {
      const times = this.starts.map((s) => s.t).sort((a, b) => a - b);
      const wait = Math.max(sharedWait, waitBeforeStart(times, limit, this.span, now) ?? 0);
      this.timer = setTimeout(() => this.drain(), Math.max(1, wait));
    }
  }

  private awaitTake(taken: Promise<Take>): void {
    this.taking = true;
    const answered = (t: Take) => {
      this.taking = false;
      if (!t.ok) {
        if (this.queue.length) this.timer = setTimeout(() => this.drain(), Math.max(1, t.waitMs));
        return;
      }
      // the waiters may have left (aborted), or a 429 lowered the pace, while the answer came
      const now = this.clock.now();
      if (this.queue.length && this.starts.filter((s) => s.t > now - this.span).length < this.effectiveLimit(now)) this.grant(t.id, now);
      else this.o.shared!.unsent(t.id);
      this.drain();
    };
    // (a share that fails paces this process alone: its take grants, it does not reject)
    void taken.then(answered, () => answered(ALONE));
  }

  /** `id` names the start in the shared pace ('' when none). */
  private grant(id: string, now: number): void {
    const w = this.queue.shift()!;
    let sent = false;
    const slot: Slot = {
      t: now,
      markSent: () => {
        slot.t = Math.max(slot.t, this.clock.now());
        slot.sentAt = wallNow();
        sent = true;
        this.o.shared?.markSent(id, slot.sentAt);
      },
      done: () => {
        if (!sent) this.o.shared?.unsent(id);
      },
    };
    this.starts.push(slot);
    w(slot);
  }

  get waiting(): number {
    return this.queue.length;
  }
}

// At most N request starts in any rolling window per key, shared across processes (pace.ts) or hosts.
// Not a token bucket (a full one lets 5 through and refills 5 at once: the server counts 10 in a
// second): a log of start times, a start allowed when fewer than N lie in the last window + margin.
import { isLoopbackHost } from './environment.ts';
import { waitBeforeStart, wallNow, type PaceShare, type Take } from './pace.ts';

/** Covers the jitter of the time from fetch to the service, not the latency: keeps 5/1.05 = 0.95 of the limit. */
export const DEFAULT_SAFETY_MARGIN_MS = 50;
/** On loopback, fetch to the service takes 2 to 6 ms on an open connection (a new one is dated by its answer, http.ts). */
export const LOOPBACK_SAFETY_MARGIN_MS = 25;

export function defaultSafetyMarginMs(baseUrl: string): number {
  const loopback = URL.canParse(baseUrl) && isLoopbackHost(new URL(baseUrl).hostname);
  return loopback ? LOOPBACK_SAFETY_MARGIN_MS : DEFAULT_SAFETY_MARGIN_MS;
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

interface Waiter {
  resolve: (slot: Slot) => void;
  reject: (e: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export class SlidingWindowLimiter {
  private readonly perWindow: number;
  /** The window and the margin. */
  private readonly span: number;
  private readonly cooldownMs: number;
  private readonly clock: Clock;
  private readonly shared: PaceShare | undefined;
  /** A take of the (team ledger's) shared pace awaits its answer: one at a time. */
  private taking = false;
  /** Not necessarily in time order. */
  private starts: Slot[] = [];
  private queue: Waiter[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private penalty = 0;
  private lastPenaltyAt = -Infinity;

  constructor(options: RateLimiterOptions) {
    if (!Number.isInteger(options.perWindow) || options.perWindow < 1) {
      throw new RangeError(`requests per second must be a whole number of at least 1, not ${options.perWindow}`);
    }
    this.perWindow = options.perWindow;
    this.span = (options.windowMs ?? 1000) + (options.safetyMarginMs ?? DEFAULT_SAFETY_MARGIN_MS);
    this.cooldownMs = options.cooldownMs ?? 2000;
    this.clock = options.clock ?? { now: () => performance.now() };
    this.shared = options.shared;
  }

  effectiveLimit(now = this.clock.now()): number {
    const recovered = Math.floor((now - this.lastPenaltyAt) / this.cooldownMs);
    const penalty = Math.max(0, this.penalty - recovered);
    return Math.max(1, this.perWindow - penalty);
  }

  /** On a 429. Several within one window are one event: requests in flight together are refused together. */
  penalize(): void {
    const now = this.clock.now();
    if (now - this.lastPenaltyAt < this.span) return;
    const current = this.perWindow - this.effectiveLimit(now);
    this.penalty = Math.min(this.perWindow - 1, current + 1);
    this.lastPenaltyAt = now;
  }

  acquire(signal?: AbortSignal): Promise<Slot> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<Slot>((resolve, reject) => {
      const w: Waiter = { resolve, reject, signal };
      if (signal) {
        w.onAbort = () => {
          const i = this.queue.indexOf(w);
          if (i >= 0) this.queue.splice(i, 1);
          reject(signal.reason as Error);
        };
        signal.addEventListener('abort', w.onAbort, { once: true });
      }
      this.queue.push(w);
      this.drain();
    });
  }

  private drain(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    // the answer of the take on its way drains again: a start is granted once per answer
    if (this.taking) return;
    const now = this.clock.now();
    this.starts = this.starts.filter((s) => s.t > now - this.span);
    const limit = this.effectiveLimit(now);
    let sharedWait = 0;
    while (this.queue.length && this.starts.length < limit) {
      let id = '';
      if (this.shared) {
        const taken = this.shared.take(limit, this.span);
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
      else this.shared!.unsent(t.id);
      this.drain();
    };
    // (a share that fails paces this process alone: its take grants, it does not reject)
    void taken.then(answered, () => answered({ ok: true, id: '' }));
  }

  /** `id` names the start in the shared pace ('' when none). */
  private grant(id: string, now: number): void {
    const w = this.queue.shift()!;
    if (w.signal && w.onAbort) w.signal.removeEventListener('abort', w.onAbort);
    const shared = this.shared;
    let sent = false;
    const slot: Slot = {
      t: now,
      markSent: () => {
        const at = this.clock.now();
        if (at > slot.t) slot.t = at;
        slot.sentAt = wallNow();
        sent = true;
        shared?.markSent(id, slot.sentAt);
      },
      done: () => {
        if (!sent) shared?.unsent(id);
      },
    };
    this.starts.push(slot);
    w.resolve(slot);
  }

  get waiting(): number {
    return this.queue.length;
  }
}

// The request pace: at most N request starts in any rolling window per API key, across the routes,
// tasks and retries of the clients given one limiter (nothing here is process-wide), and through a
// shared pace across processes (pace.ts) or hosts (ledger/pg-pace.ts).
//
// Not a token bucket: a full bucket of 5 lets 5 through at once and refills 5 a moment later, and
// the server counts 10 in one rolling second. Kept instead is what the server counts: a log of
// start times; a start is allowed when fewer than N lie in the last (window + margin) ms.

import { isLoopbackHost } from './environment.ts';
import { waitBeforeStart, wallNow, type PaceShare, type Take } from './pace.ts';

/**
 * Added to the 1000 ms window. Starts are dated when the request is handed to fetch (http.ts) and
 * the server dates arrivals, so the margin has to cover the difference between two requests' time
 * from fetch to the service (network jitter, a stall of either event loop), not the latency
 * itself: 50 ms keeps 5/1.05 = 0.95 of the limit. On a link with more jitter, raise it
 * (`--safety-margin`); a 429 is still honoured and slows the pace.
 */
export const DEFAULT_SAFETY_MARGIN_MS = 50;

/**
 * On a loopback link (the embedded sandbox, `payout-batch sandbox`, a local proxy) the time from
 * fetch to the service is 2 to 6 ms once a connection is open, so half the margin is enough and
 * keeps 1000/1025 = 0.97 of the limit. (A request on a new connection takes 10 to 30 ms: it is
 * dated by its answer, see http.ts.)
 */
export const LOOPBACK_SAFETY_MARGIN_MS = 25;

/** The margin for a service at `baseUrl` when none is given: smaller on loopback only. */
export function defaultSafetyMarginMs(baseUrl: string): number {
  const loopback = URL.canParse(baseUrl) && isLoopbackHost(new URL(baseUrl).hostname);
  return loopback ? LOOPBACK_SAFETY_MARGIN_MS : DEFAULT_SAFETY_MARGIN_MS;
}
export interface Clock {
  /** Monotonic milliseconds. */
  now(): number;
}

export interface RateLimiterOptions {
  /** N: starts allowed per window (spec §8: 5 per second). */
  perWindow: number;
  /** The server's window (1000 ms). */
  windowMs?: number;
  safetyMarginMs?: number;
  /** After a 429 the pace drops by one start per window; one step comes back after this long (default 2 s). */
  cooldownMs?: number;
  clock?: Clock;
  /** The key's pace shared with other processes (PaceShare); absent: this process alone. */
  shared?: PaceShare;
}

/**
 * One granted start. Its time is when the slot was granted; the transport moves it to when it
 * sends the request (markSent), and may move it later again (never earlier) when it learns the
 * request cannot have reached the service before some moment.
 */
export interface Slot {
  t: number;
  /** Wall-clock ms (pace.ts wallNow) of the last markSent: the start as logged and shared. */
  sentAt?: number;
  markSent(): void;
  /** The request ended; called whether or not it was sent (a shared start not sent keeps its grant time). */
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
  /** The window and the margin: a start counts against the pace for this long. */
  private readonly span: number;
  private readonly cooldownMs: number;
  private readonly clock: Clock;
  private readonly shared: PaceShare | undefined;
  /** A take of the shared pace is waiting for its answer (the team ledger's): one at a time. */
  private taking = false;
  /** Starts inside the current effective window (not necessarily in time order). */
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

  /** N minus the current 429 penalty, at least 1. */
  effectiveLimit(now = this.clock.now()): number {
    const recovered = Math.floor((now - this.lastPenaltyAt) / this.cooldownMs);
    const penalty = Math.max(0, this.penalty - recovered);
    return Math.max(1, this.perWindow - penalty);
  }

  /**
   * Called on a 429: slow down by one start per window for a while. Several 429s within one
   * window are one event (requests in flight together are refused together), not several.
   */
  penalize(): void {
    const now = this.clock.now();
    if (now - this.lastPenaltyAt < this.span) return;
    const current = this.perWindow - this.effectiveLimit(now);
    this.penalty = Math.min(this.perWindow - 1, current + 1);
    this.lastPenaltyAt = now;
  }

  /** Resolves when this caller may start a request; the start is recorded at that moment. */
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
      // The other processes' starts with this key too (pace.ts), when shared.
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

  /** Waits for the shared pace's answer (the team ledger's); nothing else is granted meanwhile. */
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

  /** Gives the first waiter its slot; `id` names its start in the shared pace ('' when none). */
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

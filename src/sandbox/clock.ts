// The sandbox's clock: Date.now() (or SandboxOptions.now, moved by hand in rate-limit tests) plus an offset
// that tests advance, so the upload expiry (spec §8) and the monthly quota are exercised without waiting.
export class Clock {
  private offsetMs = 0;
  constructor(private readonly source: () => number = Date.now) {}
  now(): number {
    return this.source() + this.offsetMs;
  }
  iso(): string {
    return new Date(this.now()).toISOString();
  }
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('the clock only moves forward');
    this.offsetMs += ms;
  }
}

/** A timeout on real time, kept in `pending` until it ran so that close() can cancel the rest. */
export function later(pending: Set<NodeJS.Timeout>, ms: number, run: () => unknown): NodeJS.Timeout {
  const t = setTimeout(() => {
    pending.delete(t);
    run();
  }, ms);
  pending.add(t);
  return t;
}

// The sandbox's clock, read by every stamp and comparison: Date.now() (or SandboxOptions.now, which
// rate-limit tests move by hand, so "6 requests in one second" does not depend on the machine's
// speed) plus an offset that tests and the control route advance, so the 15-minute upload expiry
// (spec §8) and the calendar-month quota are exercised without waiting.
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

/**
 * A timeout on real time (the offset above does not move it), kept in `pending` until it has run
 * so that close() can cancel what is left; returned so the caller may unref it.
 */
export function later(pending: Set<NodeJS.Timeout>, ms: number, run: () => unknown): NodeJS.Timeout {
  const t = setTimeout(() => {
    pending.delete(t);
    run();
  }, ms);
  pending.add(t);
  return t;
}

// The sandbox's clock. It is the wall clock plus an offset that tests and the control route can
// advance, so the 15-minute upload expiry (spec §8) and the calendar-month quota can be exercised
// without waiting. Every time the sandbox stamps or compares reads this clock.
export class Clock {
  private offsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
  iso(): string {
    return new Date(this.now()).toISOString();
  }
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('the clock only moves forward');
    this.offsetMs += ms;
  }
}

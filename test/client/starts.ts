// Request starts as the tests and the shared-pace bench count them: the most in any window, and
// the `sentAt` of every request a CLI logged.
import type { SlidingWindowLimiter } from '../../src/client/pace.ts';
import type { CliRun } from '../engine/helpers.ts';

/** Most entries in any window of `ms`. */
export function mostInWindow(times: number[], ms: number): number {
  const t = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < t.length; i++) {
    while (t[i]! - t[j]! >= ms) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/** The `sentAt` of every request a CLI logged (--log-level debug: one 'response' line per answer). */
export function sentTimes(run: CliRun): number[] {
  const out: number[] = [];
  for (const line of run.stderr.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const e = JSON.parse(line) as { msg?: string; sentAt?: number };
      if (e.msg === 'response' && typeof e.sentAt === 'number') out.push(e.sentAt);
    } catch {
      // not a log line
    }
  }
  return out;
}

/** `each` starts through every limiter at once, each marked sent when granted: their send times. */
export async function startThrough(limiters: SlidingWindowLimiter[], each: number): Promise<number[]> {
  const sent: number[] = [];
  await Promise.all(
    limiters.flatMap((l) =>
      Array.from({ length: each }, async () => {
        const slot = await l.acquire();
        slot.markSent();
        sent.push(slot.sentAt!);
        slot.done?.();
      }),
    ),
  );
  return sent;
}

// The results file's checkpoints during a run (src/engine/checkpoints.ts): every `everyMs`, never
// two at once, and never more than 1/SHARE of the time, so a big batch's checkpoints cannot
// starve the requests.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CHECKPOINT_SHARE, startCheckpoints } from '../../src/engine/checkpoints.ts';

afterEach(() => {
  vi.useRealTimers();
});

/** A checkpoint that takes `ms` of the (fake) clock, as a rewrite of a big file would. */
function slowWrite(clock: { t: number }, ms: () => number) {
  const starts: number[] = [];
  const write = async () => {
    starts.push(clock.t);
    clock.t += ms();
  };
  return { starts, write };
}

describe('startCheckpoints', () => {
  it('writes every everyMs while a checkpoint is cheap', async () => {
    vi.useFakeTimers();
    const clock = { t: 0 };
    const { starts, write } = slowWrite(clock, () => 1);
    const cp = startCheckpoints(write, { everyMs: 3000, now: () => clock.t });
    for (let k = 0; k < 4; k++) await vi.advanceTimersByTimeAsync(3000);
    await cp.stop();
    expect(starts).toHaveLength(4);
  });

  it(`waits ${CHECKPOINT_SHARE} times as long as the last checkpoint took when that is longer than everyMs`, async () => {
    vi.useFakeTimers();
    const clock = { t: 0 };
    const { starts, write } = slowWrite(clock, () => 600); // 100,000 CSV rows
    const cp = startCheckpoints(write, { everyMs: 3000, now: () => clock.t });
    await vi.advanceTimersByTimeAsync(3000);
    expect(starts).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(CHECKPOINT_SHARE * 600 - 1);
    expect(starts).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(starts).toHaveLength(2);
    await cp.stop();
  });

  it('follows the last duration: a cheaper checkpoint brings the interval back down', async () => {
    vi.useFakeTimers();
    const clock = { t: 0 };
    const durations = [200, 10, 10];
    const { starts, write } = slowWrite(clock, () => durations.shift() ?? 10);
    const cp = startCheckpoints(write, { everyMs: 3000, now: () => clock.t });
    await vi.advanceTimersByTimeAsync(3000); // 1st, 200 ms: next in 10 s
    await vi.advanceTimersByTimeAsync(10_000); // 2nd, 10 ms: next in 3 s
    await vi.advanceTimersByTimeAsync(3000); // 3rd
    expect(starts).toHaveLength(3);
    await cp.stop();
  });

  it('never runs two at once, ignores a failed one, and stop() waits for the one under way', async () => {
    vi.useFakeTimers();
    let running = 0;
    let most = 0;
    let calls = 0;
    let release: (() => void) | undefined;
    const write = () => {
      calls++;
      running++;
      most = Math.max(most, running);
      return new Promise<void>((resolve, reject) => {
        release = () => {
          running--;
          if (calls === 1) reject(new Error('disk full'));
          else resolve();
        };
      });
    };
    const cp = startCheckpoints(write, { everyMs: 100, share: 1 });
    await vi.advanceTimersByTimeAsync(1000); // the first never ends meanwhile: no second one
    expect(calls).toBe(1);
    release!(); // it fails; the next one is still scheduled
    await vi.advanceTimersByTimeAsync(1100);
    expect(calls).toBe(2);
    let stopped = false;
    const stopping = cp.stop().then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    release!();
    await stopping;
    expect(stopped).toBe(true);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toBe(2);
    expect(most).toBe(1);
  });
});

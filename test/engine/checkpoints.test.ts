// The results file's checkpoints during a run (src/engine/checkpoints.ts): every `everyMs`, never
// two at once, none after stop, and a failed one does not end the run.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startCheckpoints } from '../../src/engine/checkpoints.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('startCheckpoints', () => {
  it('writes every everyMs, and not after stop', async () => {
    vi.useFakeTimers();
    let writes = 0;
    const stop = startCheckpoints(async () => void writes++, 3000);
    await vi.advanceTimersByTimeAsync(2999);
    expect(writes).toBe(0);
    for (let k = 0; k < 4; k++) await vi.advanceTimersByTimeAsync(3000);
    expect(writes).toBe(4);
    await stop();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(writes).toBe(4);
  });

  it('never starts a checkpoint while one is under way, and stop waits for it', async () => {
    vi.useFakeTimers();
    let starts = 0;
    let finish!: () => void;
    const stop = startCheckpoints(() => {
      starts++;
      return new Promise<void>((r) => (finish = r));
    }, 1000);
    await vi.advanceTimersByTimeAsync(5000);
    expect(starts).toBe(1);
    let stopped = false;
    const done = stop().then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    finish();
    await done;
    expect(stopped).toBe(true);
  });

  it('goes on after a checkpoint that failed', async () => {
    vi.useFakeTimers();
    let calls = 0;
    const stop = startCheckpoints(async () => {
      calls++;
      throw new Error('disk full');
    }, 1000);
    await vi.advanceTimersByTimeAsync(3000);
    expect(calls).toBe(3);
    await stop();
  });
});

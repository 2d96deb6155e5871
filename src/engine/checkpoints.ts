// Checkpoints of the results file during a run. A checkpoint rewrites the whole file with the
// run's own thread: for a big batch that is most of a second of work (100,000 rows as CSV), which
// the requests wait for. Measured with `npx tsx test/bench/throughput.ts --scale 10 --created
// 98900` (1,100 rows sent in a batch of 100,000): with a checkpoint every 3 s, each built in one
// block, the pipe was full 0.93 to 0.94 of the time, under the 0.95 target. So the next checkpoint
// waits the base interval, and at least SHARE times as long as the last one took: checkpoints then
// take at most 1/SHARE of the run, whatever the batch's size and format. (The file is also built
// in pieces with the event loop let in between, and a big XLSX in a worker: results/write.ts.)

/** Checkpoints take at most 1/SHARE of a run (2%): 100,000 CSV rows are rewritten about every 30 s. */
export const CHECKPOINT_SHARE = 50;

export interface Checkpoints {
  /** No checkpoint starts after this; resolves when the one under way (if any) has ended. */
  stop(): Promise<void>;
}

/**
 * Calls `write` after `everyMs`, then again `everyMs` (or SHARE times its last duration, if longer)
 * after each call ends; never two at once. A failed checkpoint is ignored (the next one, or the
 * results file written at the end, replaces it; the journal is the record).
 */
export function startCheckpoints(write: () => Promise<void>, o: { everyMs: number; share?: number; now?: () => number }): Checkpoints {
  const now = o.now ?? (() => performance.now());
  const share = o.share ?? CHECKPOINT_SHARE;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const schedule = (delay: number) => {
    timer = setTimeout(tick, delay);
    timer.unref();
  };
  const tick = () => {
    if (stopped) return;
    const t0 = now();
    running = write()
      .catch(() => undefined)
      .finally(() => {
        running = undefined;
        if (!stopped) schedule(Math.max(o.everyMs, share * (now() - t0)));
      });
  };
  schedule(o.everyMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

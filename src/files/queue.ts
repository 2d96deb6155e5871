// The per-path queue: jobs on one path run one after another, in call order, within this process.
// Writes of a results file use it so an older one never lands last; the lock (lock.ts) uses it
// so callers of one process wait in line instead of polling a lock their own process holds.
import { resolve } from 'node:path';

const queues = new Map<string, Promise<unknown>>();

/** Runs `job` after every job queued on the same path before it (whether those succeeded or not). */
export function serialised<T>(path: string, job: () => Promise<T>): Promise<T> {
  const key = resolve(path);
  const before = queues.get(key) ?? Promise.resolve();
  const run = before.then(job, job);
  const settled = run.catch(() => undefined);
  queues.set(key, settled);
  void settled.then(() => {
    if (queues.get(key) === settled) queues.delete(key);
  });
  return run;
}

// The per-path queue of a process: an older write never lands last; a process's callers of one
// lock wait in line instead of polling a lock their own process holds.
import { resolve } from 'node:path';

const queues = new Map<string, Promise<unknown>>();

/** After every job queued on the path before it, whether those succeeded or not. */
export function serialised<T>(path: string, job: () => Promise<T>): Promise<T> {
  const key = resolve(path);
  const run = (queues.get(key) ?? Promise.resolve()).then(job, job);
  const settled = run.catch(() => undefined);
  queues.set(key, settled);
  void settled.then(() => {
    if (queues.get(key) === settled) queues.delete(key);
  });
  return run;
}

// The one way the tool waits: a promise that settles after `ms`, or rejects with the signal's
// reason as soon as the signal aborts. The global setTimeout, not node:timers/promises: tests run
// the client's retries on fake timers. `unref`: the wait does not keep the process alive (the
// sandbox's latency fault, whose process may end while an answer is held).
export function sleep(ms: number, signal?: AbortSignal, { unref = false } = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (unref) t.unref();
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

// The one wait; rejects with the signal's reason when it aborts. The global setTimeout, not
// node:timers/promises: tests run the client's retries on fake timers.
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

// Checkpoints of the results file during a run: rewritten every `everyMs` while rows are sent, so
// a person (or Excel) sees progress and a killed run leaves a recent file. The journal is the
// record; the results file is rebuilt from it at the end whatever a checkpoint did.

/**
 * Calls `write` every `everyMs`, never two at once (a tick while one runs is skipped). A failed
 * checkpoint is ignored: the next one, or the file written at the end, replaces it. Returns
 * `stop`, which resolves once the checkpoint under way (if any) has ended.
 */
export function startCheckpoints(write: () => Promise<void>, everyMs: number): () => Promise<void> {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= write()
      .catch(() => undefined)
      .finally(() => (running = undefined));
  }, everyMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

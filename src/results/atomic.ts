// Atomic replacement of a file: the bytes go to a temporary file in the same folder (same file
// system, so the rename is atomic), are fsynced, then renamed over the target; the folder is
// fsynced so the rename itself survives a power cut. A reader sees the old file or the new one,
// never a partial one; a crash before the rename leaves the old file as it was (and at worst a
// stray ".<name>.<pid>.<random>.tmp" beside it, which is never read as a results file).
import { open, rename, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';

export function tempPathFor(path: string): string {
  const abs = resolve(path);
  return join(dirname(abs), `.${basename(abs)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

export async function writeFileAtomic(path: string, chunks: readonly (string | Uint8Array)[]): Promise<void> {
  const target = resolve(path);
  const tmp = tempPathFor(target);
  let fh: Awaited<ReturnType<typeof open>> | undefined;
  try {
    fh = await open(tmp, 'wx');
    // writeFile loops until every byte is written, from the current position
    for (const chunk of chunks) await fh.writeFile(chunk);
    await fh.sync();
    await fh.close();
    fh = undefined;
    await rename(tmp, target);
  } catch (e) {
    await fh?.close().catch(() => {});
    await rm(tmp, { force: true }).catch(() => {});
    throw e;
  }
  // Durability of the rename; some platforms (Windows) cannot open a folder: best effort.
  try {
    const dir = await open(dirname(target), 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  } catch {
    /* the file itself is complete and in place */
  }
}

/** Writes to the same path run one after another, in call order, so an older checkpoint never lands last. */
const queues = new Map<string, Promise<unknown>>();
export function serialised<T>(path: string, job: () => Promise<T>): Promise<T> {
  const key = resolve(path);
  const before = queues.get(key) ?? Promise.resolve();
  const run = before.then(job, job);
  const settled = run.then(
    () => {},
    () => {},
  );
  queues.set(key, settled);
  void settled.then(() => {
    if (queues.get(key) === settled) queues.delete(key);
  });
  return run;
}

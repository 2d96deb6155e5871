// Atomic replacement of a file: the bytes go to a temporary file in the same folder (same file
// system, so the rename is atomic), are fsynced, then renamed over the target; the folder is
// fsynced so the rename itself survives a power cut. A reader sees the old file or the new one,
// never a partial one; a crash before the rename leaves the old file as it was (and at worst a
// stray ".<name>.<pid>.<random>.tmp" beside it, which is never read as a results file).
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';

function tempPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

export async function writeFileAtomic(
  path: string,
  /** The bytes, or chunks produced one at a time (a generator: only the chunk in hand is in memory). */
  chunks: string | Iterable<string | Uint8Array>,
  o: { mode?: number } = {},
): Promise<void> {
  const target = resolve(path);
  const tmp = tempPathFor(target);
  let fh: Awaited<ReturnType<typeof open>> | undefined;
  try {
    fh = await open(tmp, 'wx', o.mode);
    // writeFile loops until every byte is written, from the current position
    for (const chunk of typeof chunks === 'string' ? [chunks] : chunks) await fh.writeFile(chunk);
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

/**
 * writeFileAtomic for callers that must not yield (the shared pace decides a start in one step), and
 * for state worth nothing after a power cut: atomic, not fsynced.
 */
export function writeFileAtomicSync(path: string, text: string, o: { mode?: number } = {}): void {
  const target = resolve(path);
  const tmp = tempPathFor(target);
  try {
    writeFileSync(tmp, text, { flag: 'wx', mode: o.mode });
    renameSync(tmp, target);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** A small JSON state file as parsed; undefined when missing or torn (it starts again rather than stop the tool). */
export function readJsonFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

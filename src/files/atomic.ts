// As README.md says; a crash leaves at worst a stray ".<name>.<pid>.<random>.tmp", never read as results.
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { open, rename, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import { attempt, unlessMissing } from './attempt.ts';

function tempPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

export async function writeFileAtomic(
  path: string,
  /** A generator keeps only the chunk in hand in memory. */
  chunks: string | Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>,
  o: { mode?: number } = {},
): Promise<void> {
  const target = resolve(path);
  const tmp = tempPathFor(target);
  try {
    await writeFile(tmp, chunks, { flag: 'wx', mode: o.mode, flush: true });
    await rename(tmp, target);
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => {});
    throw e;
  }
  // best effort: some platforms (Windows) cannot open a folder; the file itself is complete and in place
  const dir = await open(dirname(target), 'r').catch(() => undefined);
  await dir?.sync().catch(() => undefined);
  await dir?.close().catch(() => undefined);
}

/** For callers that must not yield (the shared pace), and state worth nothing after a power cut: not fsynced. */
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

/** Undefined when missing; a torn (unparsable) one as `torn`, by default undefined: a state that starts again rather than stop the tool. */
export function readJsonFile(path: string, torn?: unknown): unknown {
  const text = unlessMissing(() => readFileSync(path, 'utf8'));
  return text === undefined ? undefined : (attempt(() => JSON.parse(text) as unknown) ?? torn);
}

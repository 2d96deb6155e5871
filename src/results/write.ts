// Writing a results file with its format's ResultsWriter (paths.ts RESULTS_WRITERS).
import { rename } from 'node:fs/promises';
import { writeFileAtomic } from '../files/atomic.ts';
import { withLock } from '../files/lock.ts';
import { serialised } from '../files/queue.ts';
import { sourceOf } from './layout.ts';
import { RESULTS_WRITERS, resultsLockPath } from './paths.ts';
import { ResultsError } from './results-errors.ts';
import type { ResultsSource, ResultsTable } from './types.ts';

/** Writes the results file atomically, streamed. Calls for the same path run in call order. Throws ResultsError WRITE_FAILED. */
export async function writeResults(path: string, source: ResultsTable | ResultsSource): Promise<void> {
  return serialised(path, async () => {
    try {
      await writeFileAtomic(path, RESULTS_WRITERS.find((w) => w.format === source.format)!.chunks(sourceOf(source)));
    } catch (e) {
      const why = `cannot write the results file: ${whyNotWritten(e)}. The previous version, if any, is unchanged.`;
      throw new ResultsError('WRITE_FAILED', path, `${path}: ${why}`, { cause: e });
    }
  });
}

/** A results file complete under its partial name put in its place: one rename, under the place's lock. Throws ResultsError WRITE_FAILED. */
export async function publishResults(partial: string, path: string): Promise<void> {
  try {
    await withLock(resultsLockPath(path), () => rename(partial, path), { purpose: 'results write' });
  } catch (e) {
    const why = `cannot put the results in place: ${whyNotWritten(e)}. They are complete in ${partial}.`;
    throw new ResultsError('WRITE_FAILED', path, `${path}: ${why}`, { cause: e });
  }
}

const DENIED = 'permission denied (the folder must be writable: the file is replaced through a temporary file beside it)';
const WHY_NOT_WRITTEN: Record<string, string> = {
  EACCES: DENIED,
  EPERM: DENIED,
  ENOENT: 'the folder does not exist',
  ENOSPC: 'the disk is full',
  EISDIR: 'a folder has that name',
};
const whyNotWritten = (e: unknown): string => {
  const { code, message } = e as NodeJS.ErrnoException;
  return (code && WHY_NOT_WRITTEN[code]) ?? code ?? message;
};

// Where the results of a batch go.
//
//   payroll.csv                 → payroll.results.csv
//   payroll.xlsx / payroll.xls  → payroll.results.xlsx        (we write .xlsx, never BIFF .xls)
//   payroll.results.csv         → payroll.results.retry-1.csv (a results file being retried)
//   payroll.results.retry-1.csv → payroll.results.retry-2.csv
//   --results FILE              → FILE; its extension decides the format (.csv/.tsv/.txt or .xlsx)
//
// The formats and their extensions are the writers' (formats.ts RESULTS_WRITERS).
//
// A batch's name alone decides its results file, whatever is on disk: running the same batch
// again (resume after a crash) updates the same results file. A results file being retried gets
// the first retry-N past every retry-N of the same base already in its folder, so a second retry
// of payroll.results.csv writes retry-2 and never overwrites retry-1 (nor the file it reads).
// A results path equal to the batch itself is refused; one holding another run's payouts is
// refused by the run (engine/pipeline.ts), naming a free one (freeResultsPath). A retry writes under a partial name
// (payroll.results.retry-1.partial.csv) until its results are complete, then renames it: the
// partial name is never a retry-N, so a retry killed midway leaves nothing that looks finished and
// the next retry takes the same number.
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import type { BatchFormat } from '../input/reader.ts';
import { ResultsError } from './results-errors.ts';
import { RESULTS_WRITERS } from './formats.ts';
import type { ResultsFormat } from './types.ts';

export type { ResultsFormat } from './types.ts';

export function resultsPathFor(
  batchFile: string,
  override?: string,
  /**
   * inputFormat: the batch's format as its reader found it (readBatch sniffs the content: a .csv
   * that is really a workbook is Excel). Defaults to the format the extension suggests.
   */
  options: { inputFormat?: BatchFormat } = {},
): { path: string; format: ResultsFormat } {
  if (override !== undefined) {
    const ext = extname(override).toLowerCase();
    const writer = RESULTS_WRITERS.find((w) => w.extensions.includes(ext));
    if (!writer) {
      const instead = RESULTS_WRITERS.find((w) => w.forBatches.extensions.includes(ext));
      const hint = instead ? ` (results are written as ${instead.extensions[0]})` : '';
      const names = RESULTS_WRITERS.map((w) => w.extensions[0]).join(' or ');
      throw new ResultsError(
        'BAD_RESULTS_PATH',
        override,
        `--results ${override}: name the results file ${names}${hint}; the extension decides the format.`,
      );
    }
    if (resolve(override) === resolve(batchFile)) {
      throw new ResultsError(
        'BAD_RESULTS_PATH',
        override,
        `--results ${override}: that is the batch file itself; choose another name so the batch is not overwritten.`,
      );
    }
    return { path: override, format: writer.format };
  }
  const ext = extname(batchFile);
  const lower = ext.toLowerCase();
  const { inputFormat } = options;
  const writer =
    RESULTS_WRITERS.find((w) => (inputFormat ? w.forBatches.formats.includes(inputFormat) : w.forBatches.extensions.includes(lower))) ??
    RESULTS_WRITERS[0]!;
  const { format } = writer;
  const outExt = writer.extensions.includes(lower) ? ext : writer.extensions[0]!;
  const stem = basename(batchFile, ext);
  const dir = dirname(batchFile);
  const m = /^(.*)\.results(?:\.retry-(\d+))?$/i.exec(stem);
  if (!m) return { path: join(dir, `${stem}.results${outExt}`), format };
  const n = Math.max(Number(m[2] ?? 0), highestRetry(dir, m[1]!)) + 1;
  return { path: join(dir, `${m[1]}.results.retry-${n}${outExt}`), format };
}

/**
 * The highest N of the `<base>.results.retry-N.<ext>` files in `dir` (0: none), whatever their
 * format, so a CSV and a workbook never share a number; a partial `retry-N.partial.<ext>` is not one. An unreadable folder counts as empty: the
 * write itself then says what is wrong with it.
 */
function highestRetry(dir: string, base: string): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  const prefix = `${base}.results.retry-`.toLowerCase();
  let highest = 0;
  for (const name of names) {
    const lower = name.toLowerCase();
    if (!lower.startsWith(prefix)) continue;
    const r = /^(\d+)(\.[^.]*)?$/.exec(lower.slice(prefix.length));
    if (r && (r[2] === undefined || RESULTS_WRITERS.some((w) => w.extensions.includes(r[2]!) || w.forBatches.extensions.includes(r[2]!))))
      highest = Math.max(highest, Number(r[1]));
  }
  return highest;
}

/** A name beside `path` that no file has yet: payroll.results.csv → payroll-2.results.csv (then -3, ...). */
export function freeResultsPath(path: string): string {
  const ext = extname(path);
  const [, stem, tail] = /^(.*?)(\.results)?$/i.exec(basename(path, ext))!;
  for (let n = 2; ; n++) {
    const free = join(dirname(path), `${stem}-${n}${tail ?? ''}${ext}`);
    if (!existsSync(free)) return free;
  }
}

/** Where a retry writes its results until they are complete: `<name>.partial.<ext>`. */
export function partialResultsPath(path: string): string {
  const ext = extname(path);
  return join(dirname(path), `${basename(path, ext)}.partial${ext}`);
}

/**
 * The lock beside a results file (".<name>.lock", files/lock.ts) held by whoever writes it: a run's
 * write at its end, `status`, `listen`. One writer of a results file at a time.
 */
export const resultsLockPath = (resultsPath: string): string => join(dirname(resolve(resultsPath)), `.${basename(resultsPath)}.lock`);

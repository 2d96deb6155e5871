// Where the results of a batch go: payroll.csv → payroll.results.csv, payroll.xls(x) →
// payroll.results.xlsx (a sheet of its own: payroll.<sheet>.results.xlsx), payroll.results.csv →
// payroll.results.retry-1.csv (the first retry-N past those in the folder), --results FILE → FILE. A
// batch's name (and sheet) alone decides, so a resume updates the same file; a retry writes under a
// `.partial` name until complete, never taken for a retry-N.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import type { BatchFormat } from '../input/reader.ts';
import { missingOnly, ResultsError } from './results-errors.ts';
import { csvWriter } from './csv-writer.ts';
import { xlsxWriter } from './xlsx-writer.ts';
import type { ResultsFormat, ResultsWriter } from './types.ts';

/** The results formats, one writer each in its own file: a new format is that file and one entry here. The first is the default. */
export const RESULTS_WRITERS: readonly ResultsWriter[] = [csvWriter, xlsxWriter];

export function resultsPathFor(
  batchFile: string,
  override?: string,
  /** inputFormat: as the reader found it (a .csv that is really a workbook is Excel), default by extension; sheet: in the name. */
  options: { inputFormat?: BatchFormat; sheet?: string } = {},
): { path: string; format: ResultsFormat } {
  if (override !== undefined) {
    const bad = (why: string) => new ResultsError('BAD_RESULTS_PATH', override, `--results ${override}: ${why}`);
    const ext = extname(override).toLowerCase();
    const writer = RESULTS_WRITERS.find((w) => w.extensions.includes(ext));
    if (!writer) {
      const instead = RESULTS_WRITERS.find((w) => w.forBatches.extensions.includes(ext));
      const hint = instead ? ` (results are written as ${instead.extensions[0]})` : '';
      const names = RESULTS_WRITERS.map((w) => w.extensions[0]).join(' or ');
      throw bad(`name the results file ${names}${hint}; the extension decides the format.`);
    }
    if (resolve(override) === resolve(batchFile))
      throw bad('that is the batch file itself; choose another name so the batch is not overwritten.');
    return { path: override, format: writer.format };
  }
  const ext = extname(batchFile);
  const lower = ext.toLowerCase();
  const { inputFormat } = options;
  const writer =
    RESULTS_WRITERS.find((w) => (inputFormat ? w.forBatches.formats.includes(inputFormat) : w.forBatches.extensions.includes(lower))) ??
    RESULTS_WRITERS[0]!;
  const outExt = writer.extensions.includes(lower) ? ext : writer.extensions[0]!;
  const stem = basename(batchFile, ext);
  const dir = dirname(batchFile);
  const m = /^(.*)\.results(?:\.retry-(\d+))?$/i.exec(stem);
  // (a sheet's name may hold what a file name must not)
  const sheet = options.sheet === undefined ? '' : `.${options.sheet.replace(/[\\/:*?"<>|\p{Cc}]/gu, '_')}`;
  if (!m) return { path: join(dir, `${stem}${sheet}.results${outExt}`), format: writer.format };
  const n = Math.max(Number(m[2] ?? 0), highestRetry(dir, m[1]!)) + 1;
  return { path: join(dir, `${m[1]}.results.retry-${n}${outExt}`), format: writer.format };
}

/**
 * A run's results file as last written: its highest retry-N beside it (in either format), else itself. `since` (the
 * batch's start): a retry-N written before it is another batch's, one run earlier from a file of the same name.
 */
export function newestResults(path: string, since?: string): string {
  const base = /^(.*)\.results$/i.exec(basename(path, extname(path)))?.[1];
  const n = base === undefined ? 0 : highestRetry(dirname(path), base);
  const exts = RESULTS_WRITERS.flatMap((w) => w.extensions);
  const newest = n ? exts.map((e) => join(dirname(path), `${base}.results.retry-${n}${e}`)).find((f) => existsSync(f)) : undefined;
  const sinceMs = since ? Date.parse(since) : NaN; // (NaN: no start known, nothing is older than it)
  return newest && !(statSync(newest).mtimeMs < sinceMs) ? newest : path;
}

/** The highest N of `<base>.results.retry-N.<ext>` in `dir`, whatever the format (0: none, or no folder yet); an unlistable folder refuses. */
function highestRetry(dir: string, base: string): number {
  const prefix = `${base}.results.retry-`.toLowerCase();
  let highest = 0;
  let names: string[] | undefined;
  try {
    names = readdirSync(dir);
  } catch (e) {
    // (read as none, a retry named its output retry-1 over the one there, and status read the first results)
    names = missingOnly(dir, 'list', 'its retry-N results cannot be told; make it a folder this user can list, then run again')(e);
  }
  for (const name of names ?? []) {
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

/** The lock beside a results file held by whoever writes it (a run, `status`, `listen`). */
export const resultsLockPath = (resultsPath: string): string => join(dirname(resolve(resultsPath)), `.${basename(resultsPath)}.lock`);

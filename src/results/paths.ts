// Where the results of a batch go.
//
//   payroll.csv                 → payroll.results.csv
//   payroll.xlsx / payroll.xls  → payroll.results.xlsx        (we write .xlsx, never BIFF .xls)
//   payroll.results.csv         → payroll.results.retry-1.csv (a results file being retried)
//   payroll.results.retry-1.csv → payroll.results.retry-2.csv
//   --results FILE              → FILE; its extension decides the format (.csv/.tsv/.txt or .xlsx)
//
// The name depends only on the batch's name, never on what is on disk: running the same batch
// again (resume after a crash) updates the same results file, and a retry never overwrites the
// file it reads nor the results it came from. A results path equal to the batch itself is refused.
import { basename, dirname, extname, join, resolve } from 'node:path';
import { ResultsError } from './errors.ts';

export type ResultsFormat = 'csv' | 'xlsx';

const CSV_EXTS = new Set(['.csv', '.tsv', '.txt']);
const EXCEL_EXTS = new Set(['.xlsx', '.xls', '.xlsm']);

export interface ResultsPathOptions {
  /**
   * The batch's format as its reader found it (readBatch sniffs the content: a .csv that is really
   * a workbook is Excel). Defaults to the format the extension suggests.
   */
  inputFormat?: 'csv' | 'xlsx' | 'xls';
}

export function resultsPathFor(
  batchFile: string,
  override?: string,
  options: ResultsPathOptions = {},
): { path: string; format: ResultsFormat } {
  if (override !== undefined) {
    const ext = extname(override).toLowerCase();
    let format: ResultsFormat;
    if (CSV_EXTS.has(ext)) format = 'csv';
    else if (ext === '.xlsx') format = 'xlsx';
    else {
      const hint = ext === '.xls' || ext === '.xlsm' ? ' (results are written as .xlsx)' : '';
      throw new ResultsError(
        'BAD_RESULTS_PATH',
        override,
        `--results ${override}: name the results file .csv or .xlsx${hint}; the extension decides the format.`,
      );
    }
    if (resolve(override) === resolve(batchFile)) {
      throw new ResultsError(
        'BAD_RESULTS_PATH',
        override,
        `--results ${override}: that is the batch file itself; choose another name so the batch is not overwritten.`,
      );
    }
    return { path: override, format };
  }
  const ext = extname(batchFile);
  const lower = ext.toLowerCase();
  const excel = options.inputFormat ? options.inputFormat !== 'csv' : EXCEL_EXTS.has(lower);
  const format: ResultsFormat = excel ? 'xlsx' : 'csv';
  const outExt = excel ? '.xlsx' : CSV_EXTS.has(lower) ? ext : '.csv';
  const stem = basename(batchFile, ext);
  const m = /^(.*)\.results(?:\.retry-(\d+))?$/i.exec(stem);
  const name = m ? `${m[1]}.results.retry-${Number(m[2] ?? 0) + 1}${outExt}` : `${stem}.results${outExt}`;
  return { path: join(dirname(batchFile), name), format };
}

/**
 * The lock beside a results file (".<name>.lock", ops/lock.ts) held by whoever writes it: a run's
 * checkpoints and final write, `status`, `listen`. One writer of a results file at a time.
 */
export const resultsLockPath = (resultsPath: string): string => join(dirname(resolve(resultsPath)), `.${basename(resultsPath)}.lock`);

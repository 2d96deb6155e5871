// Where a report goes (beside the output it describes), and the tie-out `reconcile` wrote beside a
// results file.
import { readFile } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { reconciliationPathFor, TieOutSummarySchema, type TieOutSummary } from '../engine/money-totals.ts';

/**
 * The report of an output file: its path with the extension replaced by .html
 * (payroll.results.csv → payroll.results.html, plan.json → plan.html); never the output itself.
 */
export function reportPathFor(output: string): string {
  const ext = extname(output);
  const stem = ext ? output.slice(0, -ext.length) : output;
  const path = `${stem}.html`;
  return path === output ? `${stem}.report.html` : path;
}

/** The report of `plan FILE` without --out: `<batch name>.plan.html` beside the batch file. */
export function planReportPathFor(batchFile: string): string {
  return join(dirname(batchFile), `${basename(batchFile, extname(batchFile))}.plan.html`);
}

/**
 * The tie-out `reconcile` wrote beside a results file (`<results name>.reconciliation.json`), read
 * back as it computed it: nothing is summed again here. None when there is no such file; a file
 * that cannot be read (an amount that is not one, a field missing) is a problem to show, never a
 * tie-out with a 0 in it.
 */
export async function readTieOut(resultsFile: string): Promise<{ tieOut?: TieOutSummary; problem?: string }> {
  const path = reconciliationPathFor(resultsFile, 'json');
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT'
      ? {}
      : { problem: `The reconciliation ${path} cannot be read (${code ?? (e as Error).message}): the tie-out is not shown.` };
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { problem: `The reconciliation ${path} is not JSON: the tie-out is not shown; run payout-batch reconcile again.` };
  }
  const r = TieOutSummarySchema.safeParse(data);
  if (r.success) return { tieOut: r.data };
  const i = r.error.issues[0];
  return {
    problem: `The reconciliation ${path} cannot be read (${i?.path.join('.') || 'top level'}: ${i?.message}): the tie-out is not shown; run payout-batch reconcile again.`,
  };
}

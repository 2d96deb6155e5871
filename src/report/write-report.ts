// The HTML batch report (README.md), of a plan, a plan file, a batch file read offline or a results
// file, written atomically beside its input.
import { readFile } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { writeFileAtomic } from '../files/atomic.ts';
import { attempt } from '../files/attempt.ts';
import type { BatchPlan } from '../engine/batch-plan.ts';
import { onBehalfOf, PLAN_KIND, parsePlanFile, type PlanFile } from '../engine/plan-file.ts';
import { sha256Hex } from '../engine/identity.ts';
import { ResultsError, streamResults, withResults, type SwapLine } from '../results/results.ts';
import { missingOnly } from '../results/results-errors.ts';
import { batchColumns, readHead } from '../results/read.ts';
import { neutralise } from '../input/neutralise.ts';
import type { ValidateOptions } from '../validation/validation.ts';
import type { Ledger } from '../ledger/account-ledger.ts';
import { batchSwapsOf } from '../follow-up/swap-views.ts';
import { planHtml, resultsHtml } from './html.ts';
import {
  planViewOffline,
  planViewOfPlan,
  planViewOfPlanFile,
  readOfflineBatch,
  resultsViewOf,
  type ApprovalsInput,
  type PlanView,
} from './model.ts';
import { reconciliationPathFor, TieOutSummarySchema, type TieOutSummary } from '../engine/money-totals.ts';

/** The batch file read offline; none when it moved, was deleted or cannot be read since: the report says what it could not show. */
const offlineOrUndefined = (file: string, options: ValidateOptions = {}) => readOfflineBatch(file, options).catch(() => undefined);

/** The report of the plan `plan` just computed: beside the plan file (--out), else beside the batch. */
export async function writePlanReport(
  plan: BatchPlan,
  o: {
    environment: string;
    baseUrl?: string;
    planFile?: PlanFile;
    /** Where the plan file was written (the report goes beside it). */
    planPath?: string;
    batchOptions?: ValidateOptions;
  },
): Promise<string> {
  let offline = await offlineOrUndefined(plan.file, o.batchOptions);
  const changed = offline && o.planFile && offline.sha256 !== o.planFile.fileSha256;
  if (changed) offline = undefined;
  const notes = offline
    ? []
    : [
        `The batch file ${changed ? 'changed while the plan was made' : 'was not read offline'}: methods, corridors and invalid columns are not shown.`,
      ];
  const view = planViewOfPlan(plan, { environment: o.environment, baseUrl: o.baseUrl, planFile: o.planFile, offline, notes });
  const path = o.planPath ? reportPathFor(o.planPath) : planReportPathFor(plan.file);
  await writePlanPage(path, view);
  return path;
}

/**
 * A report replaces only a report (or nothing): never the batch, its results or another file named by mistake
 * (`report pay.csv --out pay.csv`). Throws ResultsError WRITE_FAILED.
 */
async function refuseAllButReport(path: string): Promise<void> {
  const head = await readHead(path).catch(missingOnly(path, 'read', 'not replaced: it may not be a report; name another file'));
  if (head && !/^<!doctype html>/i.test(head))
    throw new ResultsError(
      'WRITE_FAILED',
      path,
      `${path}: not replaced: it is not an HTML report (the batch or its results?); name another file.`,
    );
}

/** A plan's report, and beside it `<report>.payees.csv` of every payee, when it has some. */
async function writePlanPage(path: string, view: PlanView): Promise<void> {
  await refuseAllButReport(path);
  const payees = view.payees ?? [];
  const csvPath = payees.length ? path.replace(/(\.html?)?$/i, '.payees.csv') : undefined;
  if (csvPath) {
    const fields = ['reference', 'beneficiary', 'destination', 'account', 'method', 'currency', 'amount'] as const;
    const rows = payees.map((p) => [String(p.rowNumber), ...fields.map((f) => p[f]), onBehalfOf(p)]);
    await writeFileAtomic(csvPath, [
      stringify(
        [['row', ...fields, 'onBehalf'], ...rows].map((r) => r.map(neutralise)),
        { bom: true, record_delimiter: '\r\n' },
      ),
    ]);
  }
  await writeFileAtomic(path, [planHtml(view, { payeesCsv: csvPath && basename(csvPath) })]);
}

/**
 * The report of a results file, with the tie-out beside it, and the swaps: the run's, else the
 * workbook's, else the tie-out's. Its batch id: the run's, else that of the journal that sent its rows.
 */
export async function writeResultsReport(
  resultsFile: string,
  o: {
    environment?: string;
    out?: string;
    sheet?: string;
    encoding?: string;
    swaps?: SwapLine[];
    batchId?: string;
    ledgers?: Ledger[];
  } = {},
): Promise<string> {
  const path = o.out ?? reportPathFor(resultsFile);
  await refuseAllButReport(path);
  const read = { sheet: o.sheet, encoding: o.encoding };
  const { tieOut, problem } = await readTieOut(resultsFile, read);
  const batchId =
    o.batchId ?? (o.ledgers && (await batchSwapsOf((await streamResults(resultsFile, read)).rows, resultsFile, o.ledgers))?.batchId);
  const view = await withResults(resultsFile, read, (table) => {
    batchColumns(table, resultsFile); // (refused: a header that does not name each row's reference, amount and currency)
    return resultsViewOf(table, resultsFile, {
      tieOut,
      environment: o.environment,
      batchId,
      notes: problem ? [problem] : [],
      swaps: o.swaps,
    });
  });
  await writeFileAtomic(path, [resultsHtml(view)]);
  return path;
}

/** `payout-batch report INPUT`: a plan file, a results file or a batch file (offline). Errors are the readers' own. */
export async function writeReportOf(
  input: string,
  o: {
    out?: string;
    sheet?: string;
    encoding?: string;
    /** The approvals of a plan input, given by the caller: the report shows them, never checks them. */
    approvalsOf?: (planPath: string) => ApprovalsInput;
    /** Where a results file's journal may be (its batch id). */
    ledgers?: Ledger[];
    /** The folder relative names are read and written in (a command's CliIO.cwd); messages name them as given. */
    dir?: string;
  } = {},
): Promise<{ kind: 'plan' | 'results' | 'batch'; path: string }> {
  const at = (p: string) => resolve(o.dir ?? '', p);
  const unreadable = (e: NodeJS.ErrnoException): never => {
    throw new RangeError(e.code === 'ENOENT' ? `${input}: no such file.` : `${input}: cannot read the file (${e.code ?? e.message}).`);
  };
  // (its first bytes tell a plan: a results file is then read a row at a time, never whole)
  const head = await readHead(at(input)).catch(unreadable);
  const path = o.out ?? reportPathFor(input);
  // (a .json is a plan or nothing: no batch or results file is JSON)
  if ((/^\s*\{/.test(head) && head.includes(`"${PLAN_KIND}"`)) || extname(input).toLowerCase() === '.json') {
    const bytes = await readFile(at(input)).catch(unreadable);
    const pf = parsePlanFile(bytes.toString('utf8'), input);
    // (read as the plan read it: a workbook's other sheet is the same file, its sha256 the same)
    const offline = await offlineOrUndefined(pf.file, { sheet: pf.sheet, encoding: pf.encoding, documents: pf.documents });
    await writePlanPage(at(path), planViewOfPlanFile(pf, offline, o.approvalsOf?.(at(input)), sha256Hex(bytes)));
    return { kind: 'plan', path };
  }
  try {
    await writeResultsReport(at(input), { ...o, out: at(path) });
    return { kind: 'results', path };
  } catch (e) {
    if (!(e instanceof ResultsError && e.code === 'NOT_A_RESULTS_FILE')) throw e;
  }
  const offline = await readOfflineBatch(input, { sheet: o.sheet, encoding: o.encoding, dir: o.dir });
  const planPath = o.out ?? planReportPathFor(input);
  await writePlanPage(at(planPath), planViewOffline(offline));
  return { kind: 'batch', path: planPath };
}

/** An output's report: its path with .html for its extension (payroll.results.csv → payroll.results.html), never the output itself. */
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
 * The tie-out `reconcile` wrote beside a results file (`<results name>.reconciliation.json`), read back as it computed it: nothing
 * is summed again here. None without that file; one that cannot be read (an amount that is not one) is a problem to show, never a 0.
 */
export async function readTieOut(
  resultsFile: string,
  read: { sheet?: string; encoding?: string } = {},
): Promise<{ tieOut?: TieOutSummary; problem?: string }> {
  const path = reconciliationPathFor(resultsFile, 'json');
  const problem = (why: string, then = '; run payout-batch reconcile again') => ({
    problem: `The reconciliation ${path} ${why}: the tie-out is not shown${then}.`,
  });
  const text = await readFile(path, 'utf8').catch((e: NodeJS.ErrnoException) => e);
  if (text instanceof Error) return text.code === 'ENOENT' ? {} : problem(`cannot be read (${text.code ?? text.message})`, '');
  const data = attempt(() => JSON.parse(text) as unknown);
  if (data === undefined) return problem('is not JSON');
  const r = TieOutSummarySchema.safeParse(data);
  if (r.success) {
    // (an earlier batch whose results file had this name, next month's payroll.results.csv: its tie-out is not this file's)
    // (a row's payout now, and those it replaced: a copy written before the row was sent again holds one of those)
    type Tied = { payoutId?: unknown; earlier?: Tied[] } | null;
    const rows = [(data as { rows?: Tied[] }).rows ?? []].flat();
    const tied = new Set(rows.flatMap((x) => [x?.payoutId, ...[x?.earlier ?? []].flat().map((e) => e?.payoutId)]));
    tied.delete(undefined);
    if (!tied.size) return { tieOut: r.data };
    for await (const row of (await streamResults(resultsFile, read)).rows) if (tied.has(row.result.payoutId)) return { tieOut: r.data };
    return problem("is of other payouts than this file's (an earlier batch's results had this name?)");
  }
  const i = r.error.issues[0];
  return problem(`cannot be read (${i?.path.join('.') || 'top level'}: ${i?.message})`);
}

// The one handler of `run` and `retry` (README.md): they differ only in the engine function they call.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { abortOn, failureJson, plural, printJson, saidFailed, type ArgsOf, type CliIO } from './command.ts';
import { groupThousands } from '../money.ts';
import { ExitCode, exitCodeOf } from './exit-codes.ts';
import {
  askYesNo,
  connectionHint,
  controlTotalFlags,
  inFlightFor,
  isInteractive,
  makeLogger,
  openTeamLedger,
  planningFlags,
  reportOrNote,
  screeningOf,
  serviceOf,
  stateRootOf,
  statusReportJson,
  statusReportOf,
  statusReportText,
  sendOptions,
  wholeNumber,
  withConnection,
  type ConnectionArgs,
} from './options.ts';
import { exitReasonText, handleEngineError, planJson, planText, progressSink, resumeText, screenFor, summaryText } from './render.ts';
import { execute, type PipelineResult, type Prepared, type SendOptions } from '../engine/pipeline.ts';
import type { BatchPlan } from '../engine/batch-plan.ts';
import { swapText } from '../engine/swap.ts';
import { writeResultsReport } from '../report/write-report.ts';
import { PolicyError, policyInForce, policySetSince, type AccountPolicy } from '../approvals/account-policy.ts';
import { accountOf, namesBatch } from '../ledger/account-ledger.ts';
import { InputError } from '../input/input-errors.ts';
import type { GuardOptions } from '../engine/guards.ts';
import { attempt } from '../files/attempt.ts';

export function confirmQuestion(plan: BatchPlan, environment: string): string {
  const totals = plan.currencies.filter((c) => c.rows > 0).map((c) => `${c.currency} ${groupThousands(c.total)}`);
  const resend = plan.resend?.rows
    ? `; ${plan.resend.rows} paying again a failed, refunded payout: ${plan.resend.byCurrency.map((c) => `${c.currency} ${groupThousands(c.amount)}`).join(', ')} plus fees`
    : '';
  const swaps = plan.fundedBySwaps ? plan.swaps.map((s) => `, after swapping ${swapText(s)}`).join('') : '';
  const held = plan.withoutDocument
    ? `, ${plan.withoutDocument} without a supporting document (held by the service until one is attached)`
    : '';
  return `Send ${plural(plan.toSend.length, 'payout')} (${totals.join(', ')}${resend})${swaps}${held} from ${environment}? [y/N] `;
}

/** Refused before anything is sent (exit 3): the reason on stderr, and in the --json summary. */
export const refused = (io: CliIO, json: boolean | undefined, reason: string): ExitCode =>
  saidFailed(io, json, `refused: ${reason}. Nothing was sent.`, ExitCode.REFUSED, reason);

/** The account's approval policy, read before the connection opens; a string: why it cannot be trusted; none: no service resolved. */
export async function accountPolicyOf(args: ConnectionArgs, io: CliIO): Promise<AccountPolicy | string | undefined> {
  const baseUrl = attempt(() => serviceOf(args, io)); // (a configuration refused: connecting says why)
  if (baseUrl === undefined) return undefined;
  const team = await openTeamLedger(args, io, makeLogger(args, io, 'policy'));
  try {
    return await policyInForce(baseUrl, team?.of(accountOf(baseUrl)));
  } catch (e) {
    if (e instanceof PolicyError) return e.message;
    throw e;
  } finally {
    await team?.close();
  }
}

export async function sendBatch<
  R extends PipelineResult & { batchId: string; journalPath: string; resent?: number; notResent?: unknown[]; keyProofs?: unknown[] },
>(
  args: ArgsOf<typeof sendOptions>,
  io: CliIO,
  command: 'run' | 'retry',
  prepare: (o: SendOptions) => Promise<Prepared<R>>,
  o: {
    /** The account's policy in force (`accountPolicyOf`, read before) and what it lets through. */
    policy?: AccountPolicy;
    guard?: Pick<GuardOptions, 'policy' | 'spend'>;
    /** Text after the summary (retry --resend-failed: what was paid again). */
    after?: (r: R) => string;
    /** The batch or results file the command names, or a batch id. */
    named?: string;
  },
): Promise<ExitCode> {
  const quiet = args.quiet || args.json;
  const out = (text: string) => {
    if (!quiet) io.stdout.write(text);
  };
  // (beside the plan: on stderr when the plan goes there, so nobody confirms a plan unseen)
  const beside = (text: string) => (quiet && !args.yes ? io.stderr.write(text) : out(text));
  const guards: GuardOptions = {
    envFlag: args.env,
    yes: args.yes,
    interactive: isInteractive(io),
    ...controlTotalFlags(args),
    ...planningFlags(args),
    ...o.guard,
  };
  const concurrency = wholeNumber(args.concurrency, '--concurrency takes a whole number of rows from 1 to 64', 1, 64);
  // A missing file is said as such first, not as "pass --yes" (it is not a question of --yes).
  if (o.named && !namesBatch(o.named, io.cwd) && !existsSync(resolve(io.cwd, o.named)))
    return handleEngineError(new InputError('FILE_NOT_FOUND', o.named, `${o.named}: no such file.`), io, args.json);
  // Nobody can answer the question: refused before the connection, so no request of the quota is spent.
  if (!args.yes && !guards.interactive)
    return refused(
      io,
      args.json,
      'not a terminal, so nobody can confirm: pass --yes (-y) for unattended runs (with --expect-rows / --expect-total as control totals)',
    );
  const logger = makeLogger(args, io, command);
  const label = { batch: '' };
  const progress = progressSink(io, logger, () => label.batch, quiet);
  const stateDir = stateRootOf(args, io);
  const stop = abortOn(io.stopSignal);
  let running = true;
  stop.addEventListener('abort', () => running && progress.stopping(), { once: true });
  return withConnection(
    args,
    io,
    command,
    async (conn) => {
      const environment = conn.environment.name;
      io.note?.({ conn });
      try {
        const settings = {
          mergeDocuments: args['merge-documents'],
          concurrency: concurrency ?? inFlightFor(args.rate),
          stop,
          events: progress.events,
        };
        // (no policy when it started: one set before the first payout holds it)
        const held = o.policy || conn.sandbox ? guards : { ...guards, spend: policySetSince(conn.environment.baseUrl) };
        const prepared = await prepare({ conn, stateDir, guards: held, settings, screening: screeningOf(args, io, o.policy) });
        const { plan } = prepared;
        progress.start(plan?.toSend.length ?? 0); // (first: it clears the preflight's line)
        out(resumeText(prepared.resume));
        const question = plan && confirmQuestion(plan, environment);
        if (plan) {
          label.batch = plan.batchId.slice(0, 16);
          // (where the whole plan can be read when the question shows it shortened to the screen)
          const whole = command === 'run' ? 'add --dry-run to print it whole' : 'add > plan.txt to write it whole';
          const screen = args.yes ? undefined : screenFor(quiet ? io.stderr : io.stdout, io.env, question!, whole);
          beside(planText(plan, environment, conn.environment.baseUrl, screen));
          logger.info(
            { batchId: label.batch, toSend: plan.toSend.length, alreadyCreated: plan.alreadyCreated, currencies: plan.currencies },
            'plan',
          );
        }
        for (const note of prepared.notes) beside(`Control totals: ${note}.\n`);
        const confirmed = prepared.confirm && !stop.aborted && (await askYesNo(io, question!).catch(() => false));
        const r = await execute(prepared, { confirmed });
        running = false;
        progress.stop();
        // (a run that sent nothing wrote nothing: its summary would only list NOT_SENT rows)
        if (r.resultsWritten || !(r.refused ?? r.halted)) out(summaryText(r));
        if (o.after) out(o.after(r));
        const report =
          args.report && r.resultsWritten
            ? await reportOrNote(io, () => writeResultsReport(r.resultsPath, { environment, swaps: r.summary.swaps, batchId: r.batchId }))
            : undefined;
        if (report) out(`Report: ${report}\n`);
        const statusReport = r.resultsWritten ? await statusReportOf(args, io, r.resultsPath, async () => r.batchId) : undefined;
        if (statusReport) out(`Status report: ${statusReportText(statusReport)}\n`);
        const exitCode = exitCodeOf(r);
        const reasons = r.refused ?? (r.halted ? [r.halted] : undefined);
        io.note?.({ ...r.summary, reasons, details: { batchId: r.batchId, results: r.resultsWritten ? r.resultsPath : undefined } });
        if (args.json)
          printJson(io, {
            exitCode,
            environment,
            batchId: r.batchId,
            journal: r.journalPath,
            results: r.resultsWritten ? r.resultsPath : undefined,
            report,
            ...statusReportJson(statusReport),
            resumed: r.report,
            refused: r.refused,
            halted: r.halted,
            plan: r.plan ? { ...planJson(r.plan), ...(r.plan.resend?.rows ? { resend: r.plan.resend } : {}) } : undefined,
            summary: r.summary,
            ...(r.resent !== undefined ? { resent: r.resent, notResent: r.notResent } : {}),
            ...(r.keyProofs?.length ? { keyProofs: r.keyProofs } : {}),
            ...(prepared.notes.length ? { notes: prepared.notes } : {}),
          });
        else if (exitCode !== ExitCode.OK) io.stderr.write(exitReasonText(r, connectionHint(args)));
        else out(exitReasonText(r, connectionHint(args)));
        return exitCode;
      } catch (e) {
        running = false;
        progress.stop();
        // (a failed request: withConnection says it, exit 4)
        const said = handleEngineError(e, io);
        // (stopped while the batch was read: nothing was sent, and the exit says it was the stop)
        const code = stop.aborted && said !== ExitCode.SERVICE_UNAVAILABLE ? ExitCode.INTERRUPTED : said;
        if (args.json) printJson(io, failureJson(code, (e as Error).message));
        return code;
      }
    },
    { stateRoot: stateDir, logger, onEvent: progress.onClientEvent },
  );
}

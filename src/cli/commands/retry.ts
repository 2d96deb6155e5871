// `payout-batch retry RESULTS`: re-runs the rows of a results file (perhaps edited) that have no
// payout yet, leaves created rows untouched, writes a new results file. Unknown outcomes are
// settled with their original key and body first; a refused row that was fixed goes under
// attempt + 1. A thin layer over src/engine/retry.ts.
import { defineCommand, UsageError } from '../command.ts';
import { retryResults } from '../../engine/retry.ts';
import {
  askYesNo,
  connectionOptions,
  exitReasonText,
  guardOptions,
  handleEngineError,
  inFlightFor,
  isInteractive,
  jsonSummary,
  planText,
  sendingOptions,
  sendingSession,
  STATE_DIR_HELP,
  stateRootOf,
  summaryText,
  type ConnectionArgs,
  type GuardArgs,
} from './run.ts';

interface RetryArgs extends ConnectionArgs, GuardArgs {
  results: string;
  out?: string;
  'state-dir'?: string;
  quote: boolean;
  'merge-documents': boolean;
  concurrency?: number;
  json: boolean;
  'resend-failed': boolean;
}

export default defineCommand<RetryArgs>({
  builder: (y) =>
    sendingOptions(guardOptions(connectionOptions(y)))
      .positional('results', { type: 'string', describe: 'A results file written by run or retry (it may be edited)' })
      .option('out', { type: 'string', describe: 'New results file (default <results>.retry-N beside it)' })
      .option('state-dir', { type: 'string', describe: STATE_DIR_HELP })
      .option('resend-failed', {
        type: 'boolean',
        default: false,
        describe:
          "Send again, under a new attempt, the rows whose payout FAILED or was REJECTED after creation, once the refund shows in the wallet's transactions",
      }) as never,
  run: async (args, io) => {
    if (!args.results) throw new UsageError('name the results file to retry');
    const { expectTotals, maxTotals, label, progress, conn, stop, out } = await sendingSession(args, io, 'retry');
    try {
      const r = await retryResults({
        resultsFile: args.results,
        resultsPath: args.out,
        stateDir: stateRootOf(args, io),
        conn,
        envFlag: args.env,
        yes: args.yes,
        interactive: isInteractive(io),
        allowPartial: args['allow-partial'],
        enablePairs: args['enable-pairs'],
        expectRows: args['expect-rows'],
        expectTotals,
        maxTotals,
        quote: args.quote,
        mergeDocuments: args['merge-documents'],
        resendFailed: args['resend-failed'],
        concurrency: args.concurrency ?? inFlightFor(args.rate),
        stop: stop.signal,
        onPlan: (plan) => {
          label.batch = plan.batchId.slice(0, 16);
          out(planText(plan, conn.environment.name));
          progress.start(plan.toSend.length);
        },
        confirm: (plan) =>
          askYesNo(
            io,
            `Send ${plan.toSend.length} row${plan.toSend.length === 1 ? '' : 's'} again from ${conn.environment.name}` +
              (plan.resend?.rows
                ? ` (${plan.resend.rows} paying again a failed, refunded payout: ${plan.resend.byCurrency.map((c) => `${c.currency} ${c.amount}`).join(', ')} plus fees)`
                : '') +
              '? [y/N] ',
          ),
        onEvent: (e) => progress.onEvent(e),
      });
      progress.stop();
      out(summaryText(r));
      if (args['resend-failed'])
        out(
          `Sent again after a failed, refunded payout: ${r.resent} row${r.resent === 1 ? '' : 's'}.\n` +
            r.notResent.map((n) => `  row ${n.rowNumber} ${n.reference}: ${n.reason}\n`).join(''),
        );
      if (args.json) io.stdout.write(jsonSummary(r, conn.environment.name));
      else (r.exitCode === 0 ? io.stdout : io.stderr).write(exitReasonText(r));
      return r.exitCode;
    } catch (e) {
      progress.stop();
      return handleEngineError(e, io);
    } finally {
      await conn.close().catch(() => undefined);
    }
  },
});

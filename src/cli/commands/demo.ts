// `payout-batch demo`: the sample payroll end to end on the embedded sandbox (src/demo).
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { defineCommand, flag, printJson, saying, str, UsageError } from '../command.ts';
import { ExitCode, exitCodeOf } from '../exit-codes.ts';
import { DemoRefused, runDemo } from '../../demo/tour.ts';
import { createLogger } from '../../log.ts';
import { planText, progressSink, summaryText, widthFor } from '../render.ts';

const builder = (y: Argv) =>
  y
    .option('json', flag('Print the outcome as JSON'))
    .option('rate', { type: 'number', default: 50, describe: 'Requests per second of the demo sandbox and client (the service allows 5)' })
    .option('dir', str('Folder for the copy of the sample, its results and reports, kept (default: a new temp folder)'))
    .option('keep', flag('Keep the temporary folders (results, reports, journal) to look at; by default they are removed at the end'));

export default defineCommand(builder, async (args, io) => {
  if (!(args.rate > 0)) throw new UsageError('--rate must be above 0');
  const say = (line: string) => {
    if (!args.json) io.stdout.write(`${line}\n`);
  };
  const progress = progressSink(io, createLogger({ level: 'silent' }), () => 'demo', args.json);
  const outcome = await saying(
    () =>
      runDemo({
        say,
        onPlan: (plan, env) => {
          progress.start(plan.toSend.length);
          say(planText(plan, env, undefined, widthFor(io.stdout, io.env)));
        },
        events: progress.events,
        onClientEvent: progress.onClientEvent,
        rate: args.rate,
        dir: args.dir && resolve(io.cwd, args.dir),
        keep: args.keep || args.dir !== undefined,
      }),
    DemoRefused,
  );
  progress.stop();
  if (args.json) {
    const { first, replay } = outcome;
    printJson(io, {
      ...outcome,
      first: { exitCode: exitCodeOf(first), summary: first.summary },
      replay: { exitCode: exitCodeOf(replay), alreadyCreated: replay.alreadyCreated, initiatesSent: replay.initiatesSent },
    });
  } else {
    say(summaryText({ summary: outcome.first.summary, resultsPath: outcome.resultsPath }));
    if (outcome.kept.length) {
      say(`Results file: ${outcome.resultsPath}`);
      say(`Journal:      ${outcome.journalPath}`);
      if (outcome.reconciliation.file) say(`Reconciliation file: ${outcome.reconciliation.file}`);
      if (outcome.reports.plan) say(`Plan report:  ${outcome.reports.plan}`);
      if (outcome.reports.results) say(`HTML report:  ${outcome.reports.results} (open it in a browser, or print it)`);
      say(`Kept, to remove when done: ${outcome.kept.join(', ')}`);
    } else
      say(
        `\nRemoved its folders (${outcome.dir}, and the journal's): \`npm run demo -- --keep\` keeps the results, the journal and the HTML reports.`,
      );
    say('\nDone: no money moved, everything above happened on this machine.');
  }
  const ok = outcome.first.kind === 'ok' && outcome.replay.initiatesSent === 0 && outcome.balancesMatch && outcome.reconciliation.tiesOut;
  return ok ? ExitCode.OK : ExitCode.ROWS_FAILED;
});

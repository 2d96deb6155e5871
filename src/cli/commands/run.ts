// `payout-batch run FILE`: preflight, approval, then every valid row (quote -> documents ->
// initiate -> PATCH), journalled so that a run killed at any instant continues where it stopped
// when started again with the same command. A thin layer: flags -> engine (cli/send.ts) -> exit code.
import type { Argv } from 'yargs';
import { defineCommand, UsageError } from '../command.ts';
import { batchFileOptions, type ArgsOf } from '../options.ts';
import { sendBatch, sendOptions } from '../send.ts';
import { runBatch } from '../../engine/run.ts';
import { showPlan } from './plan.ts';

const builder = (y: Argv) =>
  batchFileOptions(sendOptions(y))
    .positional('file', { type: 'string', describe: 'The batch file (CSV or Excel); optional with --plan' })
    .option('plan', { type: 'string', describe: 'Run exactly this plan (from `payout-batch plan FILE --out PLAN`)' })
    .option('results', { type: 'string', describe: 'Results file (.csv or .xlsx); default <batch>.results.<ext> beside the batch' })
    .option('dry-run', {
      type: 'boolean',
      default: false,
      describe: 'Do what `plan` does (validate, quote, print the plan) and send nothing',
    });

export default defineCommand<ArgsOf<typeof builder>>({
  builder,
  run: async (args, io) => {
    if (args['dry-run']) {
      if (!args.file) throw new UsageError('--dry-run previews a batch file: name it (a --plan file is already a preview)');
      return showPlan({ ...args, file: args.file }, io);
    }
    if (!args.file && !args.plan) throw new UsageError('name the batch file, or --plan PLAN');
    return sendBatch(args, io, 'run', (o) =>
      runBatch({
        ...o,
        file: args.file,
        planFile: args.plan,
        batchId: args['batch-id'],
        resultsPath: args.results,
        encoding: args.encoding,
        sheet: args.sheet,
        allowDuplicateRows: args['allow-duplicate-rows'],
      }),
    );
  },
});

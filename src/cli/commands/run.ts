// `payout-batch run FILE`: preflight, approval, then every valid row (quote -> documents ->
// initiate -> PATCH), journalled so that a run killed at any instant continues where it stopped
// when started again with the same command. A thin layer: flags -> engine (cli/send.ts) -> exit code.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { defineCommand, flag, printJson, UsageError, type CliIO } from '../command.ts';
import { ExitCode } from '../exit-codes.ts';
import { batchFileOptions, moneyFlags, type ArgsOf } from '../options.ts';
import { sendBatch, sendOptions } from '../send.ts';
import { approvalGate } from '../../approvals/gate.ts';
import { controlTotalReasons } from '../../engine/approval.ts';
import { runBatch } from '../../engine/pipeline.ts';
import { showPlan } from './plan.ts';

const builder = (y: Argv) =>
  batchFileOptions(sendOptions(y))
    .positional('file', { type: 'string', describe: 'The batch file (CSV or Excel); optional with --plan' })
    .option('plan', { type: 'string', describe: 'Run exactly this plan (from `payout-batch plan FILE --out PLAN`)' })
    .option('results', { type: 'string', describe: 'Results file (.csv or .xlsx); default <batch>.results.<ext> beside the batch' })
    .option('require-approvals', {
      type: 'number',
      describe: "With --plan: refuse (nothing sent) unless N distinct listed approvers, none the plan's maker, signed this exact plan",
    })
    .option('approvers', {
      type: 'string',
      describe: 'The approvers list for --require-approvals (JSON: [{"name", "publicKey"}]); default $PAYOUT_BATCH_APPROVERS',
    })
    .option('dry-run', flag('Do what `plan` does (validate, quote, print the plan) and send nothing'));

export default defineCommand<ArgsOf<typeof builder>>({
  builder,
  run: async (args, io) => {
    if (args['dry-run']) {
      if (!args.file) throw new UsageError('--dry-run previews a batch file: name it (a --plan file is already a preview)');
      // The control totals checked as `run` checks them (exit 3 on a mismatch); nothing is sent either way.
      const expectTotals = moneyFlags(args['expect-total'], '--expect-total');
      const maxTotals = moneyFlags(args['max-total'], '--max-total');
      const expectRows = args['expect-rows'];
      return showPlan({ ...args, file: args.file }, io, (r) =>
        controlTotalReasons({ expectRows, expectTotals, maxTotals, payable: r.payable }),
      );
    }
    if (!args.file && !args.plan) throw new UsageError('name the batch file, or --plan PLAN');
    // Four eyes: checked before the connection is opened, so a refused plan costs not one request.
    const approved = args['require-approvals'] !== undefined ? approvedPlan(args, io) : undefined;
    if (typeof approved === 'number') return approved;
    try {
      return await send(args, io, approved?.path ?? args.plan);
    } finally {
      approved?.cleanup();
    }
  },
});

function send(args: ArgsOf<typeof builder>, io: CliIO, planFile: string | undefined) {
  return sendBatch(args, io, 'run', (o) =>
    runBatch({
      ...o,
      file: args.file,
      planFile,
      batchId: args['batch-id'],
      resultsPath: args.results,
      encoding: args.encoding,
      sheet: args.sheet,
      allowDuplicateRows: args['allow-duplicate-rows'],
    }),
  );
}

/**
 * `--require-approvals N`: the plan's approvals checked (src/approvals); refused, the exit code;
 * approved, a private copy of the plan's bytes as checked, for the engine to run.
 */
function approvedPlan(args: ArgsOf<typeof builder>, io: CliIO): ExitCode | { path: string; cleanup: () => void } {
  const required = args['require-approvals']!;
  if (!Number.isInteger(required) || required < 1) throw new UsageError('--require-approvals takes a whole number of approvers, 1 or more');
  if (!args.plan) throw new UsageError('--require-approvals needs --plan PLAN: approvers sign a plan (`payout-batch approve PLAN`)');
  const list = args.approvers ?? io.env.PAYOUT_BATCH_APPROVERS;
  if (!list) throw new UsageError('--require-approvals needs the approvers list: --approvers FILE, or $PAYOUT_BATCH_APPROVERS');
  const planPath = resolve(io.cwd, args.plan);
  const g = approvalGate({ planPath, required, approversPath: resolve(io.cwd, list) });
  if (!g.ok || !g.plan) {
    io.stderr.write(`payout-batch: refused: ${g.message}. Nothing was sent.\n`);
    if (args.json) printJson(io, { exitCode: ExitCode.REFUSED, refused: [g.message] });
    return ExitCode.REFUSED;
  }
  if (!args.quiet && !args.json) io.stdout.write(`Approvals: ${g.message}.\n`);
  const dir = mkdtempSync(join(tmpdir(), 'payout-batch-approved-'));
  const path = join(dir, basename(planPath));
  writeFileSync(path, g.plan.bytes, { mode: 0o600 });
  return { path, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

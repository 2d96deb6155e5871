// `payout-batch report FILE|PLAN|RESULTS`: the HTML report (src/report), offline: never costs quota.
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { CommandError, defineCommand, str, type ArgsOf, type CliIO } from '../command.ts';
import { fileReadingOptions } from '../file-options.ts';
import { ExitCode } from '../exit-codes.ts';
import { InputError } from '../../input/read-batch.ts';
import { ResultsError } from '../../results/results-errors.ts';
import { BatchUnusable } from '../../engine/engine-errors.ts';
import { writeReportOf } from '../../report/write-report.ts';
import { ApprovalsFileError, readApprovers } from '../../approvals/approvals-file.ts';
import { approvalsView } from '../../approvals/view.ts';
import { PlanFileError } from '../../approvals/payload.ts';
import { makeLogger, openTeamLedger, resultsNamed, STATE_DIR_HELP, stateRootOf } from '../options.ts';
import { namesBatch } from '../../ledger/account-ledger.ts';
import { ledgersIn } from '../../ledger/open.ts';

const builder = (y: Argv) =>
  fileReadingOptions(y)
    .positional('input', { ...str('A plan file, a results file or its batch id, or a batch file (read offline)'), demandOption: true })
    .option('out', str('Write the report here (default: beside the input, as <name>.html; <batch>.plan.html for a batch file)'))
    .option('approvers', str("For a plan: the approvers list, to check each signer's key (default $PAYOUT_BATCH_APPROVERS)"))
    .option('ledger', str("For a batch id: the team's ledger that holds it ($PAYOUT_BATCH_LEDGER_URL)"))
    .option('state-dir', str(STATE_DIR_HELP));

/** The results file of a batch named by its id (in the state folder's or the team's ledgers); undefined for a file. */
async function resultsOfBatchId(args: ArgsOf<typeof builder>, io: CliIO): Promise<string | undefined> {
  if (!namesBatch(args.input, io.cwd)) return undefined;
  const team = await openTeamLedger(args, io, makeLogger({}, io, 'report'));
  try {
    return await resultsNamed(await ledgersIn([stateRootOf(args, io)], team), args.input, io);
  } finally {
    await team?.close();
  }
}

const WHAT = {
  plan: 'the plan',
  results: 'the results',
  batch: 'the batch file, offline (no fees, balances or quotes: `plan FILE` has them)',
};

export default defineCommand(builder, async (args, io: CliIO) => {
  try {
    const approversFile = args.approvers ?? io.env.PAYOUT_BATCH_APPROVERS;
    const r = await writeReportOf((await resultsOfBatchId(args, io)) ?? args.input, {
      out: args.out,
      dir: io.cwd,
      sheet: args.sheet,
      encoding: args.encoding,
      ledgers: await ledgersIn([stateRootOf(args, io)]),
      approvalsOf: (plan) => ({
        ...approvalsView(plan, approversFile ? readApprovers(resolve(io.cwd, approversFile)) : undefined),
        listChecked: approversFile !== undefined,
      }),
    });
    io.stdout.write(`Report of ${WHAT[r.kind]} written to ${r.path}\n`);
    return ExitCode.OK;
  } catch (e) {
    if ([ResultsError, InputError, RangeError, ApprovalsFileError, PlanFileError, BatchUnusable].some((c) => e instanceof c))
      throw new CommandError((e as Error).message);
    const code = (e as NodeJS.ErrnoException).code;
    if (code) throw new CommandError(`cannot write or read ${args.out ?? args.input}: ${code}`);
    throw e;
  }
});

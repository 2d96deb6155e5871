// `payout-batch run FILE` (cli/send-batch.ts): journalled, so the same command resumes a run killed at any instant.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { defineCommand, flag, num, str, UsageError, type ArgsOf, type CliIO } from '../command.ts';
import { batchFileFlags, batchFileOptions } from '../file-options.ts';
import {
  controlTotalFlags,
  duplicateFlags,
  outputFolderChecked,
  sendOptions,
  signalled,
  swapFlags,
  swapOptions,
  swapRateTolerance,
  wholeNumber,
  withPlanEnvironment,
} from '../options.ts';
import { accountPolicyOf, refused, sendBatch } from '../send-batch.ts';
import { policyGate, policyGuard, policyRefusal } from '../../approvals/account-policy.ts';
import { approvalGate } from '../../approvals/sign.ts';
import type { LoadedPlan } from '../../approvals/payload.ts';
import { controlTotalNotes, controlTotalReasons, type GuardOptions } from '../../engine/guards.ts';
import { prepareRun, type SendOptions } from '../../engine/pipeline.ts';
import { showPlan } from './plan.ts';
import { shellWord } from '../../text.ts';

const builder = (y: Argv) =>
  swapOptions(batchFileOptions(sendOptions(y)))
    .option('fund-by-swap', flag("Fund a short wallet by the plan's swap, sent before its currency's rows (a --plan file needs no flag)"))
    .option('swap-rate-tolerance', str("How far, in percent, the pair's rate may move since the plan before a swap is refused (default 1)"))
    .positional('file', str('The batch file (CSV, Excel or ISO 20022 pain.001); optional with --plan'))
    .option('plan', str('Run exactly this plan (from `payout-batch plan FILE --out PLAN`)'))
    .option('results', str('Results file (.csv or .xlsx); default <batch>.results.<ext> beside the batch'))
    .option('require-approvals', num('With --plan: refuse unless N distinct listed approvers, none its maker, signed this exact plan'))
    .option('approvers', str('The approvers list for --require-approvals (JSON: [{"name", "publicKey"}]); default $PAYOUT_BATCH_APPROVERS'))
    .option('dry-run', flag('Preview as `plan` does (fees estimated, nothing quoted, no plan file) and send nothing'));

const command = defineCommand(builder, async (flags, cliIO) => {
  const [args, io] = withPlanEnvironment(flags, cliIO);
  if (args['dry-run']) {
    if (!args.file) throw new UsageError('--dry-run previews a batch file: name it (a --plan file is already a preview)');
    const totals = controlTotalFlags(args);
    return showPlan({ ...args, file: args.file, quote: false }, io, (r) => ({
      refused: controlTotalReasons({ ...totals, payable: r.payable }),
      notes: controlTotalNotes({ ...totals, payable: r.payable }),
    }));
  }
  if (!args.file && !args.plan) throw new UsageError('name the batch file, or --plan PLAN');
  outputFolderChecked('--results', args.results, io);
  // Four eyes: checked before the connection is opened, so a refused plan costs not one request.
  const approved = await approvedPlan(args, io);
  if (typeof approved === 'number') return approved;
  try {
    const prepare = (o: SendOptions) =>
      prepareRun({
        ...o,
        guards: { ...o.guards, ...swapFlags(args), fundBySwap: args['fund-by-swap'], swapCommand: fundBySwapCommand(args) },
        settings: { ...o.settings, swapRateTolerance: swapRateTolerance(args['swap-rate-tolerance']) },
        file: args.file && resolve(io.cwd, args.file),
        planFile: approved.path ?? (args.plan && resolve(io.cwd, args.plan)),
        batchId: args['batch-id'],
        resultsPath: args.results && resolve(io.cwd, args.results),
        ...batchFileFlags(args, io.cwd),
        ...duplicateFlags(args),
      });
    return await sendBatch(args, io, 'run', prepare, { policy: approved.policy, guard: approved.guard, named: args.file });
  } finally {
    approved.cleanup?.();
  }
});
export default signalled('run', command);

/** This command with --fund-by-swap, as the refusal of a short batch says it. */
export function fundBySwapCommand(args: ArgsOf<typeof builder>): string {
  const from = args['swap-from'] ? ` --swap-from ${shellWord(args['swap-from'])}` : '';
  return `\`payout-batch run ${shellWord(args.file ?? '')}${from} --fund-by-swap\`, with this command's other flags`;
}

/**
 * `--require-approvals N` and the account's policy, before anything is sent (a policy with `above`
 * amounts: the engine's guard decides). A plan that passed runs from a private copy of the checked bytes.
 */
async function approvedPlan(args: ArgsOf<typeof builder>, io: CliIO) {
  const policy = await accountPolicyOf(args, io);
  if (typeof policy === 'string') return refused(io, args.json, policy);
  const required = args['require-approvals'];
  const planPath = args.plan && resolve(io.cwd, args.plan);
  const passed: string[] = [];
  let plan: LoadedPlan | undefined;
  if (required !== undefined) {
    wholeNumber(required, '--require-approvals takes a whole number of approvers, 1 or more', 1);
    if (!planPath) throw new UsageError('--require-approvals needs --plan PLAN: approvers sign a plan (`payout-batch approve PLAN`)');
    const list = args.approvers ?? io.env.PAYOUT_BATCH_APPROVERS;
    if (!list) throw new UsageError('--require-approvals needs the approvers list: --approvers FILE, or $PAYOUT_BATCH_APPROVERS');
    const g = approvalGate({ plan: planPath, required, approvers: resolve(io.cwd, list) });
    if (!g.ok || !g.plan) return refused(io, args.json, g.message);
    plan = g.plan;
    passed.push(`Approvals: ${g.message}.`);
  }
  let guard: Pick<GuardOptions, 'policy' | 'spend'> | undefined;
  if (policy) {
    const g = planPath ? policyGate(policy, plan ?? planPath) : undefined;
    if (g?.ok && g.plan) {
      plan = g.plan;
      passed.push(`Approvals under this account's policy: ${g.message}.`);
    }
    guard = policyGuard(policy, g);
    const now = policy.above ? undefined : policyRefusal(policy, g);
    if (now) return refused(io, args.json, now);
  }
  if (!args.quiet && !args.json) for (const line of passed) io.stdout.write(`${line}\n`);
  if (!plan) return { guard, policy };
  const dir = mkdtempSync(join(tmpdir(), 'payout-batch-approved-'));
  const path = join(dir, basename(plan.path));
  writeFileSync(path, plan.bytes, { mode: 0o600 });
  return { path, cleanup: () => rmSync(dir, { recursive: true, force: true }), guard, policy };
}

// `payout-batch approve PLAN --as NAME --key-file KEY`: signs the plan's exact content (Ed25519) and
// adds the approval to PLAN.approvals.json beside it; the plan itself is never rewritten. Prints
// what was signed, so the approver sees the rows, totals and service they release.
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { defineCommand, plural, UsageError } from '../command.ts';
import { ExitCode } from '../exit-codes.ts';
import { KeyError } from '../../approvals/keys.ts';
import { nameProblem, sameName } from '../../engine/approval.ts';
import { loadPlan, payloadText, planPayload, PlanFileError } from '../../approvals/payload.ts';
import { signPlan } from '../../approvals/sign.ts';
import { addApproval, approvalsPathFor, ApprovalsFileError, readApprovals } from '../../approvals/store.ts';
import { LockBusy } from '../../files/lock.ts';
import type { ArgsOf } from '../options.ts';

const builder = (y: Argv) =>
  y
    .positional('plan', { type: 'string', demandOption: true, describe: 'The plan file (from `payout-batch plan FILE --out PLAN`)' })
    .option('as', { type: 'string', demandOption: true, describe: 'Your name, as the approvers list names you' })
    .option('key-file', {
      type: 'string',
      demandOption: true,
      describe: 'Your private approver key (PEM, from `payout-batch approver-key new`)',
    });

export default defineCommand<ArgsOf<typeof builder>>({
  builder,
  run: async (args, io) => {
    const name = args.as.trim();
    if (!name) throw new UsageError('--as names you, as the approvers list does');
    const bad = nameProblem(name);
    if (bad) throw new UsageError(`--as ${JSON.stringify(name)}: ${bad}`);
    const planPath = resolve(io.cwd, args.plan);
    const keyPath = resolve(io.cwd, args['key-file']);
    try {
      const plan = loadPlan(planPath);
      const payload = planPayload(plan);
      let pem: string;
      try {
        pem = readFileSync(keyPath, 'utf8');
      } catch (e) {
        throw new UsageError(`cannot read the key file ${keyPath}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      }
      const approval = signPlan(payload, name, pem, keyPath);
      // As ssh does for its keys, said (not refused): a key others can read may be another's signature.
      if (process.platform !== 'win32' && (statSync(keyPath).mode & 0o077) !== 0)
        io.stderr.write(`payout-batch: warning: ${keyPath} is readable by others: \`chmod 600\` it\n`);
      const approvalsPath = approvalsPathFor(planPath);
      const { replaced } = await addApproval(approvalsPath, approval);
      const all = readApprovals(approvalsPath);
      io.stdout.write(
        `Approved ${args.plan} as ${name} (key ${approval.publicKeyFingerprint}) at ${approval.signedAt}:\n  ${payloadText(payload)}\n` +
          `${replaced ? 'Your earlier approval was replaced. ' : ''}Written to ${approvalsPathFor(args.plan)} ` +
          `(${plural(all.length, 'approval')}: ${all.map((a) => a.name).join(', ')}).\n`,
      );
      if (payload.preparedBy !== null && sameName(name, payload.preparedBy))
        io.stderr.write(
          `payout-batch: note: ${payload.preparedBy} made this plan: this signature records it, and neither it nor your key counts as an approval for \`run --require-approvals\` (four eyes)\n`,
        );
      return ExitCode.OK;
    } catch (e) {
      if (e instanceof PlanFileError || e instanceof KeyError || e instanceof ApprovalsFileError)
        throw new UsageError(e.message, ExitCode.UNUSABLE_INPUT);
      if (e instanceof LockBusy)
        throw new UsageError(`another approval of this plan is being written (${e.message}): try again`, ExitCode.REFUSED);
      throw e;
    }
  },
});

// `payout-batch approvers add FILE... --out LIST`: create or extend the approvers list (approvals-file.ts).
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { CommandError, defineCommand, plural, strs } from '../command.ts';
import { ExitCode } from '../exit-codes.ts';
import { addApprovers, ApprovalsFileError } from '../../approvals/approvals-file.ts';
import { LockBusy } from '../../files/lock.ts';
import { shellWord } from '../../text.ts';

const builder = (y: Argv) =>
  y
    .positional('action', { type: 'string', choices: ['add'] as const, demandOption: true, describe: '`add`: add approvers to the list' })
    .positional('files', { ...strs('Public key files of `approver-key new`, or approvers lists'), demandOption: true })
    .option('out', { type: 'string', demandOption: true, describe: 'The approvers list to create or extend (JSON)' });

export default defineCommand(builder, async (args, io) => {
  try {
    const r = await addApprovers(
      resolve(io.cwd, args.out),
      args.files.map((f) => resolve(io.cwd, String(f))),
    );
    io.stdout.write(
      `${args.out}: ${plural(r.all.length, 'approver')} (${r.all.map((a) => `${a.name} ${a.fingerprint}`).join(', ')})` +
        `${r.added.length ? `; added ${r.added.join(', ')}` : ''}${r.kept.length ? `; already listed ${r.kept.join(', ')}` : ''}.\n` +
        `Use it with \`payout-batch run --plan PLAN --require-approvals N --approvers ${shellWord(args.out)}\` or \`payout-batch policy set\`.\n`,
    );
    return ExitCode.OK;
  } catch (e) {
    if (e instanceof ApprovalsFileError) throw new CommandError(`${e.message}: nothing was written`, ExitCode.UNUSABLE_INPUT);
    if (e instanceof LockBusy)
      throw new CommandError(`${args.out} is being written by another command (${e.message}): try again`, ExitCode.REFUSED);
    throw e;
  }
});

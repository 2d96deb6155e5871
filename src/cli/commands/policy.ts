// `payout-batch policy set|show`: the approval policy of a service account (src/approvals/
// account-policy.ts), kept in the account's ledger so that every run, retry and watch against the
// account needs the approvals it names, whatever flags they are given.
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { defineCommand, printJson, UsageError, type CliIO } from '../command.ts';
import { ExitCode } from '../exit-codes.ts';
import { connectionOptions, makeLogger, moneyFlags, openTeamLedger, STATE_DIR_HELP, stateRootOf, type ArgsOf } from '../options.ts';
import { describePolicy, parseDuration, PolicyError, readAccountPolicy, writeAccountPolicy } from '../../approvals/account-policy.ts';
import { ApprovalsFileError, readApprovers } from '../../approvals/store.ts';
import { resolveEnvironment } from '../../client/environment.ts';
import { FileLedger, ledgerDirFor } from '../../ledger/file.ts';
import { accountOf } from '../../ledger/ledger.ts';

const builder = (y: Argv) =>
  connectionOptions(y)
    .positional('action', { type: 'string', choices: ['set', 'show'] as const, demandOption: true, describe: '`set` or `show`' })
    .option('require-approvals', { type: 'number', describe: 'set: N distinct listed approvers, none the plan maker, must sign a plan' })
    .option('approvers', { type: 'string', describe: 'set: the approvers list (JSON: [{"name", "publicKey"}]), copied into the policy' })
    .option('above', {
      type: 'string',
      array: true,
      describe: 'set: approvals only for a batch sending more than CUR:AMOUNT in that currency (repeatable; other currencies: always)',
    })
    .option('approvals-expire-after', {
      type: 'string',
      describe: 'set: an approval signed longer ago than this (7d, 12h) no longer counts',
    })
    .option('state-dir', { type: 'string', describe: STATE_DIR_HELP })
    .option('json', { type: 'boolean', default: false, describe: 'Print the policy as JSON' });

type Args = ArgsOf<typeof builder>;

/** The ledger folder of the account the connection flags name (no request is made). */
function ledgerDirOf(args: Args, io: CliIO): { account: string; dir: string } {
  const env = resolveEnvironment({ env: args.env, baseUrl: args['base-url'], gatewayHost: args['gateway-host'], vars: io.env });
  if (env.baseUrl === undefined)
    throw new UsageError("the embedded sandbox's ledger lasts one command: name a service (--env sandbox|production, or --base-url)");
  const account = accountOf(env.baseUrl);
  return { account, dir: ledgerDirFor(stateRootOf(args, io), account) };
}

export default defineCommand<Args>({
  builder,
  run: async (args, io) => {
    const { account, dir } = ledgerDirOf(args, io);
    // a team ledger (--ledger): the policy is the database's, for every host on it
    const team = await openTeamLedger(args, io, makeLogger(args, io, 'policy'));
    const ledger = team ? team.of(account) : new FileLedger(account, dir);
    try {
      if (args.action === 'show') {
        const p = await readAccountPolicy(ledger);
        if (args.json) printJson(io, p ?? null);
        else io.stdout.write(p ? `${account}: ${describePolicy(p)} (set ${p.setAt} by ${p.setBy})\n` : `${account}: no approval policy\n`);
        return ExitCode.OK;
      }
      const required = args['require-approvals'];
      if (required === undefined || !Number.isInteger(required) || required < 1)
        throw new UsageError('policy set needs --require-approvals N, a whole number of approvers, 1 or more');
      if (!args.approvers) throw new UsageError('policy set needs --approvers FILE, the list of who may approve');
      const approvers = readApprovers(resolve(io.cwd, args.approvers));
      if (approvers.length < required)
        throw new UsageError(`--require-approvals ${required}, but ${args.approvers} lists ${approvers.length}: nobody could ever approve`);
      let expireAfterMs: number | undefined;
      try {
        expireAfterMs = args['approvals-expire-after'] ? parseDuration(args['approvals-expire-after']) : undefined;
      } catch (e) {
        throw new UsageError(`--approvals-expire-after ${(e as Error).message}`);
      }
      const above = args.above?.length
        ? Object.fromEntries(moneyFlags(args.above, '--above').map((m) => [m.currency, m.amount.toFixed()]))
        : undefined;
      const policy = { account, requireApprovals: required, approvers, above, expireAfterMs };
      const p = await writeAccountPolicy(ledger, policy);
      if (args.json) printJson(io, p);
      else io.stdout.write(`${account}: ${describePolicy(p)}\nEvery run, retry and watch against this account now needs it.\n`);
      return ExitCode.OK;
    } catch (e) {
      if (e instanceof ApprovalsFileError) throw new UsageError(e.message);
      if (e instanceof PolicyError) throw new UsageError(e.message, ExitCode.REFUSED);
      throw e;
    } finally {
      await team?.close();
    }
  },
});

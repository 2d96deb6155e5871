// `payout-batch policy set|remove|apply|show`: the approval policy of an account
// (approvals/account-policy.ts). The first is set at once; a change is a proposal its approvers sign.
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { CommandError, defineCommand, durationFlag, flag, num, plural, printJson, str, strs, UsageError, type CliIO } from '../command.ts';
import { ExitCode } from '../exit-codes.ts';
import type { ArgsOf } from '../command.ts';
import { connectionOptions, makeLogger, moneyFlags, openTeamLedger, serviceOf } from '../options.ts';
import {
  describePolicy,
  hostStore,
  PolicyError,
  teamOnRecordIs,
  teamStore,
  type PolicyRecord,
  type PolicyRules,
  type PolicyStore,
  who,
} from '../../approvals/account-policy.ts';
import { applyProposal, loadProposal, writeProposal } from '../../approvals/policy-change.ts';
import { ApprovalsFileError, readApprovers } from '../../approvals/approvals-file.ts';
import { accountOf } from '../../ledger/account-ledger.ts';
import { shellWord } from '../../text.ts';

const builder = (y: Argv) =>
  connectionOptions(y)
    .positional('action', {
      type: 'string',
      choices: ['set', 'remove', 'apply', 'show'] as const,
      demandOption: true,
      describe: '`set`, `remove` (a proposal once a policy is in force), `apply PROPOSAL` once approved, or `show`',
    })
    .positional('proposal', str('apply: the proposal file `policy set|remove` wrote'))
    .option('require-approvals', num('set: N distinct listed approvers, none the plan maker, must sign a plan'))
    .option('approvers', str('set: the approvers list (JSON: [{"name", "publicKey"}]), copied into the policy'))
    .option('above', strs('set: approvals only for a batch sending more than CUR:AMOUNT in it, repeatable (others: always)'))
    .option('approvals-expire-after', str('set: an approval signed longer ago than this (7d, 12h) no longer counts'))
    .option('screening-max-age', str('set: every run screens payees against lists at most this old (1d, 12h), else is refused'))
    .option('out', { type: 'string', default: 'policy-change.json', describe: 'set, remove: where the proposal of a change is written' })
    .option('json', flag('Print the policy as JSON'));

type Args = ArgsOf<typeof builder>;

function rulesOf(args: Args, io: CliIO): PolicyRules {
  const required = args['require-approvals'];
  if (required === undefined || !Number.isInteger(required) || required < 1)
    throw new UsageError('policy set needs --require-approvals N, a whole number of approvers, 1 or more');
  if (!args.approvers) throw new UsageError('policy set needs --approvers FILE, the list of who may approve');
  const approvers = readApprovers(resolve(io.cwd, args.approvers));
  if (approvers.length < required)
    throw new UsageError(`--require-approvals ${required}, but ${args.approvers} lists ${approvers.length}: nobody could ever approve`);
  const duration = (flag: 'approvals-expire-after' | 'screening-max-age') => args[flag] && durationFlag(flag, args[flag]);
  const [expireAfterMs, screeningMaxAgeMs] = [duration('approvals-expire-after'), duration('screening-max-age')];
  const above = args.above?.length
    ? Object.fromEntries(moneyFlags(args.above, '--above').map((m) => [m.currency, m.amount.toFixed()]))
    : undefined;
  return {
    requireApprovals: required,
    approvers,
    ...(above ? { above } : {}),
    ...(expireAfterMs ? { expireAfterMs } : {}),
    ...(screeningMaxAgeMs ? { screeningMaxAgeMs } : {}),
  };
}

function showText(account: string, r: PolicyRecord): string {
  const now = r.policy
    ? `${describePolicy(r.policy)} (version ${r.version}, set ${r.policy.setAt} by ${r.policy.setBy})`
    : 'no approval policy';
  const versions = r.history.map(
    (h) =>
      `  version ${h.version}, ${h.setAt} by ${h.setBy}${h.signedBy.length ? `, signed by ${h.signedBy.join(', ')}` : ''}: ${h.policy ?? 'removed'}\n`,
  );
  return `${account}: ${now}\n${versions.length ? `history:\n${versions.join('')}` : ''}`;
}

export default defineCommand(builder, async (args, io) => {
  const team = await openTeamLedger(args, io, makeLogger(args, io, 'policy'));
  try {
    if (args.action === 'apply') {
      if (!args.proposal) throw new UsageError('policy apply PROPOSAL: name the proposal file of `policy set|remove`');
      const loaded = loadProposal(resolve(io.cwd, args.proposal));
      const { account, store: kind } = loaded.proposal;
      if (kind === 'team' && !team) throw new UsageError(`${args.proposal} changes the policy in a team ledger: give it with --ledger`);
      const { record, tally } = await applyProposal(team && kind === 'team' ? teamStore(team.of(account)) : hostStore(account), loaded);
      io.stdout.write(
        `${tally}: ${record.policy ? `version ${record.version} is in force` : 'the policy is removed'}.\n${showText(account, record)}`,
      );
      return ExitCode.OK;
    }
    const baseUrl = serviceOf(args, io);
    if (baseUrl === undefined)
      throw new UsageError(
        'the embedded sandbox lasts one command and has no policy: name a service (--env sandbox|production, or --base-url)',
      );
    const account = accountOf(baseUrl);
    const store: PolicyStore = team ? teamStore(team.of(account)) : hostStore(account);
    const current = await store.read();
    if (args.action === 'show') {
      if (args.json) printJson(io, current.policy ?? null);
      else io.stdout.write(showText(account, current));
      return ExitCode.OK;
    }
    const next = args.action === 'set' ? rulesOf(args, io) : null;
    if (!current.policy) {
      if (!next) {
        io.stdout.write(`${account}: no approval policy to remove\n`);
        return ExitCode.OK;
      }
      // the first policy needs no approvals: there is nobody yet to give them (none in the team ledger on record either)
      if (!team) teamOnRecordIs(account);
      // (a run on a host needs the host's policy before the team ledger's)
      const own = team && (await hostStore(account).read()).policy;
      const r = await store.write({ ...next, account }, []);
      const but = own
        ? `, except on a host with a policy of its own: this one has one (${describePolicy(own)}), which binds its runs until removed (\`payout-batch policy remove\` without --ledger)`
        : '';
      if (args.json) printJson(io, r.policy);
      else
        io.stdout.write(
          `${account}: ${describePolicy(r.policy!)}\nEvery run, retry and watch against this account now needs it (${store.where})${but}.\n`,
        );
      return ExitCode.OK;
    }
    const p = current.policy;
    await writeProposal(resolve(io.cwd, args.out), { current: p, store: team ? 'team' : 'host', next, by: who() });
    io.stdout.write(
      `${account}: the policy in force (${describePolicy(p)}) changes only with ${plural(p.requireApprovals, 'approval')} of ${p.approvers.map((a) => a.name).join(', ')}.\n` +
        `Proposal written to ${args.out}, not in force: each approver signs it (\`payout-batch approve ${shellWord(args.out)} --as NAME --key-file KEY\`), ` +
        `then \`payout-batch policy apply ${shellWord(args.out)}${team ? ' --ledger ...' : ''}\`.\n`,
    );
    return ExitCode.OK;
  } catch (e) {
    if (e instanceof ApprovalsFileError) throw new CommandError(e.message);
    if (e instanceof PolicyError) throw new CommandError(e.message, ExitCode.REFUSED);
    throw e;
  } finally {
    await team?.close();
  }
});

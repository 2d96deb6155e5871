// `payout-batch approve PLAN --as NAME --key-file KEY`: shows what is signed, asks, then signs the
// plan's exact content (Ed25519) into PLAN.approvals.json. A policy proposal or a clearance alike.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { CommandError, defineCommand, flag, plural, saying, str, UsageError } from '../command.ts';
import { ExitCode } from '../exit-codes.ts';
import {
  KeyError,
  parsePrivateKey,
  addApproval,
  approvalsPathFor,
  ApprovalsFileError,
  readApprovals,
  readApprovers,
  type Approver,
} from '../../approvals/approvals-file.ts';
import { nameProblem, sameName } from '../../engine/guards.ts';
import { loadPlan, planPayload, PlanFileError, readBytes } from '../../approvals/payload.ts';
import { approveText } from '../../approvals/view.ts';
import { signAsMaker, signPlan } from '../../approvals/sign.ts';
import { LockBusy } from '../../files/lock.ts';
import { hostStore, PolicyError } from '../../approvals/account-policy.ts';
import { isProposal, loadProposal, proposalPayload, proposalText } from '../../approvals/policy-change.ts';
import { clearancePayload, clearanceText, isClearance, loadClearance } from '../../approvals/clearance.ts';
import { namesNoFile } from '../../mask.ts';
import { askYesNo, isInteractive } from '../options.ts';

const builder = (y: Argv) =>
  y
    .positional('plan', { type: 'string', demandOption: true, describe: 'The plan file (from `payout-batch plan FILE --out PLAN`)' })
    .option('as', { type: 'string', demandOption: true, describe: 'Your name, as the approvers list names you' })
    .option('key-file', { ...str('Your private approver key (PEM, from `approver-key new`)'), demandOption: true })
    .option('approvers', str('The approvers list naming you with your key (default $PAYOUT_BATCH_APPROVERS)'))
    .option('yes', { ...flag('Sign without the question (after reading the plan)'), alias: 'y' });

export function personName(text: string): string {
  const name = text.trim();
  if (!name) throw new UsageError('--as names the approver, as the approvers list does, e.g. --as "Alice Martin"');
  const bad = nameProblem(name);
  if (bad) throw new UsageError(`--as ${JSON.stringify(name)}: ${bad}`);
  return name;
}

/** A private approver key file: its PEM (never printed) and its key. */
function readKeyFile(path: string) {
  // (a name that is no file may be the key itself, pasted where its file's path goes: never quoted)
  const unread = (why: string) =>
    namesNoFile(why)
      ? `the key file names no file (${why}): give the path of your approver key's PEM file`
      : `cannot read the key file ${path}: ${why}`;
  const pem = readBytes(path, (why) => new CommandError(unread(why))).toString('utf8');
  return { pem, mine: saying(() => parsePrivateKey(pem, path), KeyError) };
}

/** `plan --as NAME --approver-key KEY`: checked before anything is planned, and what signs the plan once written. */
export function makerSigner(as: string | undefined, keyFile: string | undefined, cwd: string, approvers?: Approver[]) {
  if (as === undefined && keyFile === undefined) return undefined;
  if (as === undefined || keyFile === undefined)
    throw new UsageError('--as NAME and --approver-key KEY go together: the maker signs the plan with their approver key');
  const name = personName(as);
  const path = resolve(cwd, keyFile);
  const { pem, mine } = readKeyFile(path);
  if (approvers?.some((a) => sameName(a.name, name))) keyProblem(name, mine, approvers, "the account's approval policy");
  return { name, sign: (planPath: string, payload?: object) => signAsMaker(planPath, name, pem, path, payload) };
}

const LIST_FLAG = '--approvers FILE (or $PAYOUT_BATCH_APPROVERS); nothing was written';
const NO_LIST = `name the approvers list that gives your name its key: ${LIST_FLAG}`;

/** What `approve` signs (a plan, a policy proposal, a clearance), its text, and the list giving each name its key. */
async function whatIsSigned(arg: string, list: string | undefined, cwd: string) {
  const path = resolve(cwd, arg);
  const named = list ? { approvers: readApprovers(resolve(cwd, list)), where: list } : undefined;
  if (isProposal(path)) {
    const loaded = loadProposal(path);
    const { account, store } = loaded.proposal;
    const policy = store === 'host' ? (await hostStore(account).read()).policy : undefined;
    const listed = named ?? (policy && { approvers: policy.approvers, where: "the account's policy in force" });
    if (!listed) throw new UsageError(`name the approvers list of the policy in force: ${LIST_FLAG}`);
    return { payload: proposalPayload(loaded), text: proposalText(loaded.proposal, policy?.approvers), listed, preparedBy: undefined };
  }
  if (isClearance(path)) {
    const loaded = loadClearance(path);
    if (!named) throw new UsageError(NO_LIST);
    return { payload: clearancePayload(loaded), text: clearanceText(loaded.clearance), listed: named, preparedBy: loaded.clearance.madeBy };
  }
  const plan = loadPlan(path);
  const payload = planPayload(plan);
  if (!named) throw new UsageError(NO_LIST);
  return { payload, text: approveText(plan, payload, arg), listed: named, preparedBy: payload.preparedBy };
}

function keyProblem(name: string, mine: { publicKey: string; fingerprint: string }, approvers: Approver[], where: string): void {
  const listed = approvers.find((a) => sameName(a.name, name));
  if (!listed) throw new CommandError(`--as ${name}: ${where} names nobody so: nothing was written`);
  if (listed.publicKey !== mine.publicKey)
    throw new CommandError(
      `--as ${name}: the key file holds key ${mine.fingerprint}, and ${where} gives ${listed.name} key ${listed.fingerprint}: a name signs with its own key only; nothing was written`,
    );
}

export default defineCommand(builder, async (args, io) => {
  const name = personName(args.as);
  const planPath = resolve(io.cwd, args.plan);
  const keyPath = resolve(io.cwd, args['key-file']);
  try {
    const { pem, mine } = readKeyFile(keyPath);
    const { payload, text, listed, preparedBy } = await whatIsSigned(args.plan, args.approvers ?? io.env.PAYOUT_BATCH_APPROVERS, io.cwd);
    keyProblem(name, mine, listed.approvers, listed.where);
    io.stdout.write(`You sign, as ${name}:\n  ${text}\n`);
    if (!args.yes) {
      if (!isInteractive(io))
        throw new UsageError(
          'not a terminal, so nobody can confirm: read the above, then pass --yes (-y) to sign it; nothing was signed',
          ExitCode.REFUSED,
        );
      if (!(await askYesNo(io, `Sign this ${preparedBy === undefined ? 'change' : 'plan'} as ${name}? [y/N] `)))
        throw new CommandError('declined: nothing was signed', ExitCode.REFUSED);
    }
    const approval = signPlan(payload, name, pem, keyPath);
    // as ssh does: said, not refused
    if (process.platform !== 'win32' && (statSync(keyPath).mode & 0o077) !== 0)
      io.stderr.write(`payout-batch: warning: ${keyPath} is readable by others: \`chmod 600\` it\n`);
    const approvalsPath = approvalsPathFor(planPath);
    const { replaced } = await addApproval(approvalsPath, approval);
    const all = readApprovals(approvalsPath);
    io.stdout.write(
      `Approved ${args.plan} as ${name} (key ${approval.publicKeyFingerprint}) at ${approval.signedAt}. ` +
        `${replaced ? 'Your earlier approval was replaced. ' : ''}Written to ${approvalsPathFor(args.plan)} ` +
        `(${plural(all.length, 'approval')}: ${all.map((a) => a.name).join(', ')}).\n`,
    );
    if (preparedBy && sameName(name, preparedBy))
      io.stderr.write(
        `payout-batch: note: ${preparedBy} made this plan: this signature records it, and neither it nor your key counts as an approval for \`run --require-approvals\` (four eyes)\n`,
      );
    return ExitCode.OK;
  } catch (e) {
    if (e instanceof PlanFileError || e instanceof KeyError || e instanceof ApprovalsFileError || e instanceof PolicyError)
      throw new CommandError(e.message, ExitCode.UNUSABLE_INPUT);
    if (e instanceof LockBusy)
      throw new CommandError(`another approval of this plan is being written (${e.message}): try again`, ExitCode.REFUSED);
    throw e;
  }
});

// Changing or removing a policy takes the approvals it demands: a proposal, signed by its approvers,
// applied only while the policy is still the one it was made against.
import { readFileSync } from 'node:fs';
import * as z from 'zod';
import { attempt } from '../files/attempt.ts';
import { writeFileAtomic } from '../files/atomic.ts';
import { sha256Hex } from '../engine/identity.ts';
import {
  describePolicy,
  expiryOf,
  PolicyError,
  PolicyRulesSchema,
  type AccountPolicy,
  type PolicyRules,
  type PolicyStore,
} from './account-policy.ts';
import { countSigners } from './sign.ts';
import { parseJson, readBytes } from './payload.ts';
import { ApprovalsFileError, approvalsPathFor, fingerprintOf, parsePublicKey, readApprovals, type Approver } from './approvals-file.ts';
import { sameName } from '../engine/guards.ts';

const PROPOSAL_KIND = 'payout-batch-policy-change';

const ProposalSchema = z.object({
  kind: z.literal(PROPOSAL_KIND),
  v: z.literal(1),
  account: z.string(),
  store: z.enum(['host', 'team']),
  /** Applied only while this version is in force. */
  baseVersion: z.number().int().min(1),
  from: z.string(),
  /** null: remove it. */
  policy: PolicyRulesSchema.nullable(),
  proposedAt: z.string(),
  proposedBy: z.string(),
});
type PolicyProposal = z.infer<typeof ProposalSchema>;

type LoadedProposal = ReturnType<typeof loadProposal>;

export const isProposal = (path: string): boolean =>
  attempt(() => (JSON.parse(readFileSync(path, 'utf8')) as { kind?: unknown }).kind) === PROPOSAL_KIND;

export function loadProposal(path: string) {
  // (unusable input, exit 2: PolicyError is a refusal)
  const bytes = readBytes(path, (why) => new ApprovalsFileError(`cannot read the proposal ${path}: ${why}`));
  const proposal = parseJson(bytes, ProposalSchema);
  if (!proposal) throw new ApprovalsFileError(`${path} is not a policy proposal of \`payout-batch policy set|remove\``);
  return { path, bytes, proposal };
}

/** Bound to its exact bytes; its purpose keeps a plan's signature from meaning it. */
export const proposalPayload = (p: LoadedProposal) => ({
  purpose: 'payout-batch policy change' as const,
  proposalSha256: sha256Hex(p.bytes),
  ...p.proposal,
});

/** With each approver's key, and whether it is another than `inForce` gives that name: a name is its key. */
export function proposalText(p: PolicyProposal, inForce?: readonly Approver[]): string {
  const keyOf = (a: Approver) => fingerprintOf(parsePublicKey(a.publicKey).raw);
  const keys = (p.policy?.approvers ?? []).map((a) => {
    const was = inForce?.find((x) => sameName(x.name, a.name));
    return `${a.name} key ${keyOf(a)}${was && keyOf(was) !== keyOf(a) ? `, not ${keyOf(was)} as in force` : ''}`;
  });
  const to = p.policy ? `to ${describePolicy(p.policy)} (${keys.join('; ')})` : 'to none (remove it)';
  return (
    `change the approval policy of ${p.account}${p.store === 'team' ? ' (in the team ledger)' : ''}, ` +
    `version ${p.baseVersion}: ${p.from},\n  ${to}\n  proposed by ${p.proposedBy} at ${p.proposedAt}`
  );
}

export async function writeProposal(
  path: string,
  o: { current: AccountPolicy; store: 'host' | 'team'; next: PolicyRules | null; by: string },
): Promise<void> {
  const proposal: PolicyProposal = {
    kind: PROPOSAL_KIND,
    v: 1,
    account: o.current.account,
    store: o.store,
    baseVersion: o.current.version,
    from: describePolicy(o.current),
    policy: o.next,
    proposedAt: new Date().toISOString(),
    proposedBy: o.by,
  };
  await writeFileAtomic(path, JSON.stringify(proposal, null, 2) + '\n', { mode: 0o644 });
}

/** When enough of the policy in force's approvers signed it, each once under their listed key; else PolicyError. */
export async function applyProposal(store: PolicyStore, loaded: LoadedProposal) {
  const { proposal } = loaded;
  const current = (await store.read()).policy;
  if (!current || current.version !== proposal.baseVersion)
    throw new PolicyError(
      `${loaded.path} changes version ${proposal.baseVersion} of the policy, and ${current ? `version ${current.version}` : 'none'} is in force: propose again`,
    );
  const approvals = readApprovals(approvalsPathFor(loaded.path));
  const { counted, problems } = countSigners(proposalPayload(loaded), approvals, current.approvers, null, expiryOf(current));
  const tally = `${counted.length} of the ${current.requireApprovals} approvals the policy in force needs${counted.length ? ` (${counted.join(', ')})` : ''}`;
  if (counted.length < current.requireApprovals)
    throw new PolicyError(`${tally}${problems.length ? `: ${problems.join('; ')}` : ''}: the policy is unchanged`);
  const record = await store.write(proposal.policy && { ...proposal.policy, account: proposal.account }, counted, proposal.proposedBy);
  return { record, tally };
}

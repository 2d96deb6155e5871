// Changing or removing an account's policy takes the approvals it demands: `policy set|remove`
// against an account that has one writes a proposal; the current policy's approvers sign it
// (`approve PROPOSAL`, as they sign a plan); `policy apply PROPOSAL` makes it the policy only once
// enough of them have, and only if the policy is still the one the proposal was made against.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { writeFileAtomic } from '../files/atomic.ts';
import { sha256Hex } from '../engine/identity.ts';
import {
  describePolicy,
  PolicyError,
  PolicyRulesSchema,
  type AccountPolicy,
  type PolicyRules,
  type PolicyStore,
} from './account-policy.ts';
import { listedSigners } from './sign.ts';
import { readBytes } from './payload.ts';
import { approvalsPathFor, readApprovals } from './approvals-file.ts';

export const PROPOSAL_KIND = 'payout-batch-policy-change';

const ProposalSchema = z.object({
  kind: z.literal(PROPOSAL_KIND),
  v: z.literal(1),
  account: z.string(),
  /** The API key's fingerprint: with the account, which host policy is changed. */
  key: z.string(),
  /** `team`: the policy in the team ledger (policy apply --ledger). */
  store: z.enum(['host', 'team']),
  /** The version it changes, and what that version says: applied only while it is still in force. */
  baseVersion: z.number().int().min(1),
  from: z.string(),
  /** The policy proposed; null: remove it. */
  policy: PolicyRulesSchema.nullable(),
  proposedAt: z.string(),
  proposedBy: z.string(),
});
export type PolicyProposal = z.infer<typeof ProposalSchema>;

export interface LoadedProposal {
  path: string;
  bytes: Buffer;
  proposal: PolicyProposal;
}

/** Whether the file is a policy proposal (else `approve` takes it for a plan). */
export function isProposal(path: string): boolean {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { kind?: unknown }).kind === PROPOSAL_KIND;
  } catch {
    return false;
  }
}

export function loadProposal(path: string): LoadedProposal {
  const bytes = readBytes(path, (why) => new PolicyError(`cannot read the proposal ${path}: ${why}`));
  let r;
  try {
    r = ProposalSchema.safeParse(JSON.parse(bytes.toString('utf8')));
  } catch {
    r = undefined;
  }
  if (!r?.success) throw new PolicyError(`${path} is not a policy proposal of \`payout-batch policy set|remove\``);
  return { path, bytes, proposal: r.data };
}

/** What an approver signs: the proposal, bound to its exact bytes; its purpose keeps a plan's signature from meaning it. */
export const proposalPayload = (p: LoadedProposal) => ({
  purpose: 'payout-batch policy change' as const,
  proposalSha256: sha256Hex(p.bytes),
  ...p.proposal,
});

/** The change in words, as `approve` shows it before signing. */
export function proposalText(p: PolicyProposal): string {
  const to = p.policy ? `to ${describePolicy({ ...p.policy, account: p.account } as AccountPolicy)}` : 'to none (remove it)';
  return (
    `change the approval policy of ${p.account} (API key ${p.key}${p.store === 'team' ? ', in the team ledger' : ''}), ` +
    `version ${p.baseVersion}: ${p.from},\n  ${to}\n  proposed by ${p.proposedBy} at ${p.proposedAt}`
  );
}

/** Writes the proposal of changing `current` (in `store`) to `next` (null: removing it). */
export async function writeProposal(
  path: string,
  o: { current: AccountPolicy; key: string; store: 'host' | 'team'; next: PolicyRules | null; by: string },
): Promise<PolicyProposal> {
  const proposal: PolicyProposal = {
    kind: PROPOSAL_KIND,
    v: 1,
    account: o.current.account,
    key: o.key,
    store: o.store,
    baseVersion: o.current.version,
    from: describePolicy(o.current),
    policy: o.next,
    proposedAt: new Date().toISOString(),
    proposedBy: o.by,
  };
  await writeFileAtomic(path, JSON.stringify(proposal, null, 2) + '\n', { mode: 0o644 });
  return proposal;
}

/**
 * Makes the proposal the account's policy when the current policy's approvers signed it: each
 * counted once, under the name the policy lists with the key it lists, the signature over this
 * exact proposal. Refused (PolicyError) when too few did, or the policy changed since.
 */
export async function applyProposal(store: PolicyStore, loaded: LoadedProposal) {
  const { proposal } = loaded;
  const current = (await store.read()).policy;
  if (!current || current.version !== proposal.baseVersion)
    throw new PolicyError(
      `${loaded.path} changes version ${proposal.baseVersion} of the policy, and ${current ? `version ${current.version}` : 'none'} is in force: propose again`,
    );
  const { counted, problems } = listedSigners(proposalPayload(loaded), readApprovals(approvalsPathFor(loaded.path)), current.approvers);
  const tally = `${counted.length} of the ${current.requireApprovals} approvals the policy in force needs${counted.length ? ` (${counted.join(', ')})` : ''}`;
  if (counted.length < current.requireApprovals)
    throw new PolicyError(`${tally}${problems.length ? `: ${problems.join('; ')}` : ''}: the policy is unchanged`);
  const record = await store.write(proposal.policy && { ...proposal.policy, account: proposal.account }, counted, proposal.proposedBy);
  return { record, tally };
}

// The four-eyes rule: a plan may be run when `required` distinct listed approvers, none of them its
// maker (by name, or by a key the maker signed this plan with), signed its exact content. Pure: the
// plan, its approvals and the list are given.
import { nameProblem, sameName } from '../engine/guards.ts';
import { fingerprintOf, parsePublicKey } from './keys.ts';
import { planPayload, type LoadedPlan, type PlanPayload } from './payload.ts';
import { verifyApproval } from './sign.ts';
import type { Approval, Approver } from './approvals-file.ts';
import { plural } from '../text.ts';

export interface ApprovalCheck {
  ok: boolean;
  counted: string[];
  problems: string[];
  message: string;
}

export function rawKey(a: Approval): string | undefined {
  try {
    return parsePublicKey(a.publicKey).raw.toString('base64');
  } catch {
    return undefined;
  }
}

/** The keys the maker signed it with: such a key never counts as an approver's, whatever name it signs under. */
export function makerKeys(payload: object, approvals: Approval[], maker: string | null): Set<string> {
  const keys = new Set<string>();
  for (const a of approvals) {
    const raw = maker !== null && sameName(a.name, maker) ? rawKey(a) : undefined;
    if (raw && verifyApproval(payload, a).ok) keys.add(raw);
  }
  return keys;
}

/** Why one approval does not count. A stored fingerprint that is not its key's makes it invalid (the file was edited). */
export function approvalProblem(
  payload: PlanPayload,
  a: Approval,
  approvers: Approver[] | undefined,
  makers: Set<string> = new Set(),
): { reason: string; maker?: boolean } | undefined {
  if (payload.preparedBy !== null && sameName(a.name, payload.preparedBy))
    return { reason: 'maker of the plan cannot approve it', maker: true };
  const badName = nameProblem(a.name);
  if (badName) return { reason: badName };
  const raw = rawKey(a);
  if (!raw) return { reason: 'its public key is unusable' };
  const fingerprint = fingerprintOf(Buffer.from(raw, 'base64'));
  if (a.publicKeyFingerprint !== fingerprint)
    return {
      reason: `its stored fingerprint ${a.publicKeyFingerprint} is not that of its key (${fingerprint}): the approvals file was edited`,
    };
  if (makers.has(raw)) return { reason: `signed with key ${fingerprint}, which the plan's maker signed it with`, maker: true };
  if (approvers) {
    const listed = approvers.find((x) => sameName(x.name, a.name));
    if (!listed) return { reason: 'not in the approvers list' };
    if (raw !== listed.publicKey)
      return { reason: `signed with key ${fingerprint}, not the key listed for ${listed.name} (${listed.fingerprint})` };
  }
  const v = verifyApproval(payload, a);
  return v.ok ? undefined : { reason: v.reason };
}

function planProblem(payload: PlanPayload): string | undefined {
  if (payload.preparedBy === null)
    return 'the plan does not record who made it, so four eyes cannot be checked: make it again with `payout-batch plan FILE --out PLAN`';
  const bad = nameProblem(payload.preparedBy);
  return bad ? `the plan's maker ${JSON.stringify(payload.preparedBy)} cannot be told from an approver: ${bad}` : undefined;
}

export interface Expiry {
  afterMs: number;
  /** As the policy was written ("7d"). */
  label: string;
  now?: Date;
}

function expiryProblem(a: Approval, e: Expiry): string | undefined {
  const now = (e.now ?? new Date()).getTime();
  const at = Date.parse(a.signedAt);
  // (five minutes for the clocks of the approver's machine and this one)
  if (!(at <= now + 5 * 60_000)) return `dated ${a.signedAt}, after now`;
  if (at >= now - e.afterMs) return undefined;
  return `signed ${a.signedAt}: the account's policy counts approvals of the last ${e.label} only, sign again`;
}

export function checkApprovals(
  plan: LoadedPlan,
  approvals: Approval[],
  approvers: Approver[],
  required: number,
  expiry?: Expiry,
  /** An account policy's rule: the plan must carry its maker's signature (`plan --as NAME --approver-key KEY`). */
  makerSigned = false,
): ApprovalCheck {
  const payload = planPayload(plan);
  const counted: string[] = [];
  const countedKeys = new Set<string>();
  const problems: string[] = [];
  const makers = makerKeys(payload, approvals, payload.preparedBy);
  const unusable =
    planProblem(payload) ??
    (makerSigned && !makers.size
      ? `the plan is not signed by its maker, which this account's policy requires: make it again with \`payout-batch plan FILE --out PLAN --as NAME --approver-key KEY\``
      : undefined);
  if (unusable) problems.push(unusable);
  for (const a of approvals) {
    const expired = expiry && expiryProblem(a, expiry);
    const p = approvalProblem(payload, a, approvers, makers) ?? (expired ? { reason: expired } : undefined);
    if (p) {
      problems.push(p.maker ? `${a.name} (${p.reason})` : `${a.name}: ${p.reason}`);
      continue;
    }
    const listed = approvers.find((x) => sameName(x.name, a.name))!;
    if (counted.some((n) => sameName(n, listed.name)) || countedKeys.has(listed.publicKey)) {
      problems.push(`${a.name}: already counted once`);
      continue;
    }
    counted.push(listed.name);
    countedKeys.add(listed.publicKey);
  }
  const ok = !unusable && counted.length >= required;
  const n = plural(counted.length, 'valid approval');
  const by = counted.length ? ` (${counted.join(', ')})` : '';
  const why = problems.length ? problems.join('; ') : approvals.length ? '' : 'no approvals';
  const message = ok
    ? `${n} of ${required} required${by}${problems.length ? `; not counted: ${problems.join('; ')}` : ''}`
    : `${n} of ${required} required${by}${why ? `: ${why}` : ''}`;
  return { ok, counted, problems, message };
}

// The four-eyes rule: a plan may be run when `required` distinct listed approvers, none of them its
// maker, signed its exact content. Pure: the plan, its approvals and the list are given.
import { parsePublicKey } from './keys.ts';
import { planPayload, sameName, type LoadedPlan, type PlanPayload } from './payload.ts';
import { verifyApproval } from './sign.ts';
import type { Approval, Approver } from './store.ts';

export interface ApprovalCheck {
  ok: boolean;
  /** The listed names whose approvals count. */
  counted: string[];
  /** Why each other approval does not count (and why the plan cannot be approved at all, if so). */
  problems: string[];
  /** One line for the user: how many of how many, and every problem. */
  message: string;
}

/** Why one approval does not count, or undefined when it does (`payload` and `maker` of the plan). */
export function approvalProblem(
  payload: PlanPayload,
  a: Approval,
  approvers: Approver[] | undefined,
): { reason: string; maker?: boolean } | undefined {
  if (payload.preparedBy !== null && sameName(a.name, payload.preparedBy))
    return { reason: 'maker of the plan cannot approve it', maker: true };
  if (approvers) {
    const listed = approvers.find((x) => sameName(x.name, a.name));
    if (!listed) return { reason: 'not in the approvers list' };
    let raw: string;
    try {
      raw = parsePublicKey(a.publicKey).raw.toString('base64');
    } catch {
      return { reason: 'its public key is unusable' };
    }
    if (raw !== listed.publicKey)
      return { reason: `signed with key ${a.publicKeyFingerprint}, not the key listed for ${listed.name} (${listed.fingerprint})` };
  }
  const v = verifyApproval(payload, a);
  return v.ok ? undefined : { reason: v.reason };
}

export function checkApprovals(plan: LoadedPlan, approvals: Approval[], approvers: Approver[], required: number): ApprovalCheck {
  const payload = planPayload(plan);
  const counted: string[] = [];
  const countedKeys = new Set<string>();
  const problems: string[] = [];
  if (payload.preparedBy === null)
    problems.push(
      'the plan does not record who made it (made by an older version), so four eyes cannot be checked: make it again with `payout-batch plan FILE --out PLAN`',
    );
  for (const a of approvals) {
    const p = approvalProblem(payload, a, approvers);
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
  const ok = payload.preparedBy !== null && counted.length >= required;
  const n = `${counted.length} valid approval${counted.length === 1 ? '' : 's'}`;
  const by = counted.length ? ` (${counted.join(', ')})` : '';
  const why = problems.length ? problems.join('; ') : approvals.length ? '' : 'no approvals';
  const message = ok
    ? `${n} of ${required} required${by}${problems.length ? `; not counted: ${problems.join('; ')}` : ''}`
    : `${n} of ${required} required${by}${why ? `: ${why}` : ''}`;
  return { ok, counted, problems, message };
}

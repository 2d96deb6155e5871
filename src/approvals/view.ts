// Who approved a plan, when, with which key, and whether each approval holds: for the HTML report
// (and anything else that shows a plan). Reads the plan and `<plan>.approvals.json` beside it.
import { fingerprintOf, parsePublicKey } from './keys.ts';
import { loadPlan, planPayload } from './payload.ts';
import { approvalProblem, makerKeys } from './policy.ts';
import { approvalsPathFor, readApprovals, type Approver } from './store.ts';

export interface ApprovalsView {
  preparedBy?: string;
  approvals: { name: string; signedAt: string; publicKeyFingerprint: string; valid: boolean; reason?: string }[];
}

/**
 * `valid`: the signature is over the plan as it is now, by the key the approval carries (whose
 * fingerprint, shown, is computed from it: one stored that differs makes it invalid), and the
 * signer is not the plan's maker; given the approvers list, also that the name is listed with that
 * key (without it, whether the signer may approve is not known here: `run --require-approvals`
 * decides). Throws PlanFileError / ApprovalsFileError for a file that is not a plan or approvals.
 */
export function approvalsView(planPath: string, approvers?: Approver[]): ApprovalsView {
  const plan = loadPlan(planPath);
  const payload = planPayload(plan);
  const approvals = readApprovals(approvalsPathFor(planPath));
  const makers = makerKeys(payload, approvals);
  return {
    ...(plan.plan.preparedBy !== undefined ? { preparedBy: plan.plan.preparedBy } : {}),
    approvals: approvals.map((a) => {
      const p = approvalProblem(payload, a, approvers, makers);
      return {
        name: a.name,
        signedAt: a.signedAt,
        publicKeyFingerprint: computedFingerprint(a.publicKey),
        valid: !p,
        ...(p ? { reason: p.reason } : {}),
      };
    }),
  };
}

/** The fingerprint of the key an approval carries, computed; "(unusable key)" when it is none. */
function computedFingerprint(publicKey: string): string {
  try {
    return fingerprintOf(parsePublicKey(publicKey).raw);
  } catch {
    return '(unusable key)';
  }
}

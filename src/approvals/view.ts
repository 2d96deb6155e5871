// Who approved a plan, when, with which key, and whether each approval holds: for the HTML report
// (and anything else that shows a plan). Reads the plan and `<plan>.approvals.json` beside it.
import { loadPlan, planPayload } from './payload.ts';
import { approvalProblem } from './policy.ts';
import { approvalsPathFor, readApprovals, type Approver } from './store.ts';

export interface ApprovalsView {
  preparedBy?: string;
  approvals: { name: string; signedAt: string; publicKeyFingerprint: string; valid: boolean; reason?: string }[];
}

/**
 * `valid`: the signature is over the plan as it is now, by the key the approval carries, and the
 * signer is not the plan's maker; given the approvers list, also that the name is listed with that
 * key (without it, whether the signer may approve is not known here: `run --require-approvals`
 * decides). Throws PlanFileError / ApprovalsFileError for a file that is not a plan or approvals.
 */
export function approvalsView(planPath: string, approvers?: Approver[]): ApprovalsView {
  const plan = loadPlan(planPath);
  const payload = planPayload(plan);
  return {
    ...(plan.plan.preparedBy !== undefined ? { preparedBy: plan.plan.preparedBy } : {}),
    approvals: readApprovals(approvalsPathFor(planPath)).map((a) => {
      const p = approvalProblem(payload, a, approvers);
      return {
        name: a.name,
        signedAt: a.signedAt,
        publicKeyFingerprint: a.publicKeyFingerprint,
        valid: !p,
        ...(p ? { reason: p.reason } : {}),
      };
    }),
  };
}

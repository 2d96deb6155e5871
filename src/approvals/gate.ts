// The check `run --require-approvals` and the watch make before anything is sent; the engine runs
// the plan's bytes as checked, not the file again, which could have changed since.
import { loadPlan, PlanFileError, type LoadedPlan } from './payload.ts';
import { checkApprovals, type ApprovalCheck, type Expiry } from './approval-rule.ts';
import { approvalsPathFor, ApprovalsFileError, readApprovals, readApprovers, type Approver } from './approvals-file.ts';

interface GateInput {
  /** Or the plan as another gate already read it. */
  plan: string | LoadedPlan;
  required: number;
  /** A list's path, or an account policy's list. */
  approvers: string | Approver[];
  expiry?: Expiry;
  makerSigned?: boolean;
}

export type GateResult = ({ ok: true } | { ok: false }) & { check?: ApprovalCheck; plan?: LoadedPlan; message: string };

/** A file unreadable or malformed refuses too, never throws. */
export function approvalGate(g: GateInput): GateResult {
  let plan: LoadedPlan;
  try {
    plan = typeof g.plan === 'string' ? loadPlan(g.plan) : g.plan;
  } catch (e) {
    if (e instanceof PlanFileError) return { ok: false, message: e.message };
    throw e;
  }
  try {
    const approvers = typeof g.approvers === 'string' ? readApprovers(g.approvers) : g.approvers;
    const approvals = readApprovals(approvalsPathFor(plan.path));
    const check = checkApprovals(plan, approvals, approvers, g.required, g.expiry, g.makerSigned);
    return { ok: check.ok, check, plan, message: check.message };
  } catch (e) {
    if (e instanceof ApprovalsFileError) return { ok: false, plan, message: e.message };
    throw e;
  }
}

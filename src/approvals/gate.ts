// The gate `run --plan PLAN --require-approvals N` and the watch pass before anything is sent: the
// plan, its approvals and the approvers list read and checked once, and the plan's bytes as they
// were checked, for the engine to run (not the file again, which could have changed since).
import { loadPlan, PlanFileError, type LoadedPlan } from './payload.ts';
import { checkApprovals, type ApprovalCheck, type Expiry } from './approval-rule.ts';
import { approvalsPathFor, ApprovalsFileError, readApprovals, readApprovers, type Approver } from './approvals-file.ts';

export interface GateInput {
  /** The plan's path, or the plan as another gate already read it (checked on the same bytes). */
  plan: string | LoadedPlan;
  required: number;
  /** The approvers list's path, or the list itself (an account policy's). */
  approvers: string | Approver[];
  expiry?: Expiry;
  /** The plan must carry its maker's signature (an account policy's rule). */
  makerSigned?: boolean;
  /** Default `<plan>.approvals.json`. */
  approvalsPath?: string;
}

export type GateResult = ({ ok: true } | { ok: false }) & { check?: ApprovalCheck; plan?: LoadedPlan; message: string };

/** Never throws for a file that is unreadable or malformed: that refuses too, with the reason. */
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
    const approvals = readApprovals(g.approvalsPath ?? approvalsPathFor(plan.path));
    const check = checkApprovals(plan, approvals, approvers, g.required, g.expiry, g.makerSigned);
    return { ok: check.ok, check, plan, message: check.message };
  } catch (e) {
    if (e instanceof ApprovalsFileError) return { ok: false, plan, message: e.message };
    throw e;
  }
}

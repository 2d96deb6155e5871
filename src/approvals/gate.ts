// The gate `run --plan PLAN --require-approvals N` and the watch pass before anything is sent: the
// plan, its approvals and the approvers list read and checked once, and the plan's bytes as they
// were checked, for the engine to run (not the file again, which could have changed since).
import { loadPlan, PlanFileError, type LoadedPlan } from './payload.ts';
import { checkApprovals, type ApprovalCheck } from './policy.ts';
import { approvalsPathFor, ApprovalsFileError, readApprovals, readApprovers } from './store.ts';

export interface GateInput {
  planPath: string;
  required: number;
  approversPath: string;
  /** Default `<plan>.approvals.json`. */
  approvalsPath?: string;
}

export type GateResult = ({ ok: true } | { ok: false }) & { check?: ApprovalCheck; plan?: LoadedPlan; message: string };

/** Never throws for a file that is unreadable or malformed: that refuses too, with the reason. */
export function approvalGate(g: GateInput): GateResult {
  let plan: LoadedPlan;
  try {
    plan = loadPlan(g.planPath);
  } catch (e) {
    if (e instanceof PlanFileError) return { ok: false, message: e.message };
    throw e;
  }
  try {
    const approvers = readApprovers(g.approversPath);
    const approvals = readApprovals(g.approvalsPath ?? approvalsPathFor(g.planPath));
    const check = checkApprovals(plan, approvals, approvers, g.required);
    return { ok: check.ok, check, plan, message: check.message };
  } catch (e) {
    if (e instanceof ApprovalsFileError) return { ok: false, plan, message: e.message };
    throw e;
  }
}

// Four-eyes approvals of plan files (README.md).
export { fingerprintOf, KeyError, newKeyPair, parsePrivateKey, parsePublicKey } from './keys.ts';
export {
  canonicalJson,
  loadPlan,
  payloadText,
  planPayload,
  PlanFileError,
  sameName,
  signedBytes,
  type LoadedPlan,
  type PlanPayload,
} from './payload.ts';
export { signPlan, verifyApproval } from './sign.ts';
export { addApproval, approvalsPathFor, ApprovalsFileError, readApprovals, readApprovers, type Approval, type Approver } from './store.ts';
export { approvalProblem, checkApprovals, type ApprovalCheck } from './policy.ts';
export { approvalsView, type ApprovalsView } from './view.ts';
export { approvalGate, type GateInput, type GateResult } from './gate.ts';

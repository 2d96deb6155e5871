// Four-eyes approvals of plan files (README.md): what the report and the tests read of them.
export { newKeyPair, parsePublicKey } from './keys.ts';
export { loadPlan, planPayload, PlanFileError, type LoadedPlan } from './payload.ts';
export { signPlan, verifyApproval } from './sign.ts';
export {
  addApproval,
  addApprovers,
  approvalsPathFor,
  ApprovalsFileError,
  readApprovals,
  readApprovers,
  type Approval,
  type Approver,
} from './approvals-file.ts';
export { checkApprovals } from './approval-rule.ts';
export { approvalsView, approveText, type ApprovalsView } from './view.ts';

import { loadPlan, payloadText, planPayload, type LoadedPlan, type PlanPayload } from './payload.ts';
import { approvalProblem, makerKeys, rawKey } from './sign.ts';
import { approvalsPathFor, fingerprintOf, readApprovals, type Approver } from './approvals-file.ts';
import { plural } from '../text.ts';

export type ApprovalsView = ReturnType<typeof approvalsView>;

/** Without the approvers list, whether a signer may approve is not known here: `run --require-approvals` decides. */
export function approvalsView(planPath: string, approvers?: Approver[]) {
  const plan = loadPlan(planPath);
  const payload = planPayload(plan);
  const approvals = readApprovals(approvalsPathFor(planPath));
  const makers = makerKeys(payload, approvals, payload.preparedBy);
  return {
    ...(plan.plan.preparedBy !== undefined ? { preparedBy: plan.plan.preparedBy } : {}),
    approvals: approvals.map((a) => {
      const p = approvalProblem(payload, a, approvers, payload.preparedBy, makers);
      const raw = rawKey(a);
      return {
        name: a.name,
        signedAt: a.signedAt,
        publicKeyFingerprint: raw ? fingerprintOf(Buffer.from(raw, 'base64')) : '(unusable key)',
        valid: !p,
        ...(p ? { reason: p.reason } : {}),
      };
    }),
  };
}

const PAYEES_SHOWN = 15;

/** What `approve` shows before it signs: the payload's text, then what is paid already and not again. */
export function approveText(plan: LoadedPlan, payload: PlanPayload, planArg: string): string {
  const lines = [payloadText(payload, PAYEES_SHOWN)];
  if (payload.rows.length > PAYEES_SHOWN) lines.push(`every payee: \`payout-batch report ${planArg}\``);
  const created = plan.plan.alreadyCreated ?? 0;
  const elsewhere = (plan.plan.notSent ?? []).filter((n) => n.code === 'ALREADY_PAID' || n.code === 'SENT_BY_ANOTHER_BATCH');
  if (!created && !elsewhere.length) lines.push('already paid: nothing (no row of this batch was paid before)');
  if (created) lines.push(`already paid: ${plural(created, 'row')} of this batch, created by an earlier run: not paid again`);
  for (const n of elsewhere.slice(0, 5)) lines.push(`already paid: row ${n.rowNumber}: ${n.message}`);
  if (elsewhere.length > 5) lines.push(`already paid: and ${elsewhere.length - 5} more rows left out for the same reason`);
  return lines.join('\n  ');
}

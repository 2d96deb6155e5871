// Signing a plan, and checking one signature (Ed25519, node:crypto).
import { sign, verify } from 'node:crypto';
import { parsePrivateKey, parsePublicKey, type KeyError } from './keys.ts';
import { loadPlan, planPayload, signedBytes } from './payload.ts';
import { addApproval, approvalsPathFor, type Approval, type Approver } from './approvals-file.ts';
import { sameName } from '../engine/guards.ts';

/** An approval of the plan by `name` with the private key in PEM `pem` (read from `where`, named in errors only). */
export function signPlan(payload: object, name: string, pem: string, where: string, now = new Date()): Approval {
  const k = parsePrivateKey(pem, where);
  const signedAt = now.toISOString();
  const signature = sign(null, signedBytes(payload, { name, signedAt }), k.key).toString('base64');
  return { name, publicKey: k.publicKey, publicKeyFingerprint: k.fingerprint, signedAt, signature };
}

/** Whether the approval's signature, by the public key it carries, is over this plan's payload. */
export function verifyApproval(payload: object, a: Approval): { ok: true } | { ok: false; reason: string } {
  let key;
  try {
    key = parsePublicKey(a.publicKey).key;
  } catch (e) {
    return { ok: false, reason: `its public key is unusable (${(e as KeyError).message})` };
  }
  const sig = Buffer.from(a.signature, 'base64');
  let good = false;
  try {
    good = sig.length === 64 && verify(null, signedBytes(payload, a), key, sig);
  } catch {
    good = false;
  }
  return good ? { ok: true } : { ok: false, reason: 'signature does not match this plan' };
}

/**
 * The listed approvers whose approval is their signature of `payload` by the key the list gives
 * them, each counted once (never `maker`), and why each other approval does not count.
 */
export function listedSigners(payload: object, approvals: Approval[], approvers: readonly Approver[], maker?: string) {
  const counted: string[] = [];
  const problems: string[] = [];
  for (const a of approvals) {
    const listed = approvers.find((x) => sameName(x.name, a.name));
    const v = verifyApproval(payload, a);
    const why = !listed
      ? 'not an approver of the policy in force'
      : maker !== undefined && sameName(listed.name, maker)
        ? 'its maker'
        : listed.publicKey !== a.publicKey
          ? `not signed with the key the policy gives ${listed.name}`
          : !v.ok
            ? v.reason
            : counted.includes(listed.name)
              ? 'already counted once'
              : undefined;
    if (why) problems.push(`${a.name}: ${why}`);
    else counted.push(listed!.name);
  }
  return { counted, problems };
}

/**
 * `plan --as NAME --approver-key KEY` (or `screen --clear`): the maker's signature of the plan (or
 * clearance, its payload given) just written, kept beside
 * it as an approval under the maker's name. It never counts as one (policy.ts makerKeys): it ties
 * the plan to its maker's key, which then counts for nobody on this plan.
 */
export async function signAsMaker(
  planPath: string,
  name: string,
  pem: string,
  where: string,
  payload: object = planPayload(loadPlan(planPath)),
): Promise<Approval> {
  const approval = signPlan(payload, name, pem, where);
  await addApproval(approvalsPathFor(planPath), approval);
  return approval;
}

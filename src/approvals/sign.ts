// Signing a plan, and checking one signature (Ed25519, node:crypto).
import { sign, verify } from 'node:crypto';
import { parsePrivateKey, parsePublicKey, type KeyError } from './keys.ts';
import { loadPlan, planPayload, signedBytes } from './payload.ts';
import { addApproval, approvalsPathFor, type Approval, type Approver } from './approvals-file.ts';
import { sameName } from '../engine/guards.ts';

/** `where`: the key file, named in errors only. */
export function signPlan(payload: object, name: string, pem: string, where: string, now = new Date()): Approval {
  const k = parsePrivateKey(pem, where);
  const signedAt = now.toISOString();
  const signature = sign(null, signedBytes(payload, { name, signedAt }), k.key).toString('base64');
  return { name, publicKey: k.publicKey, publicKeyFingerprint: k.fingerprint, signedAt, signature };
}

/** By the public key the approval carries. */
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

/** Each listed approver who signed `payload` by their listed key, once (never `maker`), and why the others do not count. */
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

/** `plan --as NAME --approver-key KEY`: never counted, it ties the plan to its maker's key, which then counts for nobody. */
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

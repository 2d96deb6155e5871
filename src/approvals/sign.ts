// Signing (Ed25519, node:crypto) and the four-eyes rule (README.md beside this file). approvalGate hands on the plan it checked:
// the engine runs those bytes, not the file again, which could have changed since.
import { sign, verify } from 'node:crypto';
import { attempt } from '../files/attempt.ts';
import { nameProblem, sameName } from '../engine/guards.ts';
import { durationText, plural, zonedTime } from '../text.ts';
import { loadPlan, planPayload, PlanFileError, signedBytes, type LoadedPlan, type PlanPayload } from './payload.ts';
import {
  addApproval,
  approvalsPathFor,
  ApprovalsFileError,
  fingerprintOf,
  parsePrivateKey,
  parsePublicKey,
  readApprovals,
  readApprovers,
  type Approval,
  type Approver,
} from './approvals-file.ts';

/** `where`: the key file, named in errors only. */
export function signPlan(payload: object, name: string, pem: string, where: string): Approval {
  const k = parsePrivateKey(pem, where);
  const signedAt = new Date().toISOString();
  const signature = sign(null, signedBytes(payload, { name, signedAt }), k.key).toString('base64');
  return { name, publicKey: k.publicKey, publicKeyFingerprint: k.fingerprint, signedAt, signature };
}

/** By the public key the approval carries (its callers name an unusable key first: approvalProblem, makerKeys). */
export function verifyApproval(payload: object, a: Approval): { ok: true } | { ok: false; reason: string } {
  const key = attempt(() => parsePublicKey(a.publicKey).key);
  const sig = Buffer.from(a.signature, 'base64');
  // (a malformed signature, or key, matches nothing)
  if (key && sig.length === 64 && attempt(() => verify(null, signedBytes(payload, a), key, sig))) return { ok: true };
  return { ok: false, reason: 'signature does not match this plan' };
}

/** `plan --as NAME --approver-key KEY`: never counted, it ties the plan to its maker's key, which then counts for nobody. */
export async function signAsMaker(
  planPath: string,
  name: string,
  pem: string,
  where: string,
  payload: object = planPayload(loadPlan(planPath)),
): Promise<void> {
  await addApproval(approvalsPathFor(planPath), signPlan(payload, name, pem, where));
}

export const rawKey = (a: Approval): string | undefined => attempt(() => parsePublicKey(a.publicKey).raw.toString('base64'));

/** The keys the maker signed it with: such a key never counts as an approver's, whatever name it signs under. */
export function makerKeys(payload: object, approvals: Approval[], maker: string | null): Set<string> {
  const keys = new Set<string>();
  for (const a of approvals) {
    const raw = maker !== null && sameName(a.name, maker) ? rawKey(a) : undefined;
    if (raw && verifyApproval(payload, a).ok) keys.add(raw);
  }
  return keys;
}

/** Why one approval does not count. A stored fingerprint that is not its key's makes it invalid (the file was edited). */
export function approvalProblem(
  payload: object,
  a: Approval,
  approvers: readonly Approver[] | undefined,
  maker: string | null,
  makers: Set<string>,
): { reason: string; maker?: boolean } | undefined {
  if (maker !== null && sameName(a.name, maker)) return { reason: 'maker of the plan cannot approve it', maker: true };
  const badName = nameProblem(a.name);
  if (badName) return { reason: badName };
  const raw = rawKey(a);
  if (!raw) return { reason: 'its public key is unusable' };
  const fingerprint = fingerprintOf(Buffer.from(raw, 'base64'));
  if (a.publicKeyFingerprint !== fingerprint)
    return {
      reason: `its stored fingerprint ${a.publicKeyFingerprint} is not that of its key (${fingerprint}): the approvals file was edited`,
    };
  if (makers.has(raw)) return { reason: `signed with key ${fingerprint}, which the plan's maker signed it with`, maker: true };
  if (approvers) {
    const listed = approvers.find((x) => sameName(x.name, a.name));
    if (!listed) return { reason: 'not in the approvers list' };
    if (raw !== listed.publicKey)
      return { reason: `signed with key ${fingerprint}, not the key listed for ${listed.name} (${listed.fingerprint})` };
  }
  const v = verifyApproval(payload, a);
  return v.ok ? undefined : { reason: v.reason };
}

/**
 * Each listed approver who signed `payload` (a plan, a policy change, a clearance) under their listed
 * key, once by name and by key, never `maker` nor a key it signed with; why the others do not count.
 */
export function countSigners(
  payload: object,
  approvals: Approval[],
  approvers: readonly Approver[],
  maker: string | null,
  expiry?: Expiry,
) {
  const counted: string[] = [];
  const countedKeys = new Set<string>();
  const problems: string[] = [];
  const makers = makerKeys(payload, approvals, maker);
  for (const a of approvals) {
    const expired = expiry && expiryProblem(a, expiry);
    const p = approvalProblem(payload, a, approvers, maker, makers) ?? (expired ? { reason: expired } : undefined);
    if (p) {
      problems.push(p.maker ? `${a.name} (${p.reason})` : `${a.name}: ${p.reason}`);
      continue;
    }
    const listed = approvers.find((x) => sameName(x.name, a.name))!;
    if (counted.some((n) => sameName(n, listed.name)) || countedKeys.has(listed.publicKey)) {
      problems.push(`${a.name}: already counted once`);
      continue;
    }
    counted.push(listed.name);
    countedKeys.add(listed.publicKey);
  }
  return { counted, problems, makers };
}

function planProblem(payload: PlanPayload): string | undefined {
  if (payload.preparedBy === null)
    return 'the plan does not record who made it, so four eyes cannot be checked: make it again with `payout-batch plan FILE --out PLAN`';
  const bad = nameProblem(payload.preparedBy);
  return bad ? `the plan's maker ${JSON.stringify(payload.preparedBy)} cannot be told from an approver: ${bad}` : undefined;
}

export interface Expiry {
  afterMs: number;
  now?: Date;
}

function expiryProblem(a: Approval, e: Expiry): string | undefined {
  const now = (e.now ?? new Date()).getTime();
  const at = zonedTime(a.signedAt);
  if (at === undefined)
    return `signedAt ${JSON.stringify(a.signedAt)} is not a date (an ISO 8601 time such as 2026-12-01T10:00:00Z): sign again`;
  // (five minutes for the clocks of the approver's machine and this one)
  if (!(at <= now + 5 * 60_000)) return `dated ${a.signedAt}, after now`;
  if (at >= now - e.afterMs) return undefined;
  return `signed ${a.signedAt}: the account's policy counts approvals of the last ${durationText(e.afterMs)} only, sign again`;
}

export function checkApprovals(
  plan: LoadedPlan,
  approvals: Approval[],
  approvers: Approver[],
  required: number,
  expiry?: Expiry,
  /** An account policy's rule: the plan must carry its maker's signature (`plan --as NAME --approver-key KEY`). */
  makerSigned = false,
) {
  const payload = planPayload(plan);
  const { counted, problems, makers } = countSigners(payload, approvals, approvers, payload.preparedBy, expiry);
  const unusable =
    planProblem(payload) ??
    (makerSigned && !makers.size
      ? `the plan is not signed by its maker, which this account's policy requires: make it again with \`payout-batch plan FILE --out PLAN --as NAME --approver-key KEY\``
      : undefined);
  if (unusable) problems.unshift(unusable);
  const ok = !unusable && counted.length >= required;
  const by = counted.length ? ` (${counted.join(', ')})` : '';
  const why = problems.length ? problems.join('; ') : approvals.length ? '' : 'no approvals';
  const message = `${plural(counted.length, 'valid approval')} of ${required} required${by}${why ? `${ok ? '; not counted' : ''}: ${why}` : ''}`;
  return { ok, counted, problems, message };
}

interface GateInput {
  /** Or the plan as another gate already read it. */
  plan: string | LoadedPlan;
  required: number;
  /** A list's path, or an account policy's list. */
  approvers: string | Approver[];
  expiry?: Expiry;
  makerSigned?: boolean;
}

export type GateResult = ({ ok: true } | { ok: false }) & { check?: ReturnType<typeof checkApprovals>; plan?: LoadedPlan; message: string };

/** A file unreadable or malformed refuses too, never throws. */
export function approvalGate(g: GateInput): GateResult {
  try {
    const plan = typeof g.plan === 'string' ? loadPlan(g.plan) : g.plan;
    const approvers = typeof g.approvers === 'string' ? readApprovers(g.approvers) : g.approvers;
    const check = checkApprovals(plan, readApprovals(approvalsPathFor(plan.path)), approvers, g.required, g.expiry, g.makerSigned);
    return { ok: check.ok, check, plan, message: check.message };
  } catch (e) {
    if (e instanceof PlanFileError || e instanceof ApprovalsFileError) return { ok: false, message: e.message };
    throw e;
  }
}

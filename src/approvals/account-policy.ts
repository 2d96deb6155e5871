// An account's approval policy: written once with `payout-batch policy set`, into the account's
// ledger (src/ledger: a file ledger's 0700 folder of that service account, refused when another
// user could write it, or the team ledger), so that every `run`, `retry` and `watch` against the
// account needs the approvals it names, and no flag of theirs turns it off. A change is logged, with
// who made it and what it was before.
import { hostname, userInfo } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { Dec, formatAmount, groupThousands } from '../money.ts';
import { POLICY_FILE_NAME } from '../ledger/file.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { CurrencyPlan } from '../engine/plan.ts';
import { approvalGate, type GateResult } from './gate.ts';
import type { LoadedPlan } from './payload.ts';

const ApproverSchema = z.object({ name: z.string().min(1), publicKey: z.string().min(1), fingerprint: z.string() });

export const AccountPolicySchema = z.object({
  v: z.literal(1),
  account: z.string(),
  requireApprovals: z.number().int().min(1).max(100),
  approvers: z.array(ApproverSchema).min(1),
  /** CUR -> amount: a batch needs the approvals only when it sends more than this in that currency. */
  above: z.record(z.string().regex(/^[A-Z]{3}$/), z.string().regex(/^\d+(\.\d+)?$/)).optional(),
  /** An approval signed longer ago than this no longer counts. */
  expireAfterMs: z.number().int().positive().optional(),
  setAt: z.string(),
  setBy: z.string(),
});
export type AccountPolicy = z.infer<typeof AccountPolicySchema>;

/** Refused: a policy file that cannot be trusted or read (exit 3: nothing is sent against the account). */
export class PolicyError extends Error {
  override readonly name = 'PolicyError';
}

export const policyPath = (ledgerDir: string): string => join(ledgerDir, POLICY_FILE_NAME);

/**
 * The account's policy, or undefined when it has none (and in the embedded sandbox's ledger, gone
 * with the process). Refuses one another user could have written (a file ledger's policy file that
 * is a link, another owner's, or writable by group or others): that would let them loosen it.
 */
export async function readAccountPolicy(ledger: Ledger): Promise<AccountPolicy | undefined> {
  const p = ledger.ephemeral ? undefined : await ledger.policy();
  if (p && 'unsafe' in p) throw new PolicyError(`the approval policy ${p.where} ${p.unsafe}`);
  return p && parsePolicy(p.text, p.where);
}

function parsePolicy(text: string, where: string): AccountPolicy {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new PolicyError(`the approval policy ${where} cannot be read (${(e as Error).message}): nothing is sent until it is set again`);
  }
  const r = AccountPolicySchema.safeParse(data);
  if (!r.success) throw new PolicyError(`the approval policy ${where} is not a policy (${r.error.issues[0]!.message}): set it again`);
  return r.data;
}

/** Sets the account's policy, the change logged with what it was before (a team ledger keeps every version). */
export async function writeAccountPolicy(ledger: Ledger, policy: Omit<AccountPolicy, 'v' | 'setAt' | 'setBy'>): Promise<AccountPolicy> {
  const previous = await readAccountPolicy(ledger);
  const next: AccountPolicy = { v: 1, ...policy, setAt: new Date().toISOString(), setBy: `${userInfo().username}@${hostname()}` };
  const log = { at: next.setAt, by: next.setBy, policy: describePolicy(next), previous: previous ? describePolicy(previous) : null };
  await ledger.setPolicy(JSON.stringify(next, null, 2) + '\n', log);
  return next;
}

/** "7d", "12h", "90m" in milliseconds. */
export function parseDuration(text: string): number {
  const m = /^\s*(\d+)\s*([dhm])\s*$/.exec(text);
  if (!m || Number(m[1]) === 0) throw new RangeError(`${text}: write a duration such as 7d, 12h or 90m`);
  return Number(m[1]) * { d: 86_400_000, h: 3_600_000, m: 60_000 }[m[2] as 'd' | 'h' | 'm'];
}

export const durationText = (ms: number): string =>
  ms % 86_400_000 === 0 ? `${ms / 86_400_000}d` : ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : `${ms / 60_000}m`;

/** The policy in one line, for `policy show`, the log and refusals. */
export function describePolicy(p: AccountPolicy): string {
  const above = p.above
    ? ` for a batch sending more than ${Object.entries(p.above)
        .map(([c, a]) => `${c} ${groupThousands(formatAmount(new Dec(a), c))}`)
        .join(' or ')} (any other currency: always)`
    : '';
  const expire = p.expireAfterMs ? `; approvals expire after ${durationText(p.expireAfterMs)}` : '';
  return `${p.requireApprovals} approval${p.requireApprovals === 1 ? '' : 's'} of ${p.approvers.map((a) => a.name).join(', ')}${above}${expire}`;
}

/** What a run sends, per source currency (the plan's totals). */
type Sends = { currencies: readonly Pick<CurrencyPlan, 'currency' | 'rows' | 'amount'>[] };

/**
 * Whether a run that sends these totals needs the policy's approvals: when it sends anything, with
 * `above` only when it sends more than the threshold in some currency, or anything in a currency
 * the policy names no threshold for.
 */
export function needsApprovals(p: AccountPolicy, plan: Sends): boolean {
  const over = (currency: string, amount: string) => {
    const limit = p.above?.[currency];
    return limit === undefined || new Dec(amount).gt(new Dec(limit));
  };
  return plan.currencies.some((c) => c.rows > 0 && (!p.above || over(c.currency, c.amount)));
}

/** The policy's check of a plan: its approvers, its number, its expiry. */
export function policyGate(p: AccountPolicy, plan: string | LoadedPlan): GateResult {
  const expiry = p.expireAfterMs ? { afterMs: p.expireAfterMs, label: durationText(p.expireAfterMs) } : undefined;
  return approvalGate({ plan, required: p.requireApprovals, approvers: p.approvers, expiry });
}

/**
 * The engine's guard for the policy (engine/approval.ts GuardOptions.policy): why this run may not
 * send, or undefined. `approved`: the policy's check of the plan being run (undefined: no plan).
 */
export function policyGuard(p: AccountPolicy, approved?: Pick<GateResult, 'ok' | 'message'>) {
  return (plan: Sends): string | undefined => (needsApprovals(p, plan) ? policyRefusal(p, approved) : undefined);
}

/** Why a run needing the policy's approvals is refused with this check of its plan (none: no plan); undefined when approved. */
export function policyRefusal(p: AccountPolicy, approved?: Pick<GateResult, 'ok' | 'message'>): string | undefined {
  if (approved?.ok) return undefined;
  const rule = `this account's approval policy needs ${describePolicy(p)}`;
  if (approved) return `${rule}: ${approved.message}`;
  return `${rule}: make a plan (payout-batch plan FILE --out PLAN), have it approved (payout-batch approve PLAN), then run it (payout-batch run --plan PLAN)`;
}

// What an approver signs: a canonical serialisation of the plan (sorted keys, no whitespace) that
// names what is paid (each row's reference, currency and amount; totals per currency), where
// (environment and the service's base URL), from which batch file (its sha256), who made the plan
// and when, and the sha256 of the plan file's exact bytes, so that any change to the plan, even
// one outside these fields, makes every signature over it invalid.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { formatAmount, Dec, groupThousands } from '../money.ts';
import { PlanFileSchema, type PlanFile } from '../engine/plan-file.ts';

/** A plan file as read for approvals: its bytes (what is hashed) and what they say. */
export interface LoadedPlan {
  path: string;
  bytes: Buffer;
  plan: PlanFile;
}

export class PlanFileError extends Error {
  override readonly name = 'PlanFileError';
}

/** Reads a plan file written by `plan --out`; anything else is refused with the reason. */
export function loadPlan(path: string): LoadedPlan {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new PlanFileError(`cannot read the plan ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new PlanFileError(`${path} is not a plan file (not JSON): make one with \`payout-batch plan FILE --out PLAN\``);
  }
  const r = PlanFileSchema.safeParse(data);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new PlanFileError(
      `${path} is not a plan file of payout-batch (${i?.path.join('.') || 'top level'}: ${i?.message}): make one with \`payout-batch plan FILE --out PLAN\``,
    );
  }
  return { path, bytes, plan: r.data };
}

export const sha256Hex = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

/** JSON with keys sorted at every level and no whitespace: one text for one value. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJson(x === undefined ? null : x)).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(',')}}`;
}

export const PAYLOAD_PURPOSE = 'payout-batch plan approval';

/** What the plan says, as an approver reads and signs it. */
export interface PlanPayload {
  purpose: typeof PAYLOAD_PURPOSE;
  v: 1;
  kind: string;
  planSha256: string;
  fileSha256: string;
  rows: { rowNumber: number; reference: string; currency: string; amount: string }[];
  /** Per source currency, the exact sum of the rows' amounts with the currency's minor units. */
  totals: Record<string, string>;
  environment: string;
  baseUrl: string;
  /** null for a plan made before plans recorded their maker. */
  preparedBy: string | null;
  createdAt: string;
}

export function planPayload(p: LoadedPlan): PlanPayload {
  const sums = new Map<string, Dec>();
  for (const r of p.plan.rows) sums.set(r.sourceCurrency, (sums.get(r.sourceCurrency) ?? new Dec(0)).plus(new Dec(r.sourceAmount)));
  return {
    purpose: PAYLOAD_PURPOSE,
    v: 1,
    kind: p.plan.kind,
    planSha256: sha256Hex(p.bytes),
    fileSha256: p.plan.fileSha256,
    rows: p.plan.rows.map((r) => ({ rowNumber: r.rowNumber, reference: r.reference, currency: r.sourceCurrency, amount: r.sourceAmount })),
    totals: Object.fromEntries([...sums].sort(([a], [b]) => (a < b ? -1 : 1)).map(([c, d]) => [c, formatAmount(d, c)])),
    environment: p.plan.env,
    baseUrl: p.plan.baseUrl,
    preparedBy: p.plan.preparedBy ?? null,
    createdAt: p.plan.createdAt,
  };
}

/** The bytes signed: the plan's payload with who signs it and when (so neither can be changed in the file afterwards). */
export function signedBytes(payload: PlanPayload, approver: { name: string; signedAt: string }): Buffer {
  return Buffer.from(canonicalJson({ ...payload, approver: approver.name, signedAt: approver.signedAt }), 'utf8');
}

/** Names compare trimmed and case-insensitively: "Alice" and "alice " are one person. */
export const sameName = (a: string, b: string): boolean => a.trim().toLowerCase() === b.trim().toLowerCase();

/** What is signed, in one line a person can check before signing: rows, totals, where, who made it and when. */
export function payloadText(p: PlanPayload): string {
  const n = p.rows.length;
  const totals = Object.entries(p.totals).map(([c, a]) => `${c} ${groupThousands(a)}`);
  return (
    `${n} payout${n === 1 ? '' : 's'}${totals.length ? ` (${totals.join(', ')})` : ''} in ${p.environment} (${p.baseUrl}), ` +
    `batch file sha256 ${p.fileSha256.slice(0, 16)}…, prepared by ${p.preparedBy ?? '(not recorded)'} at ${p.createdAt}`
  );
}

// What an approver signs (README.md): the plan in canonical JSON, each row's initiate body (spec §4.2) by its digest, and
// the sha256 of the plan file's bytes, so that any change to the plan makes every signature invalid.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { z } from 'zod';
import { attempt } from '../files/attempt.ts';
import { sha256Hex } from '../engine/identity.ts';
import { formatAmount, Dec, groupThousands } from '../money.ts';
import { bodyDigest, parsePlanFile, onBehalfOf, payeeOf } from '../engine/plan-file.ts';
import { canonicalJson, plural } from '../text.ts';
import { swapText } from '../engine/swap.ts';

export class PlanFileError extends Error {
  override readonly name = 'PlanFileError';
}

export function readBytes(path: string, fail: (why: string) => Error): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw fail((e as NodeJS.ErrnoException).code ?? (e as Error).message);
  }
}

/** The JSON of `bytes` as `schema` reads it; undefined when it is not that. */
export const parseJson = <T>(bytes: Buffer, schema: z.ZodType<T>): T | undefined =>
  attempt(() => schema.safeParse(JSON.parse(bytes.toString('utf8'))))?.data;

export type LoadedPlan = ReturnType<typeof loadPlan>;

export function loadPlan(path: string) {
  const bytes = readBytes(path, (why) => new PlanFileError(`cannot read the plan ${path}: ${why}`));
  try {
    return { path, bytes, plan: parsePlanFile(bytes.toString('utf8'), path) };
  } catch (e) {
    throw new PlanFileError((e as Error).message);
  }
}

export type PlanPayload = ReturnType<typeof planPayload>;

export function planPayload(p: LoadedPlan) {
  const rows = p.plan.rows.map((r) => ({ ...payeeOf(r), bodySha256: bodyDigest(r.body), documents: r.documents.map((d) => d.sha256) }));
  const sums = new Map<string, Dec>();
  for (const r of rows) sums.set(r.currency, (sums.get(r.currency) ?? new Dec(0)).plus(new Dec(r.amount)));
  return {
    purpose: 'payout-batch plan approval' as const,
    v: 2 as const,
    kind: p.plan.kind,
    planSha256: sha256Hex(p.bytes),
    file: p.plan.file,
    fileSha256: p.plan.fileSha256,
    sheet: p.plan.sheet ?? null, // (null: a CSV file)
    ...(p.plan.message ? { message: p.plan.message } : {}),
    rows,
    totals: Object.fromEntries([...sums].sort(([a], [b]) => (a < b ? -1 : 1)).map(([c, d]) => [c, formatAmount(d, c)])),
    environment: p.plan.env,
    baseUrl: p.plan.baseUrl,
    account: p.plan.account,
    batchLabel: p.plan.batchLabel ?? null, // a deliberate re-send: the --batch-id the plan was made under
    preparedBy: p.plan.preparedBy ?? null,
    createdAt: p.plan.createdAt,
    // absent for a plan without swaps (or screening), so that approvals of such plans read as they were signed
    ...(p.plan.swaps?.length ? { swaps: p.plan.swaps } : {}),
    ...(p.plan.screening ? { screening: p.plan.screening } : {}),
  };
}

/** With who signs it and when, so that neither can be changed in the file afterwards. */
export function signedBytes(payload: object, approver: { name: string; signedAt: string }): Buffer {
  return Buffer.from(canonicalJson({ ...payload, approver: approver.name, signedAt: approver.signedAt }), 'utf8');
}

/** What is signed, as a person checks it before signing, with the first `shown` payees. */
export function payloadText(p: PlanPayload, shown = p.rows.length): string {
  const n = p.rows.length;
  const totals = Object.entries(p.totals).map(([c, a]) => `${c} ${groupThousands(a)}`);
  const lines = [
    `${plural(n, 'payout')}${totals.length ? ` (${totals.join(', ')})` : ''} in ${p.environment} (${p.baseUrl}), account ${p.account}`,
    `batch file ${basename(p.file)}${p.sheet !== null ? `, sheet "${p.sheet}"` : ''} (sha256 ${p.fileSha256.slice(0, 16)}…), ` +
      `prepared by ${p.preparedBy ?? '(not recorded)'} at ${p.createdAt}`,
  ];
  if (p.message) lines.push(`ISO 20022 ${p.message.version}, message ${p.message.id}`);
  if (p.batchLabel !== null) lines.push(`sent again on purpose under --batch-id ${p.batchLabel}`);
  for (const s of p.swaps ?? []) lines.push(`swap first, reference ${s.reference}: ${swapText(s)}`);
  const sc = p.screening;
  if (sc)
    lines.push(
      `screened against ${sc.lists.map((l) => `${basename(l.path)} (${l.entries} entries, of ${l.date}, sha256 ${l.digest.slice(0, 16)}…)`).join(', ')}: ` +
        `${sc.held.length} held and not paid (${sc.held.map((h) => h.reference).join(', ') || 'none'}), ${sc.cleared.length} paid under a clearance`,
    );
  for (const r of p.rows.slice(0, shown))
    lines.push(
      `${r.reference} | ${r.beneficiary}${r.ultimateCreditor ? ` for ${r.ultimateCreditor}` : ''} | ${r.account} | ${r.method} | ${r.currency} ${groupThousands(r.amount)}${onBehalfOf(r) && ` | ${onBehalfOf(r)}`}`,
    );
  if (n > shown) lines.push(`… and ${plural(n - shown, 'more payee')}`);
  return lines.join('\n  ');
}

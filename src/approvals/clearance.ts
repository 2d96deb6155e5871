// A sanctions hit cleared as a false positive, signed as a plan is (which count: README.md). It binds the reference, a
// digest of the payee's name and accounts, and one list entry.
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as z from 'zod';
import { writeFileAtomic } from '../files/atomic.ts';
import { sha256Hex } from '../engine/identity.ts';
import type { ScreeningOptions } from '../engine/screen-batch.ts';
import type { AccountPolicy } from './account-policy.ts';
import { countSigners } from './sign.ts';
import { ApprovalsFileError, approvalsPathFor, readApprovals, readApprovers, type Approver } from './approvals-file.ts';
import { parseJson, PlanFileError, readBytes } from './payload.ts';
import { BatchUnusable } from '../engine/engine-errors.ts';
import { unlessMissing } from '../files/attempt.ts';
import { zonedTime } from '../text.ts';

export const CLEARANCE_KIND = 'payout-batch-screening-clearance';
const SUFFIX = '.clearance.json';

const ClearanceSchema = z.object({
  kind: z.literal(CLEARANCE_KIND),
  v: z.literal(1),
  reference: z.string(),
  /** engine/screen-batch.ts payeeDigest */
  payee: z.string(),
  /** The name and masked account, for the person who signs. */
  payeeText: z.string(),
  list: z.string(),
  entryId: z.string(),
  entryName: z.string(),
  /** The entry as read (a Hit's entryDigest): another name, alias or identifier listed since voids it. */
  entryDigest: z.string(),
  reason: z.string().min(1),
  expiresAt: z.string(),
  madeAt: z.string(),
  madeBy: z.string(),
});
type ClearanceFile = z.infer<typeof ClearanceSchema>;

type LoadedClearance = ReturnType<typeof loadClearance>;

export const isClearance = (path: string): boolean =>
  path.endsWith(SUFFIX) && existsSync(path) && parseJson(readFileSync(path), ClearanceSchema) !== undefined;

export function loadClearance(path: string) {
  const bytes = readBytes(path, (why) => new PlanFileError(`cannot read the clearance ${path}: ${why}`));
  const clearance = parseJson(bytes, ClearanceSchema);
  if (!clearance) throw new PlanFileError(`${path} is not a clearance of \`payout-batch screen --clear\``);
  return { path, bytes, clearance };
}

/** Bound to its exact bytes; its purpose keeps a plan's signature from meaning it. */
export const clearancePayload = (c: LoadedClearance) => ({
  purpose: 'payout-batch screening clearance' as const,
  clearanceSha256: sha256Hex(c.bytes),
  ...c.clearance,
});

export const clearanceText = (c: ClearanceFile): string =>
  `clear ${c.reference} (${c.payeeText}) of the sanctions hit ${c.list}:${c.entryId} "${c.entryName}" until ${c.expiresAt}: ${c.reason}\n` +
  `  made by ${c.madeBy} at ${c.madeAt}; void if the payee's name or account, whom it is for or on behalf of, or the list entry, changes`;

export async function writeClearance(dir: string, c: ClearanceFile): Promise<string> {
  const path = join(dir, `${c.reference}-${c.list}-${c.entryId}`.replace(/[^\w.-]/g, '_') + SUFFIX);
  mkdirSync(dir, { recursive: true });
  await writeFileAtomic(path, JSON.stringify(c, null, 2) + '\n', { mode: 0o644 });
  return path;
}

/** Each clearance of `dir`, with its listed signers (each once, under their listed key, never its maker) and why it does not count (none: it counts). */
export function clearancesIn(
  dir: string,
  approvers: readonly Approver[],
  required: number,
  /** An account policy's rule: the clearance must carry its maker's signature. */
  makerSigned = false,
): { loaded: LoadedClearance; signedBy: string[]; problem?: string }[] {
  const unusable = (why: string) => new BatchUnusable('CLEARANCE', why);
  const names =
    unlessMissing(
      () => readdirSync(dir),
      (code) => unusable(`cannot read the clearances folder ${dir} (${code})`),
    ) ?? [];
  return names
    .filter((f) => f.endsWith(SUFFIX))
    .sort()
    .map((f) => {
      let loaded: LoadedClearance, approvals: ReturnType<typeof readApprovals>;
      try {
        loaded = loadClearance(join(dir, f));
        approvals = readApprovals(approvalsPathFor(loaded.path));
      } catch (e) {
        // (never taken as none: a clearance that cannot be read is moved out, or made again)
        throw e instanceof PlanFileError || e instanceof ApprovalsFileError ? unusable(`${e.message}: move it out of ${dir}`) : e;
      }
      const c = loaded.clearance;
      const payload = clearancePayload(loaded);
      // its maker's key counts for nobody, whatever name it signs under (as a plan's maker's)
      const { counted: signedBy, makers } = countSigners(payload, approvals, approvers, c.madeBy);
      const problem =
        makerSigned && !makers.size
          ? "not signed by its maker, which the account's policy requires: make it with `screen --clear ... --as NAME --approver-key KEY`"
          : signedBy.length < required
            ? `${signedBy.length} of ${required} approvals of listed approvers (not its maker)`
            : !((zonedTime(c.expiresAt) ?? NaN) > Date.now()) // (not a time with its zone: never in force)
              ? `expired ${c.expiresAt}`
              : undefined;
      return { loaded, signedBy, ...(problem ? { problem } : {}) };
    });
}

/**
 * The clearances of the folder `o.clearances` as the account's policy counts them (its approvers,
 * its number, its maker's signature), else by the list `o.approvers` (none: none count), one signature.
 */
export function clearancesCounted(
  base: string,
  o: { clearances: string; approvers?: string },
  policy?: Pick<AccountPolicy, 'approvers' | 'requireApprovals'>,
): ReturnType<typeof clearancesIn> {
  const approvers = policy?.approvers ?? (o.approvers ? readApprovers(resolve(base, o.approvers)) : []);
  return clearancesIn(resolve(base, o.clearances), approvers, policy?.requireApprovals ?? 1, !!policy);
}

/** Paths relative to `base`; the clearances in force as clearancesCounted counts them. */
export function screeningFor(
  base: string,
  o: { lists: readonly (string | number)[]; clearances: string; approvers?: string },
  policy?: Pick<AccountPolicy, 'screeningMaxAgeMs' | 'approvers' | 'requireApprovals'>,
): ScreeningOptions | undefined {
  const maxAgeMs = policy?.screeningMaxAgeMs;
  if (!o.lists.length && maxAgeMs === undefined) return undefined;
  return {
    lists: o.lists.map((l) => resolve(base, String(l))),
    maxAgeMs,
    clearances: clearancesCounted(base, o, policy)
      .filter((s) => !s.problem)
      .map(({ loaded: { path, clearance }, signedBy }) => {
        const { kind: _k, v: _v, payeeText: _p, madeAt: _a, madeBy: _b, ...bound } = clearance;
        return { id: path.slice(path.lastIndexOf('/') + 1, -SUFFIX.length), ...bound, signedBy };
      }),
  };
}

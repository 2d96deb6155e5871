// `<plan>.approvals.json` beside the plan (never rewritten: its bytes are what is signed), and the
// approvers list, kept by whoever decides who may release a batch.
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { writeFileAtomic } from '../files/atomic.ts';
import { withLock } from '../files/lock.ts';
import { nameProblem, sameName } from '../engine/guards.ts';
import { fingerprintOf, KeyError, parsePublicKey } from './keys.ts';
import { readBytes } from './payload.ts';

export const ApprovalSchema = z.object({
  name: z.string().min(1),
  /** 32 raw bytes in base64, or PEM. */
  publicKey: z.string().min(1),
  publicKeyFingerprint: z.string(),
  signedAt: z.string(),
  /** payload.ts signedBytes, base64 */
  signature: z.string(),
});
export type Approval = z.infer<typeof ApprovalSchema>;

export const approvalsPathFor = (planPath: string): string => `${planPath}.approvals.json`;

export class ApprovalsFileError extends Error {
  override readonly name = 'ApprovalsFileError';
}

const ADD_APPROVERS = 'build it with `payout-batch approvers add *.approver.pub.json --out FILE`';

/** With `lines`, also one JSON value per line (what `cat *.approver.pub.json` gives). */
function readJson(path: string, what: string, lines = false): unknown {
  const text = readBytes(path, (why) => new ApprovalsFileError(`cannot read the ${what} ${path}: ${why}`)).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    try {
      if (lines) return text.split('\n').flatMap((l) => (l.trim() ? [JSON.parse(l) as unknown] : []));
    } catch {
      // not JSON lines either: said below
    }
    throw new ApprovalsFileError(`${path} is not JSON: the ${what} is a JSON array${lines ? `; ${ADD_APPROVERS}` : ''}`);
  }
}

export function readApprovals(path: string): Approval[] {
  if (!existsSync(path)) return [];
  const data = readJson(path, 'approvals file');
  const r = z.array(ApprovalSchema).safeParse(data);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new ApprovalsFileError(`${path} is not an approvals file: [${i.path.join('.')}] ${i.message}`);
  }
  return r.data;
}

/** An earlier approval under the same name is replaced; under a lock, so two approvers signing at once are both kept. */
export async function addApproval(approvalsPath: string, a: Approval): Promise<{ replaced: boolean }> {
  return withLock(
    `${approvalsPath}.lock`,
    async () => {
      const before = readApprovals(approvalsPath);
      const kept = before.filter((x) => !sameName(x.name, a.name));
      await writeFileAtomic(approvalsPath, JSON.stringify([...kept, a], null, 2) + '\n');
      return { replaced: kept.length !== before.length };
    },
    { waitMs: 10_000, purpose: 'approve' },
  );
}

export interface Approver {
  name: string;
  /** Raw, base64, whatever form the list wrote it in. */
  publicKey: string;
  fingerprint: string;
}

const ApproverEntry = z.strictObject({ name: z.string().trim().min(1), publicKey: z.string().min(1) });
const ApproversFile = z.union([z.array(ApproverEntry), z.strictObject({ approvers: z.array(ApproverEntry) }), ApproverEntry]);

/** A name or key listed twice, or a look-alike name, is refused: otherwise "distinct approvers" means nothing. */
export function readApprovers(path: string): Approver[] {
  const r = ApproversFile.safeParse(readJson(path, 'approvers list', true));
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new ApprovalsFileError(
      `${path} is not an approvers list (${i.path.join('.') || 'top level'}: ${i.message}): a JSON array of {"name": ..., "publicKey": ...}; ${ADD_APPROVERS}`,
    );
  }
  return withoutTwins(path, Array.isArray(r.data) ? r.data : 'approvers' in r.data ? r.data.approvers : [r.data]);
}

function withoutTwins(path: string, entries: { name: string; publicKey: string }[]): Approver[] {
  const out: Approver[] = [];
  for (const [i, e] of entries.entries()) {
    const bad = nameProblem(e.name);
    if (bad) throw new ApprovalsFileError(`${path}: entry ${i + 1} (${JSON.stringify(e.name)}): ${bad}`);
    let raw: Buffer;
    try {
      raw = parsePublicKey(e.publicKey).raw;
    } catch (err) {
      throw new ApprovalsFileError(`${path}: entry ${i + 1} (${e.name}): publicKey is ${(err as KeyError).message}`);
    }
    const a = { name: e.name, publicKey: raw.toString('base64'), fingerprint: fingerprintOf(raw) };
    const twin = out.find((o) => sameName(o.name, a.name) || o.publicKey === a.publicKey);
    if (twin)
      throw new ApprovalsFileError(
        `${path}: entry ${i + 1} (${e.name}) repeats ${sameName(twin.name, a.name) ? 'the name' : 'the key'} of ${twin.name}: list each approver once, with a key of their own`,
      );
    out.push(a);
  }
  return out;
}

/** `approvers add FILE... --out LIST`: a name or key listed for someone else refuses it all, nothing written. */
export async function addApprovers(listPath: string, files: string[]): Promise<{ added: string[]; kept: string[]; all: Approver[] }> {
  return withLock(
    `${listPath}.lock`,
    async () => {
      const all = existsSync(listPath) ? readApprovers(listPath) : [];
      const added: string[] = [];
      const kept: string[] = [];
      for (const f of files)
        for (const a of readApprovers(f)) {
          if (all.some((o) => o.publicKey === a.publicKey && o.name === a.name)) kept.push(a.name);
          else {
            withoutTwins(`${listPath} with ${f}`, [...all, a]);
            all.push(a);
            added.push(a.name);
          }
        }
      const list = all.map(({ name, publicKey }) => ({ name, publicKey }));
      await writeFileAtomic(listPath, JSON.stringify(list, null, 2) + '\n');
      return { added, kept, all };
    },
    { waitMs: 10_000, purpose: 'approvers add' },
  );
}

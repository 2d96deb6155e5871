// Where approvals live: `<plan>.approvals.json` beside the plan (the plan itself is never rewritten:
// its bytes are what is signed), a JSON array of approvals; and the approvers list, a JSON array of
// {name, publicKey} kept by whoever decides who may release a batch.
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { writeFileAtomic } from '../files/atomic.ts';
import { withLock } from '../files/lock.ts';
import { nameProblem, sameName } from '../engine/guards.ts';
import { fingerprintOf, KeyError, parsePublicKey } from './keys.ts';
import { readBytes } from './payload.ts';

export const ApprovalSchema = z.object({
  name: z.string().min(1),
  /** The signer's public key: 32 raw bytes in base64 (or PEM). */
  publicKey: z.string().min(1),
  publicKeyFingerprint: z.string(),
  signedAt: z.string(),
  /** Ed25519 over the plan's payload with name and signedAt (payload.ts signedBytes), base64. */
  signature: z.string(),
});
export type Approval = z.infer<typeof ApprovalSchema>;

export const approvalsPathFor = (planPath: string): string => `${planPath}.approvals.json`;

export class ApprovalsFileError extends Error {
  override readonly name = 'ApprovalsFileError';
}

/** Builds an approvers list from the files of `approver-key new`: what a refusal of a list advises. */
const ADD_APPROVERS = 'build it with `payout-batch approvers add *.approver.pub.json --out FILE`';

/**
 * A JSON file; with `lines`, also one JSON value per line (what `cat *.approver.pub.json` gives),
 * read as an array of them.
 */
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

/** The approvals of a plan; none when the file does not exist. */
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

/**
 * Adds an approval to a plan's approvals file; an earlier approval under the same name is replaced
 * (an approver signs again after the plan was made again). Under a lock, replaced atomically: two
 * approvers signing at once both end up in the file, and a reader never sees half of it.
 */
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
  /** The listed key's raw 32 bytes, base64 (whatever form the list wrote it in). */
  publicKey: string;
  fingerprint: string;
}

const ApproverEntry = z.strictObject({ name: z.string().trim().min(1), publicKey: z.string().min(1) });
const ApproversFile = z.union([z.array(ApproverEntry), z.strictObject({ approvers: z.array(ApproverEntry) }), ApproverEntry]);

/**
 * The approvers list: a JSON array of {name, publicKey} (or {"approvers": [...]}), or what
 * `approver-key new` writes: one {name, publicKey} object, or several one per line (`cat`). A
 * name or a key listed twice is refused: one person, one key, or "distinct approvers" means
 * nothing; so is a look-alike name (engine/guards.ts nameProblem).
 */
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

/** Entries as approvers, each name usable and each name and key listed once; refused with the entry otherwise. */
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

/**
 * `approvers add FILE... --out LIST`: the list with the approvers of FILE... added (each file a
 * list in any form readApprovers takes: the `.approver.pub.json` of `approver-key new`, an array).
 * An approver already listed with the same key is kept once; a name or key listed for someone
 * else, or a look-alike of a listed name, is refused and nothing is written. Under a lock, the
 * list replaced atomically.
 */
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

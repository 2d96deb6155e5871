// Approvers' Ed25519 keys (node:crypto; a public key is its 32 raw bytes in base64, or a PEM block),
// `<plan>.approvals.json` beside the plan (the plan is never rewritten: its bytes are what is signed;
// an approval is added under a lock, atomically), and the approvers list, kept by whoever decides who may release a batch.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import * as z from 'zod';
import { writeFileAtomic } from '../files/atomic.ts';
import { attempt } from '../files/attempt.ts';
import { withLock } from '../files/lock.ts';
import { nameProblem, sameName } from '../engine/guards.ts';
import { readBytes } from './payload.ts';
import { sha256Hex } from '../engine/identity.ts';

/** The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): then the 32 raw bytes. */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export class KeyError extends Error {
  override readonly name = 'KeyError';
}

/** `privatePem`: PKCS#8 PEM, never printed or logged. */
export function newKeyPair() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { privatePem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), ...publicOf(publicKey) };
}
export type NewKeyPair = ReturnType<typeof newKeyPair>;

const rawOf = (k: KeyObject): Buffer => k.export({ format: 'der', type: 'spki' }).subarray(SPKI_PREFIX.length);

/** A public key as lists and approvals hold it: its raw bytes in base64, and their fingerprint. */
function publicOf(k: KeyObject): { publicKey: string; fingerprint: string } {
  const raw = rawOf(k);
  return { publicKey: raw.toString('base64'), fingerprint: fingerprintOf(raw) };
}

export function fingerprintOf(raw: Buffer): string {
  return sha256Hex(raw).slice(0, 16);
}

/** `raw`: the one form compared and fingerprinted. */
export function parsePublicKey(text: string): { key: KeyObject; raw: Buffer } {
  const t = text.trim();
  let key: KeyObject;
  try {
    if (t.startsWith('-----BEGIN')) key = createPublicKey(t);
    else {
      const raw = Buffer.from(t, 'base64');
      if (raw.length !== 32 || raw.toString('base64') !== t) throw new KeyError('not 32 bytes of base64');
      key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
    }
  } catch {
    throw new KeyError('not an Ed25519 public key (32 bytes in base64, or a PEM block)');
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new KeyError(`a ${key.asymmetricKeyType ?? 'unknown'} key, not Ed25519`);
  return { key, raw: rawOf(key) };
}

/** The file's text never reaches a message. */
export function parsePrivateKey(pem: string, where: string): { key: KeyObject; publicKey: string; fingerprint: string } {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new KeyError(`${where} is not a private key in PEM (make one with \`payout-batch approver-key new --as NAME\`)`);
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new KeyError(
      `${where} holds a ${key.asymmetricKeyType ?? 'unknown'} key, not Ed25519 (make one with \`payout-batch approver-key new\`)`,
    );
  return { key, ...publicOf(createPublicKey(key)) };
}

const ApprovalSchema = z.object({
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

/** As `schema` reads it (`shape`: what it should be); with `lines`, also one JSON value per line (what `cat *.approver.pub.json` gives). */
function readJson<T>(path: string, what: string, schema: z.ZodType<T>, shape: string, lines = false): T {
  const text = readBytes(path, (why) => new ApprovalsFileError(`cannot read the ${what} ${path}: ${why}`)).toString('utf8');
  const array = `the ${what} is a JSON array${lines ? `; ${ADD_APPROVERS}` : ''}`;
  // (not a list of none: an empty file is one cut short, or never written)
  if (!text.trim()) throw new ApprovalsFileError(`${path} is empty: ${array}`);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    data = lines ? attempt(() => text.split('\n').flatMap((l) => (l.trim() ? [JSON.parse(l) as unknown] : []))) : undefined;
    if (!data) throw new ApprovalsFileError(`${path} is not JSON: ${array}`);
  }
  const r = schema.safeParse(data);
  if (r.success) return r.data;
  const i = r.error.issues[0]!;
  throw new ApprovalsFileError(`${path} is not an ${what} (${i.path.join('.') || 'top level'}: ${i.message}): ${shape}`);
}

export function readApprovals(path: string): Approval[] {
  if (!existsSync(path)) return [];
  return readJson(path, 'approvals file', z.array(ApprovalSchema), 'a JSON array of the signatures `payout-batch approve` adds');
}

/** Under `<path>.lock`, so that two writers at once (approvers signing, lists added) both keep what they add. */
const lockedFor = <T>(path: string, purpose: string, job: () => Promise<T>): Promise<T> =>
  withLock(`${path}.lock`, job, { waitMs: 10_000, purpose });

/** An earlier approval under the same name is replaced. */
export async function addApproval(approvalsPath: string, a: Approval): Promise<{ replaced: boolean }> {
  return lockedFor(approvalsPath, 'approve', async () => {
    const before = readApprovals(approvalsPath);
    const kept = before.filter((x) => !sameName(x.name, a.name));
    await writeFileAtomic(approvalsPath, JSON.stringify([...kept, a], null, 2) + '\n');
    return { replaced: kept.length !== before.length };
  });
}

/** An approvers list's entry, its key read: `publicKey` the raw bytes in base64. */
export const ApproverSchema = z.object({ name: z.string().min(1), publicKey: z.string().min(1), fingerprint: z.string() });
export type Approver = z.infer<typeof ApproverSchema>;

const ApproverEntry = z.strictObject({ name: z.string().trim().min(1), publicKey: z.string().min(1) });
const ApproversFile = z.union([z.array(ApproverEntry), z.strictObject({ approvers: z.array(ApproverEntry) }), ApproverEntry]);

/** A name or key listed twice, or a look-alike name, is refused: otherwise "distinct approvers" means nothing. */
export function readApprovers(path: string): Approver[] {
  const shape = `a JSON array of {"name": ..., "publicKey": ...}; ${ADD_APPROVERS}`;
  const data = readJson(path, 'approvers list', ApproversFile, shape, true);
  return withoutTwins(path, Array.isArray(data) ? data : 'approvers' in data ? data.approvers : [data]);
}

function withoutTwins(path: string, entries: { name: string; publicKey: string }[]): Approver[] {
  const out: Approver[] = [];
  for (const [i, e] of entries.entries()) {
    const bad = nameProblem(e.name);
    if (bad) throw new ApprovalsFileError(`${path}: entry ${i + 1} (${JSON.stringify(e.name)}): ${bad}`);
    let a: Approver;
    try {
      a = { name: e.name, ...publicOf(parsePublicKey(e.publicKey).key) };
    } catch (err) {
      throw new ApprovalsFileError(`${path}: entry ${i + 1} (${e.name}): publicKey is ${(err as KeyError).message}`);
    }
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
  return lockedFor(listPath, 'approvers add', async () => {
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
  });
}

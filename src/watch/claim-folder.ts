// A claim folder, processing/<claim>/: the file, and claim.json saying who holds it (pid, host,
// start time), what it held at the claim (sha256, size, mtime), touched as a heartbeat.
import { randomBytes } from 'node:crypto';
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../files/atomic.ts';
import { fileSha256 } from '../engine/identity.ts';

export interface ClaimRecord {
  name: string;
  pid: number;
  host: string;
  claimedAt: string;
  takenOverAt?: string;
  sha256?: string;
  /** The owner's start time (lock.ts pidStartOf): a pid reused by another process is not the owner. */
  pidStart?: string;
  /** The file as claimed: a change afterwards means a writer was still at work. */
  size?: number;
  mtimeMs?: number;
}

/** processing/<time>-<random>-<name>: sorts by claim time, and a second file of a name gets a folder of its own. */
export const newClaimId = (name: string): string =>
  `${new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}-${randomBytes(3).toString('hex')}-${name.replace(/[^A-Za-z0-9._-]/g, '_')}`;

/** Size or mtime no longer those recorded at the claim: what changed, else undefined. */
export function changedSince(file: string, c: ClaimRecord): string | undefined {
  if (c.size === undefined || c.mtimeMs === undefined) return undefined; // its owner died before recording them
  let st;
  try {
    st = lstatSync(file);
  } catch {
    return 'it is gone from its claim folder';
  }
  if (st.size !== c.size) return `its size went from ${c.size} to ${st.size} bytes`;
  if (st.mtimeMs !== c.mtimeMs) return `it was modified at ${new Date(st.mtimeMs).toISOString()}`;
  return undefined;
}

/**
 * changedSince, or else the content hashed again: an edit in place that kept the size and put the
 * mtime back is still found before the file moves to done/ (the summary's sha256 is of what was paid).
 */
export async function changedOrEdited(file: string, c: ClaimRecord): Promise<string | undefined> {
  const changed = changedSince(file, c);
  if (changed || !c.sha256) return changed;
  const now = await fileSha256(file);
  return now === c.sha256 ? undefined : `its content was edited in place: sha256 ${c.sha256} at the claim, ${now} now`;
}

export const claimFile = (claimDir: string) => join(claimDir, 'claim.json');
export function readClaim(claimDir: string): ClaimRecord | undefined {
  try {
    return JSON.parse(readFileSync(claimFile(claimDir), 'utf8')) as ClaimRecord;
  } catch {
    return undefined;
  }
}
export const writeClaim = (claimDir: string, c: ClaimRecord): void =>
  writeFileAtomicSync(claimFile(claimDir), JSON.stringify(c, null, 2) + '\n');

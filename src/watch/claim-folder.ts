// processing/<claim>/: the file, and .claim.json (a dotfile: no batch is named so) saying who holds it and what it held at the claim,
// touched as a heartbeat.
import { randomBytes } from 'node:crypto';
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../files/atomic.ts';
import { attempt } from '../files/attempt.ts';
import type { LockOwner } from '../files/lock.ts';
import { fileSha256 } from '../engine/identity.ts';

/** Its owner as a lock's (isStale judges it: another pid namespace, a container bearing the host's name, by age), then what it held. */
export type ClaimRecord = Pick<LockOwner, 'pid' | 'host' | 'pidStart' | 'pidSpace'> & {
  name: string;
  claimedAt: string;
  takenOverAt?: string;
  sha256?: string;
  /** A change afterwards means a writer was still at work. */
  size?: number;
  mtimeMs?: number;
  /** Run with rows dated later (ReqdExctnDt): not run again before this day. */
  notBefore?: string;
};

/** <time>-<random>-<name>: sorts by claim time; a second file of a name gets a folder of its own. */
export const newClaimId = (name: string): string =>
  `${new Date().toISOString().replace(/[-:]|\.\d+/g, '')}-${randomBytes(3).toString('hex')}-${name.replace(/[^A-Za-z0-9._-]/g, '_')}`;

export function changedSince(file: string, c: ClaimRecord): string | undefined {
  if (c.size === undefined || c.mtimeMs === undefined) return undefined; // its owner died before recording them
  const st = attempt(() => lstatSync(file));
  if (!st) return 'it is gone from its claim folder';
  if (st.size !== c.size) return `its size went from ${c.size} to ${st.size} bytes`;
  if (st.mtimeMs !== c.mtimeMs) return `it was modified at ${new Date(st.mtimeMs).toISOString()}`;
  return undefined;
}

/** Also an edit in place that kept size and mtime, found before the file moves to done/. */
export async function changedOrEdited(file: string, c: ClaimRecord): Promise<string | undefined> {
  const changed = changedSince(file, c);
  if (changed || !c.sha256) return changed;
  const now = await fileSha256(file);
  return now === c.sha256 ? undefined : `its content was edited in place: sha256 ${c.sha256} at the claim, ${now} now`;
}

export const claimFile = (claimDir: string) => join(claimDir, '.claim.json');
export const readClaim = (claimDir: string): ClaimRecord | undefined =>
  attempt(() => JSON.parse(readFileSync(claimFile(claimDir), 'utf8')) as ClaimRecord);
export const writeClaim = (claimDir: string, c: ClaimRecord): void =>
  writeFileAtomicSync(claimFile(claimDir), JSON.stringify(c, null, 2) + '\n');

// link() fails with EEXIST, so two processes never both take a lock. Breaking a stale one is guarded by
// "<lock>.break" (itself stale after 10 s), so two seeing the same stale lock never remove a fresh one.
import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, readlinkSync, statSync, unlinkSync, writeFileSync, utimesSync } from 'node:fs';
import { hostname } from 'node:os';
import { attempt, unlessMissing } from './attempt.ts';
import { serialised } from './queue.ts';
import { sleep } from '../sleep.ts';

export interface LockOwner {
  pid: number;
  host: string;
  startedAt: string;
  purpose?: string;
  /** Tells the holder from a later process given the same pid. */
  pidStart?: string;
  pidSpace?: string;
}

export interface HeldLock {
  owner: LockOwner;
  /** Marks the lock as still in use (its mtime): undefined, or why it is no longer held (gone, another's, not marked). */
  touch(): string | undefined;
  release(): void;
}

export interface LockOptions {
  /** A lock of another host older than this (mtime) is stale. Default 10 minutes. */
  staleMs?: number;
  /** Default 0: one try. */
  waitMs?: number;
  purpose?: string;
}

export class LockBusy extends Error {
  override readonly name = 'LockBusy';
  constructor(
    readonly path: string,
    readonly owner: LockOwner | undefined,
    why?: string,
  ) {
    super(
      why ??
        `${path} is held by ${owner ? `pid ${owner.pid} on ${owner.host} since ${owner.startedAt}${owner.purpose ? ` (${owner.purpose})` : ''}` : 'another process'}`,
    );
  }
}

function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** /proc/<pid>/stat field 22 (Linux only; compared for equality only). */
export function pidStartOf(pid: number): string | undefined {
  const stat = attempt(() => readFileSync(`/proc/${pid}/stat`, 'utf8'));
  // field 2 (the command) may hold spaces: count from the last ")"
  return stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

/** Which processes a pid names: this boot of this machine, this pid namespace (a container may bear the host's name). */
const PID_SPACE = attempt(() => `${readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()} ${readlinkSync('/proc/self/ns/pid')}`);

/** Undefined for another host (or pid namespace); a live pid with another start time is another process. */
export function holderAlive(o: { pid: number; host: string; pidStart?: string; pidSpace?: string }): boolean | undefined {
  if (o.host !== hostname() || (o.pidSpace ?? PID_SPACE) !== PID_SPACE) return undefined;
  if (!pidAlive(o.pid)) return false;
  return o.pidStart === undefined || (pidStartOf(o.pid) ?? o.pidStart) === o.pidStart;
}

/** Undefined when gone or torn; one that cannot be read is LockBusy: its holder may be alive, and the lock is not taken. */
export function readOwner(path: string): LockOwner | undefined {
  const busy = (code: string) =>
    new LockBusy(
      path,
      undefined,
      `${path} cannot be read (${code}): whether its holder is alive cannot be told, and it is not taken. ` +
        `If no payout-batch process holds it (on any host sharing the folder), remove it (rm ${path}), then run again`,
    );
  const text = unlessMissing(() => readFileSync(path, 'utf8'), busy);
  const o = text === undefined ? undefined : attempt(() => JSON.parse(text) as LockOwner | null);
  return typeof o?.pid === 'number' && typeof o.host === 'string' ? o : undefined;
}

export function isStale(path: string, staleMs: number, now = Date.now()): boolean {
  const mtime = attempt(() => statSync(path).mtimeMs);
  if (mtime === undefined) return false;
  const owner = readOwner(path);
  // (torn: written whole before it is linked, so only by a power cut its holder died in)
  if (!owner) return now - mtime > Math.min(2000, staleMs);
  return !(holderAlive(owner) ?? now - mtime <= staleMs);
}

function tryLink(path: string, owner: LockOwner): boolean {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, JSON.stringify(owner) + '\n');
  try {
    linkSync(tmp, path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  } finally {
    attempt(() => unlinkSync(tmp));
  }
}

/** True when the stale lock was removed (or already gone). */
function breakStale(path: string, staleMs: number): boolean {
  const guard = `${path}.break`;
  if (!tryLink(guard, ownerRecord('breaking a stale lock'))) {
    if (isStale(guard, 10_000)) attempt(() => unlinkSync(guard));
    return false;
  }
  try {
    if (!isStale(path, staleMs)) return false;
    attempt(() => unlinkSync(path));
    return true;
  } finally {
    attempt(() => unlinkSync(guard));
  }
}

export function myStart(): { pidStart?: string; pidSpace?: string } {
  const s = pidStartOf(process.pid);
  return { ...(s === undefined ? {} : { pidStart: s }), ...(PID_SPACE === undefined ? {} : { pidSpace: PID_SPACE }) };
}

export function ownerRecord(purpose?: string): LockOwner {
  return {
    pid: process.pid,
    host: hostname(),
    startedAt: new Date().toISOString(),
    ...(purpose ? { purpose } : {}),
    ...myStart(),
  };
}

/** Errors that may pass: tolerated while the last mark is younger than half of staleMs. */
const TRANSIENT = ['EAGAIN', 'EBUSY', 'EINTR', 'ETIMEDOUT'];

function heldLock(path: string, owner: LockOwner, staleMs: number): HeldLock {
  let released = false;
  let marked = Date.now();
  // a stale-broken and retaken lock belongs to another
  const mine = (o?: LockOwner) => o?.pid === owner.pid && o.host === owner.host && o.startedAt === owner.startedAt;
  return {
    owner,
    touch() {
      if (released) return `${path} was released`;
      try {
        const now = readOwner(path);
        // (another's: broken as stale and retaken; marking it would keep this process going as if it held it)
        if (!mine(now)) return now ? new LockBusy(path, now).message : `${path} is gone (removed, or broken as stale)`;
        const t = new Date();
        utimesSync(path, t, t);
        marked = t.getTime();
        return undefined;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code; // (none: LockBusy, its record unreadable)
        if (code && TRANSIENT.includes(code) && Date.now() - marked < staleMs / 2) return undefined;
        return code ? `${path} cannot be marked as in use (${code})` : (e as Error).message;
      }
    },
    release() {
      if (released) return;
      released = true;
      if (mine(attempt(() => readOwner(path)))) attempt(() => unlinkSync(path)); // (unreadable: left in place, refused to all)
    },
  };
}

/** One synchronous attempt (breaking a stale lock first): undefined while a live holder keeps it. */
export function tryLock(path: string, o: Omit<LockOptions, 'waitMs'> = {}): HeldLock | undefined {
  const staleMs = o.staleMs ?? 10 * 60_000;
  const owner = ownerRecord(o.purpose);
  if (tryLink(path, owner)) return heldLock(path, owner, staleMs);
  // once more after breaking a stale lock (never in a loop: a lock that cannot be removed stays busy)
  if (isStale(path, staleMs) && breakStale(path, staleMs) && tryLink(path, owner)) return heldLock(path, owner, staleMs);
  return undefined;
}

export async function acquireLock(path: string, o: LockOptions = {}): Promise<HeldLock> {
  const deadline = Date.now() + (o.waitMs ?? 0);
  for (let round = 0; ; round++) {
    const lock = tryLock(path, o);
    if (lock) return lock;
    if (Date.now() >= deadline) throw new LockBusy(path, readOwner(path));
    await sleep(Math.min(50 + round * 10, 250));
  }
}

/** After this process's earlier jobs on the path; waits up to 30 s by default. */
export function withLock<T>(path: string, job: () => Promise<T>, o: LockOptions = {}): Promise<T> {
  return serialised(path, async () => {
    const lock = await acquireLock(path, { waitMs: 30_000, staleMs: 60_000, ...o });
    try {
      return await job();
    } finally {
      lock.release();
    }
  });
}

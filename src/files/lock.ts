// The one inter-process lock of the tool: a lock file with its holder (pid, host, start time)
// written inside (who takes which: src/files/README.md). Taking a lock is one atomic step: the owner record is written to a private temporary file, then
// hard-linked to the lock's name; link() fails with EEXIST when the lock exists, so two processes
// can never both succeed. On this host the process table decides: a lock whose holder is alive
// is never stale, however old (a process blocked or stopped still holds it), and one whose holder
// is dead (or whose pid now belongs to a process started later) is stale at once. A lock of
// another host is stale when older than `staleMs` (its holder no longer touches it). Breaking a
// stale lock is itself guarded by a second lock ("<lock>.break"), so two processes that both see
// the same stale lock cannot break it twice and remove a fresh one; the break lock can only be
// left behind by a crash in that window of a few microseconds, and is stale after 10 s.
//
// Within one process, withLock's callers of one path wait in line (queue.ts) rather than poll a
// lock their own process holds.
import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, statSync, unlinkSync, writeFileSync, utimesSync } from 'node:fs';
import { hostname } from 'node:os';
import { serialised } from './queue.ts';
import { sleep } from '../sleep.ts';

export interface LockOwner {
  pid: number;
  host: string;
  startedAt: string;
  /** What holds it (watch, listen, status). */
  purpose?: string;
  /** The holder's start time (pidStartOf): tells the holder from a later process given the same pid. */
  pidStart?: string;
}

export interface HeldLock {
  path: string;
  owner: LockOwner;
  /** Marks the lock as still in use (its mtime), for locks held longer than staleMs. */
  touch(): void;
  release(): void;
}

export interface LockOptions {
  /** A lock of another host older than this (mtime) is stale. Default 10 minutes. */
  staleMs?: number;
  /** Keep trying this long when the lock is held by a live process (0: one try). Default 0. */
  waitMs?: number;
  purpose?: string;
}

export class LockBusy extends Error {
  override readonly name = 'LockBusy';
  constructor(
    readonly path: string,
    readonly owner: LockOwner | undefined,
  ) {
    super(
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

/**
 * When the process `pid` started, as Linux counts it (/proc/<pid>/stat field 22, clock ticks since
 * boot); undefined elsewhere or when it is gone. Only compared for equality.
 */
export function pidStartOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (the command) is in parentheses and may hold spaces: count from the last ")".
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Is the writer of an owner record running? Undefined for another host; a live pid with another start time is another process. */
export function holderAlive(o: { pid: number; host: string; pidStart?: string }): boolean | undefined {
  if (o.host !== hostname()) return undefined;
  if (!pidAlive(o.pid)) return false;
  if (o.pidStart === undefined) return true;
  const now = pidStartOf(o.pid);
  return now === undefined || now === o.pidStart;
}

export function readOwner(path: string): LockOwner | undefined {
  try {
    const o = JSON.parse(readFileSync(path, 'utf8')) as LockOwner;
    return typeof o.pid === 'number' && typeof o.host === 'string' ? o : undefined;
  } catch {
    return undefined;
  }
}

/** Is the lock at `path` stale? (false when it does not exist) */
export function isStale(path: string, staleMs: number, now = Date.now()): boolean {
  let mtime: number;
  try {
    mtime = statSync(path).mtimeMs;
  } catch {
    return false;
  }
  const owner = readOwner(path);
  // An unreadable record younger than the bound may be a lock being written: not stale yet.
  if (!owner) return now - mtime > Math.min(2000, staleMs);
  const alive = holderAlive(owner);
  if (alive !== undefined) return !alive;
  return now - mtime > staleMs;
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
    removeIfThere(tmp);
  }
}

/** Removes a file another process may have removed first. */
function removeIfThere(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* gone already */
  }
}

/** Removes a stale lock, once, under the break lock. True when it was removed (or already gone). */
function breakStale(path: string, staleMs: number): boolean {
  const guard = `${path}.break`;
  if (!tryLink(guard, ownerRecord('breaking a stale lock'))) {
    if (isStale(guard, 10_000)) removeIfThere(guard);
    return false;
  }
  try {
    if (!isStale(path, staleMs)) return false;
    removeIfThere(path);
    return true;
  } finally {
    removeIfThere(guard);
  }
}

/** This process's start time, for the records it writes (nothing where it cannot be read). */
export function myStart(): { pidStart?: string } {
  const s = pidStartOf(process.pid);
  return s === undefined ? {} : { pidStart: s };
}

function ownerRecord(purpose: string | undefined): LockOwner {
  return {
    pid: process.pid,
    host: hostname(),
    startedAt: new Date().toISOString(),
    ...(purpose ? { purpose } : {}),
    ...myStart(),
  };
}

function heldLock(path: string, owner: LockOwner): HeldLock {
  let released = false;
  return {
    path,
    owner,
    touch() {
      if (released) return;
      const t = new Date();
      try {
        utimesSync(path, t, t);
      } catch {
        /* removed under us: nothing to mark */
      }
    },
    release() {
      if (released) return;
      released = true;
      // Only our own lock is removed (a stale-broken and retaken lock belongs to another).
      const now = readOwner(path);
      if (now && now.pid === owner.pid && now.host === owner.host && now.startedAt === owner.startedAt) removeIfThere(path);
    },
  };
}

/**
 * One attempt, without waiting: the lock (breaking a stale one first), or undefined while a live
 * holder keeps it. Synchronous, for a caller that decides in one step (the shared pace).
 */
export function tryLock(path: string, o: Omit<LockOptions, 'waitMs'> = {}): HeldLock | undefined {
  const staleMs = o.staleMs ?? 10 * 60_000;
  const owner = ownerRecord(o.purpose);
  if (tryLink(path, owner)) return heldLock(path, owner);
  // once more after breaking a stale lock (never in a loop: a lock that cannot be removed stays busy)
  if (isStale(path, staleMs) && breakStale(path, staleMs) && tryLink(path, owner)) return heldLock(path, owner);
  return undefined;
}

/** Takes the lock, breaking a stale one; throws LockBusy when a live holder keeps it past waitMs. */
export async function acquireLock(path: string, o: LockOptions = {}): Promise<HeldLock> {
  const deadline = Date.now() + (o.waitMs ?? 0);
  for (let round = 0; ; round++) {
    const lock = tryLock(path, o);
    if (lock) return lock;
    if (Date.now() >= deadline) throw new LockBusy(path, readOwner(path));
    await sleep(Math.min(50 + round * 10, 250));
  }
}

/** Runs `job` under the lock, waiting for it (default up to 30 s), after this process's earlier jobs on it. */
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

/** For tests and recovery: writes an owner record as if `owner` held the lock. */
export function writeOwner(path: string, owner: LockOwner): void {
  writeFileSync(path, JSON.stringify(owner) + '\n');
}

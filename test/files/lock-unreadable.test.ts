// A lock whose owner record cannot be read (EACCES: another user's lock made under umask 077; EIO) is
// not a lock nobody holds: it used to be taken as a record being written, stale after 2 s, and broken
// under a live holder, so two processes held the ledger's lock, the watch folder's or listen's at once.
// It now refuses, naming the lock, the error and how to clear it. (root reads any file: the refusal is
// made here as the system would make it.) A torn record is still broken: its holder is gone (below).
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Failure } from '../files/failing-fs.ts';
import { afterAll, describe, expect, it, vi } from 'vitest';

const failing = vi.hoisted(() => new Map<string, Failure>());
vi.mock('node:fs', async (real) => (await import('../files/failing-fs.ts')).failingFs(await real(), failing));

const { acquireLock, LockBusy, readOwner, tryLock, withLock } = await import('../../src/files/lock.ts');

const dir = mkdtempSync(join(tmpdir(), 'pb-lock-unreadable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** As if taken `seconds` ago (a run holds the ledger's lock, a watch tick the folder's, for longer than 2 s). */
const age = (path: string, seconds: number) => {
  const then = new Date(Date.now() - seconds * 1000);
  utimesSync(path, then, then);
};

describe('a lock whose owner record cannot be read', () => {
  it('is not broken under its live holder: tryLock, acquireLock and withLock refuse, naming it and how to clear it', async () => {
    const path = join(dir, 'ledger.lock');
    const held = await acquireLock(path, { purpose: 'first run' });
    age(path, 10);
    failing.set('readFileSync', { path, code: 'EACCES' });
    let ran = false;
    try {
      const refusal = { name: 'LockBusy', message: expect.stringMatching(new RegExp(`^${path} cannot be read \\(EACCES\\).*rm ${path}`)) };
      expect(() => tryLock(path, { staleMs: 60_000 })).toThrow(LockBusy);
      expect(() => tryLock(path, { staleMs: 60_000 })).toThrow(`${path} cannot be read (EACCES)`);
      await expect(acquireLock(path, { waitMs: 200, staleMs: 60_000 })).rejects.toMatchObject(refusal);
      await expect(withLock(path, async () => void (ran = true))).rejects.toMatchObject(refusal);
    } finally {
      failing.clear();
    }
    expect(ran).toBe(false);
    expect(readOwner(path)).toEqual(held.owner);
    held.release();
    tryLock(path)!.release();
  });

  it('a folder in its place is named as such, not as a lock another process holds', () => {
    const path = join(dir, 'folder.lock');
    mkdirSync(path);
    expect(() => tryLock(path)).toThrow(`${path} cannot be read (EISDIR)`);
  });

  it('a torn record is broken once 2 s old: written whole before it is linked, it is torn only by a power cut its holder died in', () => {
    const path = join(dir, 'torn.lock');
    writeFileSync(path, '');
    age(path, 10);
    const held = tryLock(path, { staleMs: 60 * 60_000 });
    expect(held?.owner.pid).toBe(process.pid);
    held!.release();
  });
});

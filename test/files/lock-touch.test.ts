// touch() of a lock held for a long time (listen's heartbeat) says whether the lock is still this
// process's and marked. It used to swallow every error and mark whatever record held the name: a
// utimes that failed went unsaid until another host broke the lock as stale, and a lock broken and
// retaken by another was marked alive for its new holder while this process went on as if it held
// it. (root may change any file's times: the failure is made here as a failing disk makes it.)
import { existsSync, mkdtempSync, rmSync, statSync, unlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { Failure } from './failing-fs.ts';

const failing = vi.hoisted(() => new Map<string, Failure>());
vi.mock('node:fs', async (real) => (await import('./failing-fs.ts')).failingFs(await real(), failing));

const { readOwner, tryLock } = await import('../../src/files/lock.ts');
const { writeOwner } = await import('./owner.ts');

const dir = mkdtempSync(join(tmpdir(), 'pb-lock-touch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  failing.clear();
  vi.useRealTimers();
});

/** Marked `seconds` ago: its mtime. */
const age = (path: string, seconds: number) => {
  const then = new Date(Date.now() - seconds * 1000);
  utimesSync(path, then, then);
  return statSync(path).mtimeMs;
};

describe('touch of a held lock', () => {
  it('marks its own lock and says nothing is wrong', () => {
    const path = join(dir, 'mine.lock');
    const held = tryLock(path, { staleMs: 60_000, purpose: 'listen' })!;
    const before = age(path, 50);
    expect(held.touch()).toBeUndefined();
    expect(statSync(path).mtimeMs).toBeGreaterThan(before);
    held.release();
    expect(existsSync(path)).toBe(false);
  });

  it('a lock removed under it is not held, and not made again', () => {
    const path = join(dir, 'removed.lock');
    const held = tryLock(path, { staleMs: 60_000 })!;
    unlinkSync(path);
    expect(held.touch()).toBe(`${path} is gone (removed, or broken as stale)`);
    expect(existsSync(path)).toBe(false);
  });

  it("broken as stale and retaken by another host: not held, the new holder's record neither marked nor removed", () => {
    const path = join(dir, 'retaken.lock');
    const held = tryLock(path, { staleMs: 60_000, purpose: 'listen' })!;
    const theirs = { pid: 4242, host: 'other-host', startedAt: '2026-12-01T09:00:00.000Z', purpose: 'listen' };
    writeOwner(path, theirs);
    const before = age(path, 50);
    expect(held.touch()).toBe(`${path} is held by pid 4242 on other-host since 2026-12-01T09:00:00.000Z (listen)`);
    expect(statSync(path).mtimeMs).toBe(before);
    held.release();
    expect(readOwner(path)).toEqual(theirs);
  });

  it('a utimes that fails (EIO) is not held, naming the lock and the error', () => {
    const path = join(dir, 'eio.lock');
    const held = tryLock(path, { staleMs: 60_000 })!;
    failing.set('utimesSync', { path, code: 'EIO' });
    expect(held.touch()).toBe(`${path} cannot be marked as in use (EIO)`);
    held.release();
  });

  it("a record that cannot be read is not held: whether it is still this process's cannot be told", () => {
    const path = join(dir, 'unreadable.lock');
    const held = tryLock(path, { staleMs: 60_000 })!;
    failing.set('readFileSync', { path, code: 'EIO' });
    expect(held.touch()).toMatch(`${path} cannot be read (EIO)`);
    failing.clear();
    held.release();
  });

  it('a transient error is held while the last mark is younger than half the stale time, not after', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const path = join(dir, 'busy.lock');
    const held = tryLock(path, { staleMs: 60_000 })!;
    failing.set('utimesSync', { path, code: 'EBUSY' });
    vi.setSystemTime(Date.now() + 29_000);
    expect(held.touch()).toBeUndefined();
    vi.setSystemTime(Date.now() + 2_000);
    expect(held.touch()).toBe(`${path} cannot be marked as in use (EBUSY)`);
    failing.clear();
    expect(held.touch()).toBeUndefined();
    held.release();
  });
});

// The one lock, the one atomic writer and the one per-path queue (src/files).
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeFileAtomic, writeFileAtomicSync } from '../../src/files/atomic.ts';
import { acquireLock, LockBusy, readOwner, tryLock, withLock } from '../../src/files/lock.ts';
import { writeOwner } from './owner.ts';
import { serialised } from '../../src/files/queue.ts';

const dir = mkdtempSync(join(tmpdir(), 'pb-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// a pid that no process holds (pids stop far below this on Linux and macOS)
const DEAD_PID = 2 ** 22 + 17;

describe('the lock', () => {
  it('tryLock: held once; busy while held, even by this process; free again when released', () => {
    const path = join(dir, 'a.lock');
    const held = tryLock(path, { purpose: 'test' });
    expect(held).toBeDefined();
    expect(readOwner(path)).toMatchObject({ pid: process.pid, purpose: 'test' });
    expect(tryLock(path)).toBeUndefined();
    held!.release();
    expect(readdirSync(dir).filter((n) => n.startsWith('a.lock'))).toEqual([]);
    tryLock(path)!.release();
  });

  it('a lock whose holder died on this host is broken at once, however young', async () => {
    const path = join(dir, 'dead.lock');
    writeOwner(path, { pid: DEAD_PID, host: (await import('node:os')).hostname(), startedAt: new Date().toISOString() });
    const held = tryLock(path, { staleMs: 60 * 60_000 });
    expect(held?.owner.pid).toBe(process.pid);
    held!.release();
  });

  it('acquireLock: LockBusy naming the holder once waitMs is over', async () => {
    const path = join(dir, 'busy.lock');
    const held = await acquireLock(path, { purpose: 'holder' });
    const e = await acquireLock(path, { waitMs: 60 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(LockBusy);
    expect((e as Error).message).toMatch(/\(holder\)/);
    held.release();
  });

  it("withLock: this process's jobs on one lock run one at a time, in call order", async () => {
    const path = join(dir, 'queue.lock');
    const order: string[] = [];
    let inside = 0;
    const job = (name: string) => async () => {
      expect(++inside).toBe(1);
      order.push(`${name}:in`);
      await new Promise<void>((r) => setImmediate(r));
      order.push(`${name}:out`);
      inside--;
    };
    await Promise.all([withLock(path, job('a')), withLock(path, job('b')), withLock(path, job('c'))]);
    expect(order).toEqual(['a:in', 'a:out', 'b:in', 'b:out', 'c:in', 'c:out']);
  });
});

describe('the atomic writer', () => {
  it('replaces a file whole, async and sync, and leaves no temporary file behind', async () => {
    const path = join(dir, 'atomic.json');
    writeFileSync(path, 'old');
    await writeFileAtomic(path, ['{"a":', '1}']);
    expect(readFileSync(path, 'utf8')).toBe('{"a":1}');
    writeFileAtomicSync(path, 'ü'.repeat(100_000), { mode: 0o600 });
    expect(readFileSync(path, 'utf8')).toBe('ü'.repeat(100_000));
    expect(readdirSync(dir).filter((n) => n.includes('atomic.json'))).toEqual(['atomic.json']);
  });

  it('a failed write leaves the old file as it was', async () => {
    const path = join(dir, 'missing-folder', 'x.json');
    await expect(writeFileAtomic(path, 'x')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(() => writeFileAtomicSync(path, 'x')).toThrow(/ENOENT/);
  });
});

describe('the per-path queue', () => {
  it('runs jobs on one path in call order, a failure not stopping the next', async () => {
    const seen: number[] = [];
    const slow = serialised(join(dir, 'q'), async () => {
      await new Promise<void>((r) => setImmediate(r));
      seen.push(1);
      throw new Error('first fails');
    });
    const fast = serialised(join(dir, 'q'), async () => void seen.push(2));
    await expect(slow).rejects.toThrow('first fails');
    await fast;
    expect(seen).toEqual([1, 2]);
  });
});

// Two containers sharing a state folder may bear one host name (host networking), and two machines
// sharing one over NFS may too: a pid of theirs names nothing in this process table, so their lock
// and reservation are judged by their age, as another host's, never as a dead process's at once.
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tryLock } from '../../src/files/lock.ts';
import { writeOwner } from './owner.ts';
import { FileLedger } from '../../src/ledger/file.ts';

const dir = mkdtempSync(join(tmpdir(), 'pb-pid-space-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// a pid that no process holds here (pids stop far below this on Linux and macOS); alive in its own pid namespace
const THEIR_PID = 2 ** 22 + 17;
const theirs = () => ({
  pid: THEIR_PID,
  host: hostname(),
  startedAt: new Date().toISOString(),
  pidStart: '42',
  pidSpace: 'their-boot pid:[1]',
});

describe.runIf(process.platform === 'linux')('a process of this host name in another pid namespace', () => {
  it('holds its lock while it touches it, and loses it once stale', () => {
    const path = join(dir, 'ledger.lock');
    writeOwner(path, theirs());
    expect(tryLock(path, { staleMs: 60_000 })).toBeUndefined();
    const old = new Date(Date.now() - 120_000);
    utimesSync(path, old, old);
    const held = tryLock(path, { staleMs: 60_000 });
    expect(held?.owner.pid).toBe(process.pid);
    held!.release();
  });

  it('keeps its reservation: a batch sending the same reference is refused, not let through', async () => {
    const ledger = new FileLedger('https://gateway.example.com', join(dir, 'ledger'));
    const mine = await ledger.reserve({ batchId: 'a'.repeat(64), file: '/in/a.csv', command: 'run', fresh: ['R1'] });
    await mine.release();
    const path = join(ledger.dir, `${'b'.repeat(16)}.reserve.json`);
    writeFileSync(path, JSON.stringify({ batchId: 'b'.repeat(64), file: '/in/b.csv', command: 'run', owner: theirs(), refs: ['R1'] }));
    await expect(ledger.reserve({ batchId: 'a'.repeat(64), file: '/in/a.csv', command: 'run', fresh: ['R1'] })).rejects.toMatchObject({
      reason: 'references-being-sent',
    });
  });
});

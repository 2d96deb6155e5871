// A disk that fills mid-line: write() takes part of the line and returns the count, then fails. An
// append that returned would be a line on disk (an `initiating` one before its request leaves).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';

const disk = vi.hoisted(() => ({ room: Infinity, synced: [] as number[] }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const writeSync = ((fd: number, data: string | Uint8Array, offset?: number) => {
    const bytes = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data.subarray(offset ?? 0));
    if (disk.room <= 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const n = Math.min(bytes.length, disk.room);
    disk.room -= n;
    return fs.writeSync(fd, bytes.subarray(0, n));
  }) as typeof fs.writeSync;
  // fsync watched: what it makes durable is read when it is called
  const fsyncSync = vi.fn((fd: number) => {
    disk.synced.push(fd);
    fs.fsyncSync(fd);
  });
  return { ...fs, writeSync, fsyncSync, default: { ...fs, writeSync, fsyncSync } };
});

const { JournalWriter } = await import('../../src/journal/journal.ts');
const { readJournal } = await import('./read-journal.ts');
const { FileLedger } = await import('../../src/ledger/file.ts');

describe('journal: the disk fills mid-line', () => {
  it('the append throws, and the line after space is back is read whole', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'pb-journal-full-')), 'j.jsonl');
    const w = JournalWriter.open(path);
    w.append({ t: 'run', at: 'now', command: 'run', pid: 1 }, { sync: true });
    disk.room = 20;
    expect(() => w.append({ t: 'initiating', ref: 'R1', attempt: 1, key: 'k1', body: '{"a":1}' }, { sync: true })).toThrow(/ENOSPC/);
    disk.room = Infinity;
    w.append({ t: 'run-end', at: 'now', code: 4 }, { sync: true });
    w.close();
    const read = readJournal(path);
    expect(read.events.map((e) => e.t)).toEqual(['run', 'run-end']);
    expect(read.skipped).toBe(1);
    expect(readFileSync(path, 'utf8').endsWith('\n')).toBe(true);
  });
});

it("the day's count of payouts sent without approval is fsynced before they are sent: a power cut cannot give the allowance again", async () => {
  const ledger = new FileLedger('https://api.example.com', mkdtempSync(join(tmpdir(), 'pb-unapproved-')));
  disk.synced = [];
  const taken = await ledger.unapproved('2026-11-30', {
    payouts: [{ reference: 'U-1', currency: 'USD', amount: '30' }],
    above: { USD: '100' },
  });
  expect(taken).toMatchObject({ taken: true });
  expect(disk.synced.length).toBeGreaterThan(0);
  expect(readFileSync(join(ledger.dir, 'unapproved-2026-11-30.jsonl'), 'utf8')).toMatch(/"reference":"U-1"/);
});

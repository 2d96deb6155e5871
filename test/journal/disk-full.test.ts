// A disk that fills mid-line: write() takes part of the line and returns the count, then fails. An
// append that returned would be a line on disk (an `initiating` one before its request leaves).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';

const disk = vi.hoisted(() => ({ room: Infinity }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const writeSync = ((fd: number, data: string | Uint8Array, offset?: number) => {
    const bytes = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data.subarray(offset ?? 0));
    if (disk.room <= 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const n = Math.min(bytes.length, disk.room);
    disk.room -= n;
    return fs.writeSync(fd, bytes.subarray(0, n));
  }) as typeof fs.writeSync;
  return { ...fs, writeSync, default: { ...fs, writeSync } };
});

const { JournalWriter, readJournal } = await import('../../src/journal/journal.ts');

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

import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeResults, readResults, ResultsError, type ResultsTable } from '../../src/results/results.ts';
import { table, tempDir } from './helpers.ts';

// rename can be made to fail, standing for a crash between writing the temporary file and renaming it
const fsState = vi.hoisted(() => ({ failRename: false, renames: [] as [string, string][] }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...real,
    rename: async (from: string, to: string) => {
      fsState.renames.push([from, to]);
      if (fsState.failRename) throw Object.assign(new Error('simulated crash before rename'), { code: 'EIO' });
      return real.rename(from, to);
    },
  };
});

const tmp = tempDir('pb-results-atomic-');
afterAll(tmp.cleanup);
beforeEach(() => {
  fsState.failRename = false;
  fsState.renames = [];
});

const withStatus = (t: ResultsTable, status: string): ResultsTable => ({
  ...t,
  rows: t.rows.map((r) => ({ ...r, result: { ...r.result, status } })),
});

describe('atomic writing', () => {
  it('writes through a temporary file in the same folder, then renames it', async () => {
    const p = tmp.path('a.csv');
    await writeResults(p, table('csv', 2));
    expect(fsState.renames).toHaveLength(1);
    const [from, to] = fsState.renames[0]!;
    expect(to).toBe(p);
    expect(dirname(from)).toBe(dirname(p));
    expect(from).not.toBe(p);
    expect(readdirSync(tmp.dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it.each(['csv', 'xlsx'] as const)(
    'a failure before the rename leaves the previous %s file intact and no temporary file behind',
    async (format) => {
      const p = tmp.path(`b.${format}`);
      await writeResults(p, withStatus(table(format, 3), 'PENDING'));
      const before = readFileSync(p);
      fsState.failRename = true;
      const err = await writeResults(p, withStatus(table(format, 5), 'SUCCESSFUL')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ResultsError);
      expect(err).toMatchObject({ code: 'WRITE_FAILED' });
      expect((err as Error).message).toContain(p);
      expect((err as Error).message).toContain('previous version');
      expect(readFileSync(p).equals(before)).toBe(true);
      expect(readdirSync(dirname(p)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
      fsState.failRename = false;
      expect((await readResults(p)).rows.map((r) => r.result.status)).toEqual(['PENDING', 'PENDING', 'PENDING']);
    },
  );

  it('fails with WRITE_FAILED, not a stack trace, when the folder does not exist', async () => {
    const p = join(tmp.dir, 'missing-folder', 'r.csv');
    await expect(writeResults(p, table('csv', 1))).rejects.toMatchObject({
      code: 'WRITE_FAILED',
      file: p,
      message: expect.stringContaining('folder does not exist'),
    });
  });

  it('never shows a partial file to a reader while writes replace it', async () => {
    const p = tmp.path('big.csv');
    const small = table('csv', 2000);
    const large = table('csv', 12000);
    await writeResults(p, small);
    const complete = new Set([small.rows.length + 2, large.rows.length + 2]); // header + rows + the empty string after the last CRLF
    let done = false;
    let reads = 0;
    const writes = (async () => {
      for (let i = 0; i < 6; i++) await writeResults(p, i % 2 ? small : large);
      done = true;
    })();
    while (!done) {
      const text = readFileSync(p, 'utf8');
      reads++;
      expect(text.endsWith('\r\n')).toBe(true);
      expect(complete.has(text.split('\r\n').length)).toBe(true);
      await new Promise((r) => setImmediate(r));
    }
    // (how many reads fall between the writes is the scheduler's: the first is made while the first write is under way)
    await writes;
    expect(reads).toBeGreaterThan(0);
  });

  it('runs writes to the same path in call order, so the last write wins', async () => {
    const p = tmp.path('order.csv');
    const statuses = ['PENDING', 'PROCESSING', 'SUCCESSFUL', 'FAILED', 'REJECTED'];
    await Promise.all(statuses.map((s, i) => writeResults(p, withStatus(table('csv', 1 + i * 500), s))));
    const back = await readResults(p);
    expect(back.rows).toHaveLength(1 + 4 * 500);
    expect(back.rows[0]!.result.status).toBe('REJECTED');
  });

  it('replaces a file that a user left with other content', async () => {
    const p = tmp.path('old.csv');
    writeFileSync(p, 'something else entirely\n');
    await writeResults(p, table('csv', 1));
    expect((await readResults(p)).rows).toHaveLength(1);
  });
});

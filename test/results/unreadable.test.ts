// A results folder this user cannot list is not one without retry-N files: a retry named its output
// retry-1 and replaced the retry-1 already there, and status and retry read the run's first results
// instead of the last. A file a pain.002 would replace that cannot be read is not known to be an
// earlier report: it was replaced, the batch or its results named by mistake too. Both refuse,
// naming the path and its error. (root lists and reads any file: the refusals are made here as they
// would be.)
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

const denied = vi.hoisted(() => ({ list: '', open: '' }));
const refuse = (path: unknown, what: string) =>
  Object.assign(new Error(`EACCES: permission denied, ${what} '${String(path)}'`), { code: 'EACCES' });
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const readdirSync = ((path: string, ...o: never[]) => {
    if (denied.list && String(path) === denied.list) throw refuse(path, 'scandir');
    return real.readdirSync(path, ...o);
  }) as typeof real.readdirSync;
  return { ...real, readdirSync, default: { ...real, readdirSync } };
});
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  const open = ((path: string, ...o: never[]) => {
    if (denied.open && String(path) === denied.open) return Promise.reject(refuse(path, 'open'));
    return real.open(path, ...o);
  }) as typeof real.open;
  return { ...real, open, default: { ...real, open } };
});

const { resultsPathFor } = await import('../../src/results/results.ts');
const { newestResults } = await import('../../src/results/paths.ts');
const { writeResults } = await import('../../src/results/write.ts');
const { writeStatusReport } = await import('../../src/results/status-report.ts');
const { table, tempDir } = await import('./helpers.ts');

const tmp = tempDir('pb-results-unreadable-');
afterAll(tmp.cleanup);

describe('a results folder this user cannot list', () => {
  it('refuses to name a retry output, instead of naming retry-1 over the one there', () => {
    const dir = tmp.path('d');
    mkdirSync(dir);
    for (const n of ['payroll.results.csv', 'payroll.results.retry-1.csv', 'payroll.results.retry-2.csv']) writeFileSync(join(dir, n), n);
    const results = join(dir, 'payroll.results.csv');
    denied.list = dir;
    try {
      for (const name of [() => resultsPathFor(results), () => newestResults(results)])
        expect(name).toThrow(
          expect.objectContaining({
            name: 'ResultsError',
            code: 'UNREADABLE',
            message: expect.stringContaining(`cannot list ${dir} (EACCES)`),
          }),
        );
    } finally {
      denied.list = '';
    }
    expect(resultsPathFor(results).path).toBe(join(dir, 'payroll.results.retry-3.csv'));
    expect(newestResults(results)).toBe(join(dir, 'payroll.results.retry-2.csv'));
    // (a folder not made yet holds no retry-N)
    expect(resultsPathFor(join(dir, 'none', 'payroll.results.csv')).path).toBe(join(dir, 'none', 'payroll.results.retry-1.csv'));
  });
});

describe('a file a pain.002 would replace that cannot be read', () => {
  it('is refused and left as it is, not taken for an earlier report', async () => {
    const results = tmp.path('r.results.csv');
    await writeResults(results, table('csv', 1));
    const other = tmp.path('named.csv');
    writeFileSync(other, 'reference,sourceAmount\nPAY-1,10.00\n');
    denied.open = other;
    try {
      await expect(writeStatusReport(results, other)).rejects.toMatchObject({
        name: 'ResultsError',
        message: expect.stringContaining(`cannot read ${other} (EACCES)`),
      });
    } finally {
      denied.open = '';
    }
    expect(readFileSync(other, 'utf8')).toBe('reference,sourceAmount\nPAY-1,10.00\n');
    // (none there yet: written)
    const fresh = tmp.path('fresh.pain002.xml');
    await writeStatusReport(results, fresh);
    expect(readFileSync(fresh, 'utf8')).toContain('pain.002');
  });
});

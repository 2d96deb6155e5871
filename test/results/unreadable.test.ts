// A results folder this user cannot list is not one without retry-N files: a retry named its output
// retry-1 and replaced the retry-1 already there, and status and retry read the run's first results
// instead of the last. It refuses, naming the folder and its error. (root lists any folder: the
// refusal is made here as it would be.)
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

const denied = vi.hoisted(() => ({ list: '' }));
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
const { resultsPathFor } = await import('../../src/results/results.ts');
const { newestResults } = await import('../../src/results/paths.ts');
const { tempDir } = await import('./helpers.ts');

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

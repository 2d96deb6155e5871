// A results folder this user cannot list is not one without retry-N files: a retry named its output
// retry-1 and replaced the retry-1 already there, and status and retry read the run's first results
// instead of the last. A file a pain.002 would replace that cannot be read is not known to be an
// earlier report: it was replaced, the batch or its results named by mistake too. Both refuse,
// naming the path and its error. (root lists and reads any file: the refusals are made here as they
// would be.)
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Failure } from '../files/failing-fs.ts';
import { afterAll, describe, expect, it, vi } from 'vitest';

const [failing, failingPromises] = vi.hoisted(() => [new Map<string, Failure>(), new Map<string, Failure>()]);
vi.mock('node:fs', async (real) => (await import('../files/failing-fs.ts')).failingFs(await real(), failing));
vi.mock('node:fs/promises', async (real) => (await import('../files/failing-fs.ts')).failingFs(await real(), failingPromises));

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
    failing.set('readdirSync', { path: dir, code: 'EACCES' });
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
      failing.clear();
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
    failingPromises.set('open', { path: other, code: 'EACCES' });
    try {
      await expect(writeStatusReport(results, other)).rejects.toMatchObject({
        name: 'ResultsError',
        message: expect.stringContaining(`cannot read ${other} (EACCES)`),
      });
    } finally {
      failingPromises.clear();
    }
    expect(readFileSync(other, 'utf8')).toBe('reference,sourceAmount\nPAY-1,10.00\n');
    // (none there yet: written)
    const fresh = tmp.path('fresh.pain002.xml');
    await writeStatusReport(results, fresh);
    expect(readFileSync(fresh, 'utf8')).toContain('pain.002');
  });
});

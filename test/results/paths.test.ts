import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { resultsPathFor } from '../../src/results/results.ts';
import { partialResultsPath } from '../../src/results/paths.ts';
import { tempDir } from './helpers.ts';

const tmp = tempDir('pb-results-paths-');
afterAll(tmp.cleanup);

/** A fresh folder holding `names` (empty files). */
function folder(...names: string[]): string {
  const dir = tmp.path('d');
  mkdirSync(dir);
  for (const n of names) writeFileSync(join(dir, n), '');
  return dir;
}

describe('retry results never overwrite an earlier retry', () => {
  it('a second retry of the same results file takes the next free number', () => {
    const dir = folder('payroll.csv', 'payroll.results.csv');
    const results = join(dir, 'payroll.results.csv');
    expect(resultsPathFor(results).path).toBe(join(dir, 'payroll.results.retry-1.csv'));
    writeFileSync(join(dir, 'payroll.results.retry-1.csv'), '');
    expect(resultsPathFor(results).path).toBe(join(dir, 'payroll.results.retry-2.csv'));
  });

  it('goes past every retry-N of the same base, whichever file is retried and whatever its format', () => {
    const dir = folder('payroll.results.csv', 'payroll.results.retry-1.csv', 'payroll.results.retry-3.xlsx', 'PAYROLL.RESULTS.RETRY-2.CSV');
    expect(resultsPathFor(join(dir, 'payroll.results.csv')).path).toBe(join(dir, 'payroll.results.retry-4.csv'));
    expect(resultsPathFor(join(dir, 'payroll.results.retry-1.csv')).path).toBe(join(dir, 'payroll.results.retry-4.csv'));
    expect(resultsPathFor(join(dir, 'payroll.results.retry-3.xlsx'))).toEqual({
      path: join(dir, 'payroll.results.retry-4.xlsx'),
      format: 'xlsx',
    });
  });

  it('ignores other bases, locks and names that only start alike', () => {
    const dir = folder(
      'other.results.retry-7.csv',
      '.payroll.results.retry-5.csv.lock',
      'payroll.results.retry-9.csv.bak',
      'payroll.results.retry-x.csv',
      'payroll.results.retry-6.json',
    );
    expect(resultsPathFor(join(dir, 'payroll.results.csv')).path).toBe(join(dir, 'payroll.results.retry-1.csv'));
  });

  it('a partial retry output (a retry killed midway) is not a retry: the next retry takes its number', () => {
    expect(partialResultsPath(join('d', 'payroll.results.retry-1.csv'))).toBe(join('d', 'payroll.results.retry-1.partial.csv'));
    expect(partialResultsPath('out.xlsx')).toBe('out.partial.xlsx');
    const dir = folder('payroll.results.csv', 'payroll.results.retry-1.partial.csv', 'PAYROLL.RESULTS.RETRY-2.PARTIAL.XLSX');
    expect(resultsPathFor(join(dir, 'payroll.results.csv')).path).toBe(join(dir, 'payroll.results.retry-1.csv'));
  });

  it('keeps a batch its own results name, whatever is on disk (a resumed run updates the same file)', () => {
    const dir = folder('payroll.csv', 'payroll.results.csv', 'payroll.results.retry-1.csv');
    expect(resultsPathFor(join(dir, 'payroll.csv')).path).toBe(join(dir, 'payroll.results.csv'));
  });

  it('names the retry in a folder it cannot list as if it were empty', () => {
    expect(resultsPathFor(join(tmp.dir, 'missing', 'payroll.results.csv')).path).toBe(
      join(tmp.dir, 'missing', 'payroll.results.retry-1.csv'),
    );
  });
});

describe('the results format, from the writers (paths.ts RESULTS_WRITERS)', () => {
  it("follows the batch's format as read, else its extension; --results by its own extension", () => {
    expect(resultsPathFor('in/pay.txt')).toEqual({ path: join('in', 'pay.results.txt'), format: 'csv' });
    expect(resultsPathFor('in/pay.xls')).toEqual({ path: join('in', 'pay.results.xlsx'), format: 'xlsx' });
    expect(resultsPathFor('in/pay.dat')).toEqual({ path: join('in', 'pay.results.csv'), format: 'csv' });
    expect(resultsPathFor('in/pay.csv', undefined, { inputFormat: 'xlsx' })).toEqual({
      path: join('in', 'pay.results.xlsx'),
      format: 'xlsx',
    });
    expect(resultsPathFor('in/pay.xlsx', undefined, { inputFormat: 'csv' }).format).toBe('csv');
    expect(resultsPathFor('in/pay.csv', 'out.TSV')).toEqual({ path: 'out.TSV', format: 'csv' });
    expect(resultsPathFor('in/pay.csv', 'out.xlsx').format).toBe('xlsx');
  });

  it('refuses another --results extension, naming the formats (and what a workbook name is written as)', () => {
    expect(() => resultsPathFor('pay.csv', 'out.xls')).toThrow(
      '--results out.xls: name the results file .csv or .xlsx (results are written as .xlsx); the extension decides the format.',
    );
    expect(() => resultsPathFor('pay.csv', 'out.pdf')).toThrow('--results out.pdf: name the results file .csv or .xlsx; the extension');
  });
});

describe('the results of a sheet of its own', () => {
  it('name the sheet, with what a file name must not hold replaced, and retry under that name', () => {
    const dir = folder('pay.xlsx');
    expect(resultsPathFor(join(dir, 'pay.xlsx'), undefined, { sheet: 'Contractors' }).path).toBe(join(dir, 'pay.Contractors.results.xlsx'));
    expect(resultsPathFor(join(dir, 'pay.xlsx'), undefined, { sheet: '../x"<Q1>|' }).path).toBe(join(dir, 'pay..._x__Q1__.results.xlsx'));
    expect(resultsPathFor(join(dir, 'pay.Contractors.results.xlsx')).path).toBe(join(dir, 'pay.Contractors.results.retry-1.xlsx'));
  });
});

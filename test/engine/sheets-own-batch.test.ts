// Each sheet of a workbook is its own batch: two sheets of one file (the same bytes) never share a
// journal (whose header says which sheet `retry` reads again) nor, by default, a results file.
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import * as XLSX from 'xlsx';
import { afterEach, describe, expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { readResults } from '../../src/results/read.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, connectionTo, startSb, unattended } from '../ops/helpers.ts';
import { generateCsv, tempDirs, type GenOptions, retryResults } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-sheets-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

const sheetOf = (o: GenOptions) =>
  XLSX.utils.aoa_to_sheet(
    generateCsv(o)
      .trim()
      .split('\n')
      .map((l) => l.split(',')),
  );

/** pay.xlsx: Employees (first, its row 3 hidden) and Contractors, other references and amounts. */
async function workbook(dir: string): Promise<string> {
  const employees = sheetOf({ rows: 3, currencies: ['GBP'], prefix: 'EMP' });
  employees['!rows'] = [{}, {}, { hidden: true }];
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, employees, 'Employees');
  XLSX.utils.book_append_sheet(wb, sheetOf({ rows: 2, currencies: ['GBP'], prefix: 'CON', amount: (i) => `${50 + i}.00` }), 'Contractors');
  const file = join(dir, 'pay.xlsx');
  await writeFile(file, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);
  return file;
}

const rowsOf = async (path: string) =>
  (await readResults(path)).rows.map((r) => [r.cells.reference, r.result.errorCode ?? r.result.status]);

describe('two sheets of one workbook', () => {
  it('keep their own results files: the second sheet run never overwrites the first one', async () => {
    sb = await startSb();
    const file = await workbook(await dirs.make());
    const o = { conn: connectionTo(sb), ...unattended({ settleDelayMs: 10 }) };
    const employees = await runBatch({ file, sheet: 'Employees', ...o });
    const contractors = await runBatch({ file, sheet: 'Contractors', ...o });
    expect(await rowsOf(employees.resultsPath)).toEqual([
      ['EMP-0001', 'PENDING'],
      ['EMP-0002', 'HIDDEN_ROW'],
      ['EMP-0003', 'PENDING'],
    ]);
    expect(contractors.batchId).not.toBe(employees.batchId);
    expect(contractors.resultsPath).toBe(file.replace(/pay\.xlsx$/, 'pay.Contractors.results.xlsx'));
    expect(await rowsOf(contractors.resultsPath)).toEqual([
      ['CON-0001', 'PENDING'],
      ['CON-0002', 'PENDING'],
    ]);
  });

  it.each([
    ['', {}],
    [' under one --batch-id', { batchId: 'payroll-2025-01' }],
  ])("retry of the first sheet's results reads that sheet again, after a run of the other%s", async (_, label) => {
    sb = await startSb();
    const dir = await dirs.make();
    const file = await workbook(dir);
    const o = { conn: connectionTo(sb), ...unattended({ settleDelayMs: 10 }), ...label };
    const employees = await runBatch({ file, ...o, resultsPath: join(dir, 'employees.results.xlsx') });
    await runBatch({ file, sheet: 'Contractors', ...o });
    const retried = await retryResults({ resultsFile: employees.resultsPath, ...o });
    expect((await rowsOf(retried.resultsPath)).map(([, s]) => s)).toEqual(['PENDING', 'HIDDEN_ROW', 'PENDING']);
    expect((await allPayouts(sb)).map((p) => p.sourceAmount).sort()).toEqual([10, 12.02, 50, 51]);
  });
});

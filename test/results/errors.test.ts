import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as XLSX from 'xlsx';
import { readResults, ResultsError, RESULT_COLUMNS } from '../../src/results/results.ts';
import { BATCH_COLUMNS, tempDir } from './helpers.ts';

const tmp = tempDir('pb-results-err-');
afterAll(tmp.cleanup);

async function failure(p: string): Promise<ResultsError> {
  const e = await readResults(p).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ResultsError);
  const err = e as ResultsError;
  expect(err.name).toBe('ResultsError');
  expect(err.message).not.toContain('\n'); // one line for the user
  expect(err.message).not.toMatch(/\bat .*:\d+:\d+/); // no stack frames in the message
  return err;
}

describe('ResultsError', () => {
  it('NOT_A_RESULTS_FILE for a plain batch CSV, naming the file and the missing columns', async () => {
    const p = tmp.path('payroll.csv');
    writeFileSync(p, `${BATCH_COLUMNS.join(',')}\nPAY-1,100.00,EUR,EUR,DEU,SEPA,Zoë,EUR,DE89370400440532013000,,Salary,,CC\n`);
    const e = await failure(p);
    expect(e.code).toBe('NOT_A_RESULTS_FILE');
    expect(e.file).toBe(p);
    expect(e.message).toContain(p);
    // its documents column is the batch's own (files to upload), no result column
    expect(e.message).toContain(
      'has none of the result columns status and idempotencyKey (nor any other result column); it looks like a batch file',
    );
  });

  it('NOT_A_RESULTS_FILE for a plain batch workbook', async () => {
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([BATCH_COLUMNS, ['PAY-1', 100]]), 'Batch');
    const p = tmp.path('payroll.xlsx');
    writeFileSync(p, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);
    expect((await failure(p)).code).toBe('NOT_A_RESULTS_FILE');
  });

  it('names the required result column that is missing', async () => {
    const p = tmp.path('partial.csv');
    writeFileSync(p, `reference,${RESULT_COLUMNS.filter((c) => c !== 'idempotencyKey').join(',')}\nR1,PENDING\n`);
    const e = await failure(p);
    expect(e.code).toBe('NOT_A_RESULTS_FILE');
    expect(e.message).toContain('lacks the result column idempotencyKey');
  });

  it('reads a results file whose optional result columns were deleted', async () => {
    const p = tmp.path('lean.csv');
    writeFileSync(p, 'reference,status,idempotencyKey\nR1,FAILED,k1\n');
    const t = await readResults(p);
    expect(t.rows).toEqual([{ rowNumber: 2, cells: { reference: 'R1' }, result: { status: 'FAILED', idempotencyKey: 'k1' } }]);
  });

  it.each([
    ['FILE_NOT_FOUND', () => join(tmp.dir, 'nope.csv')],
    [
      'EMPTY_FILE',
      () => {
        const p = tmp.path('empty.csv');
        writeFileSync(p, '');
        return p;
      },
    ],
    [
      'EMPTY_FILE',
      () => {
        const p = tmp.path('blank.csv');
        writeFileSync(p, '\r\n,,\r\n');
        return p;
      },
    ],
    [
      'UNSUPPORTED_FORMAT',
      () => {
        const p = tmp.path('bin.csv');
        writeFileSync(p, Buffer.from([1, 2, 0, 3, 4, 5, 6, 7]));
        return p;
      },
    ],
    ['UNREADABLE', () => tmp.dir],
  ] as const)('%s', async (code, make) => {
    const p = make();
    const e = await failure(p);
    expect(e.code).toBe(code);
    expect(e.message).toContain(p);
  });

  it('rejects --encoding for a workbook and an unknown encoding', async () => {
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['status', 'idempotencyKey']]), 'R');
    const x = tmp.path('r.xlsx');
    writeFileSync(x, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);
    await expect(readResults(x, { encoding: 'utf-8' })).rejects.toMatchObject({ code: 'ENCODING' });
    const c = tmp.path('r.csv');
    writeFileSync(c, 'status,idempotencyKey\r\nPENDING,k\r\n');
    await expect(readResults(c, { encoding: 'ebcdic' })).rejects.toMatchObject({ code: 'ENCODING' });
    await expect(readResults(c, { sheet: 'x' })).rejects.toMatchObject({ code: 'UNSUPPORTED_FORMAT' });
  });
});

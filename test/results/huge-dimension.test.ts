// A results workbook whose sheet claims A1:XFD1048576 (17 billion cells) for a few rows: `retry`
// reads it by the cells present, as `validate` reads a batch, and does not walk the declared range.
// Nor does it stop at a range that claims less than the cells present (A1:B2 for three rows).
import { afterAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import * as XLSX from 'xlsx';
import { readResults, writeResults } from '../../src/results/results.ts';
import { xlsxWithDimension } from '../input/bad-input-files.ts';
import { readSheet, table, tempDir } from './helpers.ts';

const tmp = tempDir('pb-results-dimension-');
afterAll(tmp.cleanup);

describe('a results workbook that declares a range not its own', () => {
  for (const dimension of ['A1:XFD1048576', 'A1:B2'])
    it(`reads the rows present, the same as the workbook with its true range (it declares ${dimension})`, async () => {
      const truthful = tmp.path('results.xlsx');
      await writeResults(truthful, table('xlsx', 3));
      const rows = XLSX.utils.sheet_to_json<string[]>(readSheet(truthful), { header: 1, raw: false, defval: '' });
      const hostile = tmp.path('results-dimension.xlsx');
      writeFileSync(hostile, xlsxWithDimension(rows, dimension));

      const back = await readResults(hostile);
      const expected = await readResults(truthful);
      expect(back.rows).toHaveLength(3);
      expect(back.rows.map((r) => [r.rowNumber, r.cells, r.result.status, r.result.idempotencyKey])).toEqual(
        expected.rows.map((r) => [r.rowNumber, r.cells, r.result.status, r.result.idempotencyKey]),
      );
    });
});

// The additive change to src/results: statusDetail and informationRequests are written after the
// 14 result columns only when a row holds one, and read back; files without them are unchanged.
import { readFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RESULT_COLUMNS, readResults, writeResults, type ResultsTable } from '../../src/results/results.ts';

const table = (extra: Record<string, string> = {}): ResultsTable => ({
  format: 'csv',
  inputColumns: ['reference', 'sourceAmount'],
  rows: [
    { rowNumber: 2, cells: { reference: 'A', sourceAmount: '10.00' }, result: { status: 'PENDING', idempotencyKey: 'k1', ...extra } },
    { rowNumber: 3, cells: { reference: 'B', sourceAmount: '11.00' }, result: { status: 'SUCCESSFUL', idempotencyKey: 'k2' } },
  ],
});

describe('optional result columns', () => {
  it('are absent when no row holds them (the run layout is unchanged)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pb-ops-res-'));
    const p = join(dir, 'r.csv');
    await writeResults(p, table());
    const header = (await readFile(p, 'utf8')).replace(/^\uFEFF/, '').split('\r\n')[0]!;
    expect(header.split(',')).toEqual(['reference', 'sourceAmount', ...RESULT_COLUMNS]);
  });

  for (const format of ['csv', 'xlsx'] as const) {
    it(`are written after the result block and read back (${format})`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'pb-ops-res-'));
      const p = join(dir, `r.${format}`);
      const ir = JSON.stringify([{ title: 'Invoice', type: 'FILE', description: '=not a formula, "quoted"' }]);
      await writeResults(p, { ...table({ statusDetail: 'ADDITIONAL_INFO_UNDER_REVIEW', informationRequests: ir }), format });
      const back = await readResults(p);
      expect(back.inputColumns).toEqual(['reference', 'sourceAmount']);
      expect(back.rows[0]!.result.statusDetail).toBe('ADDITIONAL_INFO_UNDER_REVIEW');
      expect(back.rows[0]!.result.informationRequests).toBe(ir);
      expect(back.rows[1]!.result.statusDetail).toBeUndefined();
      if (format === 'csv') {
        const header = (await readFile(p, 'utf8')).replace(/^\uFEFF/, '').split('\r\n')[0]!;
        expect(header.split(',').slice(-2)).toEqual(['statusDetail', 'informationRequests']);
      }
    });
  }
});

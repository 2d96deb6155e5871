import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import iconv from 'iconv-lite';
import { writeResults, readResults, RESULT_COLUMNS } from '../../src/results/index.ts';
import { BATCH_COLUMNS, createdResult, csvLines, table, tempDir } from './helpers.ts';

const tmp = tempDir('pb-results-csv-');
afterAll(tmp.cleanup);

describe('CSV results', () => {
  it('is UTF-8 with a BOM and CRLF line endings', async () => {
    const p = tmp.path('r.csv');
    await writeResults(p, table('csv', 2));
    const bytes = readFileSync(p);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = bytes.toString('utf8');
    expect(text.endsWith('\r\n')).toBe(true);
    expect(text.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    expect(text).toContain('Zoë Müller 1');
  });

  it.each([',', ';', '\t', '|'])('keeps the input delimiter %j', async (d) => {
    const p = tmp.path('d.csv');
    await writeResults(p, table('csv', 2, d));
    expect(csvLines(p)[0]).toBe([...BATCH_COLUMNS, ...RESULT_COLUMNS].join(d));
    const back = await readResults(p);
    expect(back.delimiter).toBe(d);
    expect(back.rows).toHaveLength(2);
  });

  it('round-trips every cell, quoting delimiters, quotes and newlines', async () => {
    const t = table('csv', 3, ';');
    t.rows[0]!.cells.narration = 'a;b, "c"\r\nd\ne\rf';
    t.rows[1]!.cells.accountName = '  spaced  ';
    t.rows[2]!.result = { status: 'REJECTED', idempotencyKey: 'k', errorCode: 'INSUFFICIENT_FUNDS', errorMessage: 'Balance 10.00; needed "12.50"', requestId: 'r-1' };
    const p = tmp.path('q.csv');
    await writeResults(p, t);
    const back = await readResults(p);
    expect(back.format).toBe('csv');
    expect(back.inputColumns).toEqual(BATCH_COLUMNS);
    expect(back.rows).toEqual(t.rows);
  });

  it('writes an absent result value as an empty cell and reads it back as absent', async () => {
    const p = tmp.path('e.csv');
    await writeResults(p, { format: 'csv', inputColumns: ['reference'], rows: [{ rowNumber: 2, cells: { reference: 'R' }, result: { status: 'INVALID', errorMessage: '' } }] });
    expect(csvLines(p)[1]).toBe('R,INVALID' + ','.repeat(RESULT_COLUMNS.length - 1));
    expect((await readResults(p)).rows[0]!.result).toEqual({ status: 'INVALID' });
  });

  it('reads a results file re-saved by Excel as Windows-1252 with a sep= line', async () => {
    const original = tmp.path('orig.csv');
    await writeResults(original, table('csv', 1, ';'));
    const text = readFileSync(original, 'utf8').replace(/^\uFEFF/, '');
    const p = tmp.path('ansi.csv');
    writeFileSync(p, iconv.encode(`sep=;\r\n${text}`, 'windows-1252'));
    const back = await readResults(p);
    expect(back.delimiter).toBe(';');
    expect(back.rows[0]!.cells.accountName).toBe('Zoë Müller 1');
    expect(back.rows[0]!.result).toEqual(createdResult(1));
  });

  it('skips rows with every cell empty and keeps spreadsheet row numbers', async () => {
    const original = tmp.path('o.csv');
    await writeResults(original, table('csv', 2));
    const [header, r1, r2] = csvLines(original);
    const p = tmp.path('gaps.csv');
    writeFileSync(p, `${header}\r\n${r1}\r\n,,,\r\n\r\n${r2}\r\n`);
    const back = await readResults(p);
    expect(back.rows.map((r) => [r.rowNumber, r.cells.reference])).toEqual([[2, 'PAY-1'], [5, 'PAY-2']]);
  });
});

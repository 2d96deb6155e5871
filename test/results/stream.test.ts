// Issue 44: a results file is read a record at a time (the report and the check of another run's
// results hold no table of it): its first rows are handed out before the rest of the file is parsed.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { readResults, ResultsError, streamResults, writeResults } from '../../src/results/results.ts';
import { tempDir } from './helpers.ts';

const tmp = tempDir('pb-results-stream-');
afterAll(tmp.cleanup);

const ROWS = 3_000;

async function resultsWithBrokenEnd(): Promise<string> {
  const p = tmp.path('big.results.csv');
  await writeResults(p, {
    format: 'csv',
    inputColumns: ['reference', 'sourceAmount'],
    rows: Array.from({ length: ROWS }, (_, i) => ({
      rowNumber: i + 2,
      cells: { reference: `REF-${i + 2}`, sourceAmount: `${i}.50` },
      result: { status: 'PENDING', payoutId: `po-${i + 2}`, idempotencyKey: `pb3-${'0'.repeat(32)}-1` },
    })),
  });
  appendFileSync(p, '"REF-X,1.00,never closed\r\n');
  return p;
}

describe('a results file read as a stream (issue 44)', () => {
  it('hands out its first rows before the record that cannot be read at its end is parsed, then refuses it as readResults does', async () => {
    const p = await resultsWithBrokenEnd();
    const { inputColumns, rows } = await streamResults(p);
    expect(inputColumns).toEqual(['reference', 'sourceAmount']);
    const seen: number[] = [];
    const error = await (async () => {
      for await (const r of rows) seen.push(r.rowNumber);
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ResultsError);
    expect(error).toMatchObject({ code: 'MALFORMED_CSV', file: p });
    // (read whole, the parse would have failed before the first row)
    expect(seen.length).toBeGreaterThan(0);
    expect(seen).toEqual(Array.from({ length: seen.length }, (_, i) => i + 2));
    await expect(readResults(p)).rejects.toMatchObject({ code: 'MALFORMED_CSV' });
  });
});

describe('a results file read from the file, a piece at a time', () => {
  it('is read as the version opened, when a rewrite replaces it while it is read', async () => {
    const p = await resultsWithBrokenEnd();
    writeFileSync(p, readFileSync(p, 'utf8').replace(/"REF-X.*\r\n$/, ''));
    const { rows } = await streamResults(p);
    await writeResults(p, { format: 'csv', inputColumns: ['reference'], rows: [] });
    const seen: number[] = [];
    for await (const r of rows) seen.push(r.rowNumber);
    expect(seen).toEqual(Array.from({ length: ROWS }, (_, i) => i + 2));
  });
});

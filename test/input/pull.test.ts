// Rows read through validateBatch over many 64 KiB chunks: every row and file note, an early stop,
// and a broken record far into the file as a file error.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../../src/input/read-batch.ts';
import { validateBatch } from '../../src/validation/validation.ts';

const dir = mkdtempSync(join(tmpdir(), 'pb-pull-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = (content: string) => {
  const p = join(dir, `f${++n}.csv`);
  writeFileSync(p, content);
  return p;
};

const HEAD =
  'reference,sourceAmount,sourceCurrency,destinationCurrency,destinationCountryCode,method,accountName,accountCurrency,iban,narration,withdrawal';
const line = (i: number) => `R${i},${(i % 500) + 1}.00,EUR,EUR,DEU,SEPA,"Name, ${i}",EUR,DE89370400440532013000,"Pay ""${i}""",true`;

/** 6,000 rows over several chunks, with runs of blank rows here and there and a trailing total. */
function bigFile(): string {
  const lines = [HEAD];
  for (let i = 1; i <= 6000; i++) {
    lines.push(line(i));
    if (i % 1000 === 0) lines.push('', ',,,');
  }
  lines.push('Total,1234.00');
  return file(lines.join('\r\n') + '\r\n');
}

describe('rows read for validation', () => {
  it('are every row over many chunks, with each run of blank rows and the trailing total noted', async () => {
    const v = await validateBatch(bigFile(), { allowDuplicateRows: true });
    let rows = 0;
    for await (const r of v.rows) {
      expect(r.cells.reference).toBe(`R${++rows}`);
    }
    expect(rows).toBe(6000);
    expect(v.summary.rows).toBe(6000);
    expect(v.summary.skipped).toBe(6 * 2 + 1);
    const codes = v.fileProblems.map((p) => p.code);
    expect(codes.filter((c) => c === 'BLANK_ROWS')).toHaveLength(6);
    expect(codes.at(-1)).toBe('TOTALS_ROW');
  });

  it('stop early and release the file when the reader stops', async () => {
    const p = bigFile();
    const v = await validateBatch(p);
    let k = 0;
    for await (const r of v.rows) {
      expect(r.valid).toBe(true);
      if (++k === 10) break;
    }
    expect(k).toBe(10);
    await v.close();
  });

  it('turn a broken record far into the file into MALFORMED_CSV', async () => {
    const lines = [HEAD];
    for (let i = 1; i <= 3000; i++) lines.push(line(i));
    lines.push('R9999,"unclosed');
    const p = file(lines.join('\n') + '\n');
    const v = await validateBatch(p);
    let k = 0;
    const err = await (async () => {
      try {
        for await (const _ of v.rows) k++;
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).code).toBe('MALFORMED_CSV');
    expect(k).toBeLessThanOrEqual(3000);
  });
});

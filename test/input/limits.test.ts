// The size limits of the reader (src/input/size-limits.ts): a workbook too big or unpacking to too much
// (a zip bomb, its sizes declared or lied about) and a CSV record too long are refused with an
// InputError before they can take memory. The same files run through the CLI in the bad input
// campaign; their memory is measured by test/bench/bad-input-memory.ts.
import { afterAll, describe, expect, it } from 'vitest';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync, ftruncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readBatch, InputError, type RawRow } from '../../src/input/read-batch.ts';
import { MAX_EXCEL_FILE_BYTES, MAX_RECORD_BYTES, MAX_RECORD_CELLS } from '../../src/input/size-limits.ts';
import { zip, zipBomb } from './bad-input-files.ts';
import { HEADER, generateCsv } from '../engine/helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'pb-limits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = (content: string | Buffer, ext: string) => {
  const p = join(dir, `f${++n}${ext}`);
  writeFileSync(p, content);
  return p;
};

async function refusal(path: string): Promise<InputError> {
  try {
    const s = await readBatch(path);
    const rows: RawRow[] = [];
    for await (const r of s.rows) rows.push(r);
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return e as InputError;
  }
  return expect.unreachable('read without an error');
}

describe('size limits of workbooks', () => {
  it('refuses a zip bomb by the sizes it declares, without unpacking it', async () => {
    const p = file(zipBomb(400), '.xlsx');
    const e = await refusal(p);
    expect(e.code).toBe('TOO_LARGE');
    expect(e.message).toBe(`${p}: the workbook unpacks to more than 200 MB; save the sheet as CSV or split it.`);
    // Without unpacking it: the same declared sizes over bytes that do not inflate at all (a broken
    // deflate stream counts as what it gives, nothing) are refused the same way, so the refusal
    // comes from the sizes the zip declares.
    const declaredOnly = file(
      zip([
        { name: 'xl/worksheets/sheet1.xml', data: Buffer.alloc(0), deflated: Buffer.alloc(1024, 0xff), crc: 0, size: 400 * 1024 * 1024 },
      ]),
      '.xlsx',
    );
    const d = await refusal(declaredOnly);
    expect(d.code).toBe('TOO_LARGE');
    expect(d.message).toBe(`${declaredOnly}: the workbook unpacks to more than 200 MB; save the sheet as CSV or split it.`);
  });

  it('refuses a zip bomb that lies about its size (small or none declared) by unpacking it, counted', async () => {
    for (const declared of [1000, 0]) {
      const e = await refusal(file(zipBomb(300, declared), '.xlsx'));
      expect(e.code, String(declared)).toBe('TOO_LARGE');
      expect(e.message).toContain('unpacks to more than 200 MB');
    }
  });

  it('refuses one part that unpacks to over 200 times its size, declared or not, under the total', async () => {
    for (const declared of [undefined, 1000]) {
      const e = await refusal(file(zipBomb(50, declared), '.xlsx'));
      expect(e.code, String(declared)).toBe('TOO_LARGE');
      expect(e.message).toMatch(/part xl\/worksheets\/sheet1\.xml of the workbook unpacks to 50 MB from \d+ KB, over 200 times its size/);
    }
  });

  it('reads a workbook that compresses well but under the limits (the header row and 5 MB of spaces)', async () => {
    const s = await readBatch(file(zipBomb(5), '.xlsx'));
    expect(s.columns).toEqual(HEADER);
    await s.close();
  });

  it('refuses an Excel file over 50 MB unread', async () => {
    const p = join(dir, 'huge.xlsx');
    const fd = openSync(p, 'w');
    writeSync(fd, Buffer.from([0x50, 0x4b, 0x03, 0x04]));
    ftruncateSync(fd, MAX_EXCEL_FILE_BYTES + 1); // sparse: nothing written
    closeSync(fd);
    const e = await refusal(p);
    expect(e.code).toBe('TOO_LARGE');
    expect(e.message).toBe(`${p}: the workbook is 50 MB, over the 50 MB limit for Excel files; save the sheet as CSV or split it.`);
  });

  it('refuses a zip with no directory (cut short) as not a workbook', async () => {
    const b = zipBomb(1);
    const e = await refusal(file(b.subarray(0, b.length - 30), '.xlsx'));
    expect(e.code).toBe('UNSUPPORTED_FORMAT');
  });
});

describe('size limit of CSV records', () => {
  const valid = generateCsv({ rows: 3, prefix: 'L' });

  it('refuses a record over 1 MiB with its row number, quoted or not, UTF-8 or UTF-16', async () => {
    const big = 'a'.repeat(MAX_RECORD_BYTES + 10);
    for (const [content, what] of [
      [Buffer.from(valid + `L-9,"${big}"\n`), 'quoted'],
      [Buffer.from(valid + `L-9,${big}\n`), 'unquoted'],
      [Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(valid + `L-9,${big}\n`, 'utf16le')]), 'utf-16'],
    ] as const) {
      const p = file(content, '.csv');
      const e = await refusal(p);
      expect(e.code, what).toBe('MALFORMED_CSV');
      expect(e.message).toBe(`${p}: row 5: a record longer than 1 MB: is a quote missing?`);
      expect(e.row).toBe(5);
    }
  });

  it('refuses a first line over 1 MiB as row 1', async () => {
    const p = file('x'.repeat(2 * MAX_RECORD_BYTES), '.csv');
    expect((await refusal(p)).message).toBe(`${p}: row 1: a record longer than 1 MB: is a quote missing?`);
  });

  it('reads a record just under 1 MiB (the cell is then a row problem, not a file error)', async () => {
    const [head, first] = valid.split('\n');
    const cells = first!.split(',');
    cells[HEADER.indexOf('narration')] = 'n'.repeat(MAX_RECORD_BYTES - 4096);
    const s = await readBatch(file(`${head}\n${cells.join(',')}\n`, '.csv'));
    const rows: RawRow[] = [];
    for await (const r of s.rows) rows.push(r);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.cells.narration).toHaveLength(MAX_RECORD_BYTES - 4096);
  });
});

describe('cells per CSV record', () => {
  const valid = generateCsv({ rows: 3, prefix: 'W' });
  const rowsOf = async (p: string) => {
    const s = await readBatch(p);
    const rows: RawRow[] = [];
    for await (const r of s.rows) rows.push(r);
    return rows;
  };

  it(`reads a record of ${MAX_RECORD_CELLS.toLocaleString('en')} cells and refuses one more, with its row, UTF-8 or UTF-16`, async () => {
    for (const utf16 of [false, true]) {
      const enc = (t: string) => (utf16 ? Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(t, 'utf16le')]) : Buffer.from(t));
      const most = `W-9${','.repeat(MAX_RECORD_CELLS - 1)}\n`;
      const rows = await rowsOf(file(enc(valid + most), '.csv'));
      expect(rows, `utf-16: ${utf16}`).toHaveLength(4);
      expect(rows[3]!.extraCells ?? 0).toBe(0); // the cells past the header are empty
      const p = file(enc(valid + `W-9${','.repeat(MAX_RECORD_CELLS)}\n` + 'W-10,1\n'), '.csv');
      const e = await refusal(p);
      expect(e.code, `utf-16: ${utf16}`).toBe('MALFORMED_CSV');
      expect(e.message).toBe(`${p}: row 5: more than 16,384 cells (a spreadsheet's most columns): is the delimiter "," right?`);
      expect(e.row).toBe(5);
    }
  });

  it('refuses a line of delimiters cut across many reads, without a line end', async () => {
    const p = file(`${valid}W-9${','.repeat(4 * MAX_RECORD_CELLS)}`, '.csv');
    expect((await refusal(p)).message).toContain(': row 5: more than 16,384 cells');
  });

  it('does not count delimiters or line ends inside quotes (csv-parse reads them as text)', async () => {
    const [head, first] = valid.split('\n');
    const cells = first!.split(',');
    const text = 'a,\n'.repeat(MAX_RECORD_CELLS);
    cells[HEADER.indexOf('narration')] = `"${text}""b"""`;
    const rows = await rowsOf(file(`${head}\n${cells.join(',')}\nW-9,1\n`, '.csv'));
    expect(rows).toHaveLength(2);
    expect(rows[0]!.cells.narration).toBe(`${text}"b"`.trim());
    expect(rows[1]!.rowNumber).toBe(3);
  });
});

// Hostile workbooks and long files: the reader's work follows the cells present, not what the sheet
// declares, and Ctrl-C (SIGINT) stops `validate` and `run` in the middle of a big file with a clean
// message.
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, openSync, readdirSync, readlinkSync, rmSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as XLSX from 'xlsx';
import { readBatch, type RawRow } from '../../src/input/read-batch.ts';
import { openExcel } from '../../src/input/excel.ts';
import { collectBatch } from '../validation/collect.ts';
import { HEADER, cleanEnv, generateCsv, runCli } from '../engine/helpers.ts';
import { startSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { xlsxWithDimension } from './bad-input-files.ts';

const dir = mkdtempSync(join(tmpdir(), 'pb-stop-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rowsOf = (n: number, prefix = 'DIM') =>
  generateCsv({ rows: n, prefix })
    .trimEnd()
    .split('\n')
    .map((l) => l.split(','));

describe('a workbook is read by the cells it has', () => {
  it('a sheet declaring A1:XFD1048576 (17 billion cells) for 4 rows validates those rows', async () => {
    const p = join(dir, 'huge-dimension.xlsx');
    writeFileSync(p, xlsxWithDimension(rowsOf(4), 'A1:XFD1048576'));
    const r = await collectBatch(p);
    expect(r.rows.map((x) => x.rowNumber)).toEqual([2, 3, 4, 5]);
    expect(r.summary).toMatchObject({ rows: 4, valid: 4, invalid: 0 });
    expect(r.problems).toEqual([]);
  });

  it('a row with a cell in column XFD costs that cell, not 16,384, and the cell is still an extra cell', async () => {
    const rows = rowsOf(3).map((cells, i) => {
      const wide = [...cells];
      if (i > 0) wide[16_383] = 'stray'; // a sparse array: the cells between are holes
      return wide;
    });
    const buf = xlsxWithDimension(rows, 'A1:XFD4');
    const x = await openExcel(buf, 'wide.xlsx');
    const widths: number[] = [];
    for await (const rec of x.records) widths.push(rec.values.length);
    expect(widths).toEqual([HEADER.length, HEADER.length + 1, HEADER.length + 1, HEADER.length + 1]);
    const p = join(dir, 'wide.xlsx');
    writeFileSync(p, buf);
    const r = await collectBatch(p);
    expect(r.rows.map((x) => x.problems.map((q) => q.code))).toEqual([['EXTRA_CELLS'], ['EXTRA_CELLS'], ['EXTRA_CELLS']]);
  });

  it('rows shorter than the header, and a sheet starting below row 1, keep their cells in place', async () => {
    const [head, row] = rowsOf(1);
    const p = join(dir, 'offset.xlsx');
    // the dimension starts at A3: the header is row 3; the row's trailing empty cells are absent
    writeFileSync(p, xlsxWithDimension([[], [], head!, row!.slice(0, 7)], 'A3:AF4'));
    const s = await readBatch(p);
    const got: RawRow[] = [];
    for await (const x of s.rows) got.push(x);
    expect(got).toHaveLength(1);
    expect(got[0]!.rowNumber).toBe(4);
    expect(got[0]!.cells.reference).toBe(row![0]);
    expect(got[0]!.cells.accountName).toBe(row![6]);
    expect(got[0]!.cells.narration).toBe('');
  });

  it('gives the event loop a turn while rows are read (so that a signal is heard)', async () => {
    const ws = XLSX.utils.aoa_to_sheet(rowsOf(5000));
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, ws, 'S');
    const p = join(dir, 'turns.xlsx');
    writeFileSync(p, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);
    const s = await readBatch(p);
    let turns = 0;
    let reading = true;
    const tick = () => {
      turns++;
      if (reading) setImmediate(tick);
    };
    setImmediate(tick);
    let n = 0;
    for await (const _ of s.rows) n++;
    reading = false;
    expect(n).toBe(5000);
    expect(turns).toBeGreaterThanOrEqual(2);
    // Generous: SheetJS builds and the reader reads 5,000 rows, CPU-bound, on 2 shared cores.
  }, 60_000);
});

describe('Ctrl-C during validate', () => {
  it('stops a long validate with a message and exit 2, nothing else on stderr', async () => {
    const p = join(dir, 'long.csv');
    writeLongCsv(p);
    const r = await runCli(['validate', p, '--allow-duplicate-rows'], {
      cwd: dir,
      env: cleanEnv(),
      timeoutMs: 120_000,
      onSpawn: (child) => {
        let out = '';
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('Reading ') && child.exitCode === null && !child.killed) child.kill('SIGINT');
        });
      },
    });
    expect(r.signal).toBeNull();
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /^payout-batch: .*long\.csv: stopped \(Ctrl-C or SIGTERM\) (after row \d+|before the first row): the rest of the file was not checked\. \[STOPPED\]\n$/,
    );
    expect(r.stdout).not.toContain('Summary of');
    // Generous: writes a 40 MB file, then a child validates it (it is given 120 s) until the signal.
  }, 150_000);

  it.each([
    ['run', '--yes'],
    ['plan', '--no-quote'],
  ])(
    'stops a long %s while it reads the file: exit 130 (run) or 2 (plan), and not one request sent',
    async (command, flag) => {
      const p = join(dir, `long-${command}.csv`);
      writeLongCsv(p);
      const sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
      try {
        const r = await runCli([command, p, flag, '--allow-duplicate-rows', '--base-url', sb.url], {
          cwd: dir,
          env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }),
          timeoutMs: 120_000,
          // run prints nothing while it reads: the signal is sent once the child has the file open
          onSpawn: (child) => {
            const poll = setInterval(() => {
              if (child.exitCode !== null || child.killed) return clearInterval(poll);
              if (readingFile(child.pid!, p)) {
                clearInterval(poll);
                child.kill('SIGINT');
              }
            }, 20);
          },
        });
        expect(r.signal).toBeNull();
        // run's own exit code for a stop on request (130, issue 31); plan's is unusable input (2)
        expect(r.code, r.stderr).toBe(command === 'run' ? 130 : 2);
        expect(r.stderr).toMatch(/long-\w+\.csv: stopped \(Ctrl-C or SIGTERM\) at row \d+, before anything was sent\. \[STOPPED\]/);
        expect(sb.requestLog()).toHaveLength(0);
      } finally {
        await sb.close();
      }
      // Generous for the same reason as the test above.
    },
    150_000,
  );
});

/** The child has `path` open (Linux: /proc/PID/fd). */
function readingFile(pid: number, path: string): boolean {
  const fds = `/proc/${pid}/fd`;
  if (!existsSync(fds)) return false;
  try {
    return readdirSync(fds).some((fd) => {
      try {
        return readlinkSync(join(fds, fd)) === path;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/** 300,000 rows (about 40 MB): seconds to read, so a command is still reading when the signal comes. */
function writeLongCsv(p: string): void {
  const template = generateCsv({ rows: 1, prefix: 'LONG' }).trimEnd().split('\n')[1]!.split(',');
  const fd = openSync(p, 'w');
  try {
    writeSync(fd, HEADER.join(',') + '\n');
    const ref = HEADER.indexOf('reference');
    for (let start = 0; start < 300_000; start += 10_000) {
      const lines: string[] = [];
      for (let i = start; i < start + 10_000; i++) {
        template[ref] = `LONG-${i}`;
        lines.push(template.join(','));
      }
      writeSync(fd, lines.join('\n') + '\n');
    }
  } finally {
    closeSync(fd);
  }
}

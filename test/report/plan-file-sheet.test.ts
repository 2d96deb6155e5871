// `report PLAN` of a plan made from one sheet of a workbook reads that sheet of the batch for what the
// plan does not hold (corridors, methods, invalid rows), never the workbook's first sheet: both are the
// same file, so its sha256 alone cannot tell them apart.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as XLSX from 'xlsx';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { cleanEnv, generateCsv, KEY, runMain, tempDirs } from '../engine/helpers.ts';
import { startSb } from '../ops/helpers.ts';

let sb: LocalSandbox;
const dirs = tempDirs('pb-plan-sheet-');
beforeAll(async () => {
  sb = await startSb();
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

const sheetOf = (rows: number, prefix: string) =>
  XLSX.utils.aoa_to_sheet(
    generateCsv({ rows, currencies: ['GBP'], prefix })
      .trim()
      .split('\n')
      .map((l) => l.split(',')),
  );

it("reports a plan of a workbook's second sheet with that sheet's corridors, not the first sheet's", async () => {
  const dir = await dirs.make();
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, sheetOf(5, 'EMP'), 'Employees');
  XLSX.utils.book_append_sheet(wb, sheetOf(2, 'CON'), 'Contractors');
  await writeFile(join(dir, 'pay.xlsx'), XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);
  const env = cleanEnv({ PAYOUT_API_KEY: KEY });
  const plan = await runMain(
    ['plan', 'pay.xlsx', '--sheet', 'Contractors', '--out', 'pay.plan.json', '--no-report', '--base-url', sb.url],
    {
      cwd: dir,
      env,
    },
  );
  expect(plan.code, plan.stderr).toBe(0);
  const report = await runMain(['report', 'pay.plan.json'], { cwd: dir, env });
  expect(report.code, report.stderr).toBe(0);
  const html = await readFile(join(dir, 'pay.plan.html'), 'utf8');
  const corridorRows = [...html.matchAll(/<tr data-corridor="[^"]*">.*?data-field="rows" data-value="(\d+)"/g)].map((m) => Number(m[1]));
  expect(corridorRows.reduce((a, b) => a + b, 0)).toBe(2);
});

// A batch with its own `status` and `fee` columns, run and retried as a user does it (the CLI
// spawned against the sandbox over real HTTP): every header of the results file is unique (the
// batch's columns keep their names, the result columns are `result.status` and `result.fee`), in
// CSV and XLSX, and `retry` reads the batch's cells as batch data and the result columns as results.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as XLSX from 'xlsx';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { readResults, RESULT_COLUMNS } from '../../src/results/results.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { cleanEnv, generateCsv, initiates, runCli, runMain, tempDirs } from '../engine/helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-unique-columns-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

/** The header row of a results file as written. */
async function headerOf(path: string): Promise<string[]> {
  if (path.endsWith('.xlsx')) {
    const wb = XLSX.read(await readFile(path), { type: 'buffer' });
    return XLSX.utils.sheet_to_json<string[]>(wb.Sheets[wb.SheetNames[0]!]!, { header: 1 })[0]!;
  }
  const text = await readFile(path, 'utf8');
  return text.slice(1, text.indexOf('\r\n')).split(',');
}

/** The invalid currency EURO written EUR in a results file, CSV or XLSX. */
async function fixCurrency(path: string): Promise<void> {
  if (!path.endsWith('.xlsx')) return writeFile(path, (await readFile(path, 'utf8')).replace(',EURO,', ',EUR,'));
  const wb = XLSX.read(await readFile(path), { type: 'buffer', cellNF: true });
  const sheet = wb.Sheets[wb.SheetNames[0]!]!;
  for (const cell of Object.values(sheet)) if (typeof cell === 'object' && cell && 'v' in cell && cell.v === 'EURO') cell.v = 'EUR';
  await writeFile(path, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);
}

describe('results columns named apart from the batch columns', () => {
  it.each(['csv', 'xlsx'] as const)('run then retry of a batch with its own status and fee columns (%s)', async (format) => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    // three rows with the batch's own status and fee; the second one invalid (EURO), so retry has a row to try again
    const [head, ...lines] = generateCsv({ rows: 3, currencies: ['EUR'] })
      .trim()
      .split('\n');
    const own = [
      ['employee', '1.00'],
      ['contractor', ''],
      ['intern', '0.50'],
    ];
    const rows = lines.map((l, i) => `${i === 1 ? l.replace(',EUR,EUR,', ',EURO,EUR,') : l},${own[i]!.join(',')}`);
    await writeFile(join(dir, 'payroll.csv'), [`${head},status,fee`, ...rows].join('\n') + '\n');
    const batchColumns = [...head!.split(','), 'status', 'fee'];
    const expectedHeader = [...batchColumns, ...RESULT_COLUMNS.map((c) => (c === 'status' || c === 'fee' ? `result.${c}` : c))];
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
    const service = ['--base-url', sb.url, '--rate', '100'];
    const cli = (...args: string[]) => runCli([...args, ...service], { cwd: dir, env });

    const results = join(dir, `payroll.results.${format}`);
    // (the run the retry follows, by main() in this process; the retry is the process)
    const first = await runMain(['run', 'payroll.csv', '--yes', '--results', results, ...service], { cwd: dir, env });
    expect(first.code, first.stderr).toBe(1);
    expect(initiates(sb)).toHaveLength(2);
    expect(await headerOf(results)).toEqual(expectedHeader);
    const read = await readResults(results);
    expect(read.inputColumns).toEqual(batchColumns);
    expect(read.rows.map((r) => [r.cells.status, r.cells.fee])).toEqual(own);
    expect(read.rows.map((r) => r.result.status)).toEqual(['PENDING', 'INVALID', 'PENDING']);
    // the service's fee, not the batch's
    for (const i of [0, 2]) expect(read.rows[i]!.result.fee).toMatch(/^\d+\.\d{2}$/);
    expect(read.rows.map((r) => r.result.fee)).not.toEqual(own.map(([, fee]) => fee));

    // the invalid row fixed in the results file, as a user does, so the retry has news to write
    await fixCurrency(results);
    const retry = await cli('retry', results, '--yes');
    expect(retry.code, retry.stderr).toBe(0);
    const retried = join(dir, `payroll.results.retry-1.${format}`);
    expect(await headerOf(retried)).toEqual(expectedHeader);
    const back = await readResults(retried);
    expect(back.inputColumns).toEqual(batchColumns);
    const fixed = read.rows.map((r) => Object.fromEntries(Object.entries(r.cells).map(([k, v]) => [k, v === 'EURO' ? 'EUR' : v])));
    expect(back.rows.map((r) => r.cells)).toEqual(fixed);
    // created rows kept with their results, never sent again; the fixed row sent once
    expect(back.rows.map((r) => r.result.status)).toEqual(['PENDING', 'PENDING', 'PENDING']);
    for (const i of [0, 2]) expect(back.rows[i]!.result).toEqual(read.rows[i]!.result);
    expect(initiates(sb)).toHaveLength(3);
  });
});

// Issue 43 item 3: `run payroll.csv --base-url OTHER` replaced payroll.results.csv, the record of
// the payouts another service made (52 SUCCESSFUL became 52 PENDING of the other). A results file
// holding payouts this account's ledger does not know is another run's record: the run is refused
// before anything is sent, naming the file and `--results`; a run that resumes its own batch still
// updates its own file.
import { readFileSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as XLSX from 'xlsx';
import { afterEach, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { generateCsv, runMain, workDir, writeBatch } from '../engine/helpers.ts';
import { cleanEnv, paidBatch, startSb } from '../ops/helpers.ts';

const sandboxes: LocalSandbox[] = [];
afterEach(async () => {
  for (const s of sandboxes.splice(0)) await s.close();
});
const started = async () => {
  const s = await startSb();
  sandboxes.push(s);
  return s;
};
const initiates = (s: LocalSandbox) => s.requestLog().filter((r) => r.route === 'initiate').length;

describe("a results file of another service's run", () => {
  it('is never replaced: run against another service is refused, naming --results; its own run resumes over it', async () => {
    const [first, other] = [await started(), await started()];
    const { dir, file, results } = await paidBatch(first, { rows: 2, name: 'payroll.csv' });
    const record = readFileSync(results);
    const env = cleanEnv();
    const run = (s: LocalSandbox, ...more: string[]) => runMain(['run', file, '--base-url', s.url, '--yes', ...more], { cwd: dir, env });

    const refused = await run(other);
    expect(refused.code, refused.stderr + refused.stdout).toBe(3);
    expect(refused.stderr).toContain(`${results} holds 2 payouts this account's ledger does not know`);
    expect(refused.stderr).toContain(`--results ${join(dir, 'payroll-2.results.csv')}`);
    expect(initiates(other)).toBe(0);
    expect(readFileSync(results)).toEqual(record);

    // named apart, it runs; the first record stays as it was
    const apart = await run(other, '--results', join(dir, 'payroll-2.results.csv'));
    expect(apart.code, apart.stderr + apart.stdout).toBe(0);
    expect(initiates(other)).toBe(2);
    expect(readFileSync(results)).toEqual(record);

    // the batch's own service: the same run again, over its own results file (nothing sent twice)
    const before = initiates(first);
    const again = await run(first);
    expect(again.code, again.stderr + again.stdout).toBe(0);
    expect(initiates(first)).toBe(before);
  });

  // (a file read part way, then broken: ours are written whole, so it is not ours either)
  it('broken part way through is refused too, never replaced', async () => {
    const [first, other] = [await started(), await started()];
    const { dir, file, results } = await paidBatch(first, { rows: 2, name: 'payroll.csv' });
    const [header, ...rows] = readFileSync(results, 'utf8').trim().split('\n');
    // (past the reader's first chunk, where the break is met only while the rows are read)
    writeFileSync(results, [header, ...Array<string[]>(2000).fill(rows).flat(), '"an unclosed quote'].join('\n'));
    const record = readFileSync(results);

    const refused = await runMain(['run', file, '--base-url', other.url, '--yes'], { cwd: dir, env: cleanEnv() });
    expect(refused.code, refused.stderr + refused.stdout).toBe(3);
    expect(refused.stderr).toContain(`${results} is there and is not a results file`);
    expect(initiates(other)).toBe(0);
    // (Buffer.equals: toEqual compares these 600 KB byte by byte, seconds of CPU)
    expect(readFileSync(results).equals(record), 'the file is as it was').toBe(true);
  });
});

// A results file holding another batch's payouts (of this account's ledger) on rows this batch has
// none of is that batch's record, what its `retry` and `status` read: refused too, never replaced.
describe("a results file of another batch's run", () => {
  const rowsOf = (path: string) => readFileSync(path, 'utf8').trim().split('\n').slice(1);

  it('is never replaced by another batch (the same --results, or the same default name); its own batch still re-runs over it', async () => {
    const sb = await started();
    const dir = await workDir('pb-other-batch-');
    const a = await writeBatch(dir, 'a.csv', { rows: 2, currencies: ['GBP'], prefix: 'A' });
    const b = await writeBatch(dir, 'b.csv', { rows: 2, currencies: ['GBP'], prefix: 'B', amount: (i) => `${50 + i}.00` });
    const out = join(dir, 'out.csv');
    const run = (file: string, ...more: string[]) =>
      runMain(['run', file, '--base-url', sb.url, '--yes', '--results', out, ...more], { cwd: dir, env: cleanEnv() });
    expect((await run(a)).code).toBe(0);
    const record = readFileSync(out);

    const refused = await run(b);
    expect(refused.code, refused.stderr + refused.stdout).toBe(3);
    expect(refused.stderr).toContain(`${out} holds 2 payouts of another batch of this account, ${a}: its record`);
    expect(refused.stderr).toContain(`--results ${join(dir, 'out-2.csv')}`);
    expect(initiates(sb)).toBe(2);
    expect(readFileSync(out)).toEqual(record);

    // a's own run again, over its own results (nothing sent twice)
    const again = await run(a);
    expect(again.code, again.stderr + again.stdout).toBe(0);
    expect(rowsOf(out).map((l) => l.split(',')[0])).toEqual(['A-0001', 'A-0002']);
    expect(initiates(sb)).toBe(2);

    // two workbooks of one name (pay.xls and pay.xlsx) write one default results file: the second is refused
    const book = async (name: string, prefix: string, bookType: XLSX.BookType) => {
      const lines = generateCsv({ rows: 1, currencies: ['GBP'], prefix, amount: () => `${prefix.length}7.00` })
        .trim()
        .split('\n');
      const wb = XLSX.utils.book_new();
      XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(lines.map((l) => l.split(','))), 'Payees');
      await writeFile(join(dir, name), XLSX.write(wb, { type: 'buffer', bookType }) as Buffer);
      return runMain(['run', join(dir, name), '--base-url', sb.url, '--yes'], { cwd: dir, env: cleanEnv() });
    };
    expect((await book('pay.xlsx', 'X', 'xlsx')).code).toBe(0);
    const xlsxRecord = readFileSync(join(dir, 'pay.results.xlsx'));
    const xls = await book('pay.xls', 'XLS', 'biff8');
    expect(xls.code, xls.stderr + xls.stdout).toBe(3);
    expect(xls.stderr).toContain(`holds 1 payout of another batch of this account, ${join(dir, 'pay.xlsx')}`);
    expect(readFileSync(join(dir, 'pay.results.xlsx'))).toEqual(xlsxRecord);
    expect(initiates(sb)).toBe(3);
  });

  it('is never replaced by a retry of another batch --out it', async () => {
    const sb = await started();
    const dir = await workDir('pb-other-batch-');
    const a = await writeBatch(dir, 'a.csv', { rows: 2, currencies: ['GBP'], prefix: 'A', amount: (i) => (i ? '-5' : '10.00') });
    const b = await writeBatch(dir, 'b.csv', { rows: 2, currencies: ['GBP'], prefix: 'B', amount: (i) => `${50 + i}.00` });
    const cli = (...args: string[]) => runMain([...args, '--base-url', sb.url, '--yes'], { cwd: dir, env: cleanEnv() });
    await cli('run', a);
    expect((await cli('run', b)).code).toBe(0);
    const [aResults, bResults] = [join(dir, 'a.results.csv'), join(dir, 'b.results.csv')];
    writeFileSync(aResults, readFileSync(aResults, 'utf8').replace("A-0002,'-5,", 'A-0002,5.00,'));
    const record = readFileSync(bResults);

    const refused = await cli('retry', aResults, '--out', bResults);
    expect(refused.code, refused.stderr + refused.stdout).toBe(3);
    expect(refused.stderr).toContain(`${bResults} holds 2 payouts of another batch of this account, ${b}`);
    expect(refused.stderr).toContain(`--out ${join(dir, 'b-2.results.csv')}`);
    expect(readFileSync(bResults)).toEqual(record);
    expect(initiates(sb)).toBe(3);
  });
  it('--results or --out naming a file that is not a results file (another batch file): refused, the file as it was', async () => {
    const sb = await started();
    const dir = await workDir('pb-other-batch-');
    const a = await writeBatch(dir, 'a.csv', { rows: 2, currencies: ['GBP'], prefix: 'A' });
    const b = await writeBatch(dir, 'b.csv', { rows: 2, currencies: ['GBP'], prefix: 'B', amount: (i) => `${50 + i}.00` });
    const batchA = readFileSync(a);
    const cli = (...args: string[]) => runMain([...args, '--base-url', sb.url, '--yes'], { cwd: dir, env: cleanEnv() });

    const refused = await cli('run', b, '--results', a);
    expect(refused.code, refused.stderr + refused.stdout).toBe(3);
    expect(refused.stderr).toContain(`${a} is there and is not a results file`);
    expect(refused.stderr).toContain(`--results ${join(dir, 'a-2.csv')}`);
    expect(readFileSync(a)).toEqual(batchA);
    expect(initiates(sb)).toBe(0);
  });
});

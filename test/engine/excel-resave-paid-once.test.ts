// A paid CSV opened in Excel and saved as a workbook: Excel types "00301" and "0005407324931" as the numbers 301
// and 5407324931, so the re-saved row has another reference and another account number. Run again, it is the
// same payment: refused, never paid twice (found by test/chaos/input-fuzz.ts).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import * as XLSX from 'xlsx';
import { readResults } from '../../src/results/read.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, cleanEnv, runMain, tempDirs } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-resave-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

const HEADER = [
  'reference',
  'sourceAmount',
  'sourceCurrency',
  'destinationCurrency',
  'destinationCountryCode',
  'method',
  'accountName',
  'accountCurrency',
  'accountNumber',
  'swiftCode',
  'bankName',
  'beneficiaryCountry',
  'narration',
  'withdrawal',
];
const ROW = [
  '00301',
  '250.00',
  'GBP',
  'EUR',
  'DEU',
  'SWIFT',
  'Jonas Weber',
  'EUR',
  '0005407324931',
  'COBADEFFXXX',
  'Commerzbank',
  'DEU',
  'Invoice 301',
  'true',
];

it.each([
  ['another batch', []],
  ['the same --batch-id', ['--batch-id', 'payroll-jan']],
])('a paid row re-saved by Excel (reference and account number typed as numbers) is not paid again: %s', async (_, label) => {
  sb = await startSandbox({ rateLimitPerSecond: null, monthlyQuota: null });
  const dir = await dirs.make();
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const run = (file: string) => runMain(['run', file, ...label, '--base-url', sb!.url, '--yes', '--allow-partial'], { cwd: dir, env });
  await writeFile(join(dir, 'pay.csv'), [HEADER, ROW].map((r) => r.join(',')).join('\n') + '\n');
  const first = await run('pay.csv');
  expect(first.code, first.stdout + first.stderr).toBe(0);
  expect(await allPayouts(sb)).toHaveLength(1);

  const ws = XLSX.utils.aoa_to_sheet([HEADER, ROW]);
  ws.A2 = { t: 'n', v: 301 };
  ws.B2 = { t: 'n', v: 250 };
  ws.I2 = { t: 'n', v: 5407324931 };
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, ws, 'pay');
  await writeFile(join(dir, 'pay.xlsx'), XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);
  const again = await run('pay.xlsx');
  expect(again.code, again.stdout + again.stderr).toBe(1);
  expect(await allPayouts(sb)).toHaveLength(1);
  const [row] = (await readResults(join(dir, 'pay.results.xlsx'))).rows;
  expect(row!.result).toMatchObject({ status: 'INVALID', errorCode: 'PROBABLE_DUPLICATE' });
  expect(row!.result.errorMessage).toContain('00301');
});

it('of two payments to one payee of one amount (--allow-duplicate-rows), the one whose reference Excel changed is not paid again: the same --batch-id', async () => {
  sb = await startSandbox({ rateLimitPerSecond: null, monthlyQuota: null });
  const dir = await dirs.make();
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const run = (file: string) =>
    runMain(['run', file, '--batch-id', 'invoices', '--base-url', sb!.url, '--yes', '--allow-partial', '--allow-duplicate-rows'], {
      cwd: dir,
      env,
    });
  const second = ['INV-302', ...ROW.slice(1, -2), 'Invoice 302', 'true'];
  await writeFile(join(dir, 'pay.csv'), [HEADER, ROW, second].map((r) => r.join(',')).join('\n') + '\n');
  const first = await run('pay.csv');
  expect(first.code, first.stdout + first.stderr).toBe(0);
  expect(await allPayouts(sb)).toHaveLength(2);

  const ws = XLSX.utils.aoa_to_sheet([HEADER, ROW, second]);
  ws.A2 = { t: 'n', v: 301 };
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, ws, 'pay');
  await writeFile(join(dir, 'pay.xlsx'), XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);
  const again = await run('pay.xlsx');
  expect(await allPayouts(sb)).toHaveLength(2);
  expect(again.code, again.stdout + again.stderr).toBe(1);
  const [row] = (await readResults(join(dir, 'pay.results.xlsx'))).rows;
  expect(row!.result).toMatchObject({ status: 'INVALID', errorCode: 'PROBABLE_DUPLICATE' });
  expect(row!.result.errorMessage).toContain('00301');
});

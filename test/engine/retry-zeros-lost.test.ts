// A results file opened and saved by a spreadsheet loses the leading zeros of every identifier it
// took for a number, the digits past the 15th, the letters its encoding lacks; a value typed into
// it may become a date. A row retried from it must never go to the account those digits now name,
// nor under a name or reference the batch did not give it.
import { readFileSync, writeFileSync } from 'node:fs';

import iconv from 'iconv-lite';
import * as XLSX from 'xlsx';
import { afterEach, expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { readResults } from '../../src/results/read.ts';
import { writeResults } from '../../src/results/write.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, connectionTo, startSb, unattended } from '../ops/helpers.ts';
import { HEADER, refusingInitiates, tempDirs, retryResults } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-zeros-lost-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

const ach = (reference: string, account: string) => {
  const cells: Record<string, string> = {
    reference,
    sourceAmount: '25.00',
    sourceCurrency: 'USD',
    destinationCurrency: 'USD',
    destinationCountryCode: 'USA',
    method: 'ACH',
    accountName: 'James Carter',
    accountCurrency: 'USD',
    accountNumber: account,
    routingNumber: '121000248',
    accountType: 'checking',
    narration: 'Salary',
    withdrawal: 'true',
  };
  return HEADER.map((h) => cells[h] ?? '').join(',');
};

// the first attempt of every row refused by the service: nothing created
const refuse = refusingInitiates();

for (const batch of ['as it ran', 'edited since'])
  it(`a refused row whose account number lost its leading zeros in the results file is not sent, the batch file ${batch}; the row as written is`, async () => {
    sb = await startSb();
    const dir = await dirs.make();
    writeFileSync(`${dir}/pay.csv`, [HEADER.join(','), ach('ZL-1', '000123456789'), ach('ZL-2', '000987654321')].join('\n') + '\n');
    const run = await runBatch({ file: `${dir}/pay.csv`, conn: connectionTo(sb, refuse), ...unattended({ settleDelayMs: 10 }) });
    expect((await readResults(run.resultsPath)).rows.map((r) => r.result.status)).toEqual(['FAILED_TO_SEND', 'FAILED_TO_SEND']);
    // (edited since: the batch file no longer tells which digits its rows had; the journal still does)
    if (batch === 'edited since') writeFileSync(`${dir}/pay.csv`, readFileSync(`${dir}/pay.csv`, 'utf8').replace(/Salary/g, 'Wages'));

    // saved by a spreadsheet: row 2's account number read as a number (row 3 kept as text)
    const saved = readFileSync(run.resultsPath, 'utf8').replace(',000123456789,', ',123456789,');
    writeFileSync(run.resultsPath, saved);
    const retried = await retryResults({
      ...unattended({ settleDelayMs: 10 }),
      resultsFile: run.resultsPath,
      conn: connectionTo(sb),
    });
    const rows = (await readResults(retried.resultsPath)).rows;
    expect(rows.map((r) => r.result.status)).toEqual(['INVALID', 'PENDING']);
    expect(rows[0]!.result).toMatchObject({
      errorCode: 'EXCEL_LEADING_ZEROS_LOST',
      errorMessage: expect.stringMatching(/^accountNumber lost the 3 leading zeros/),
    });
    expect(JSON.stringify(await allPayouts(sb))).not.toContain('123456789,');
    expect(await allPayouts(sb)).toHaveLength(1);
  });

// Excel's "CSV (Comma delimited)" (in Windows-1250 on a Polish Windows), Excel for Mac's "Comma Separated Values"
for (const encoding of ['windows-1252', 'windows-1250', 'macintosh'])
  it(`a refused row whose account name a spreadsheet saved in ${encoding} is not sent under the name read back`, async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const polish = ach('ZE-1', '123456789').replace('James Carter', 'Łukasz Wójcik 王');
    writeFileSync(`${dir}/pay.csv`, [HEADER.join(','), polish, ach('ZE-2', '987654321')].join('\n') + '\n');
    const run = await runBatch({ file: `${dir}/pay.csv`, conn: connectionTo(sb, refuse), ...unattended({ settleDelayMs: 10 }) });
    expect((await readResults(run.resultsPath)).rows.map((r) => r.result.status)).toEqual(['FAILED_TO_SEND', 'FAILED_TO_SEND']);

    // saved by a spreadsheet in that encoding: a "?" for each character it lacks, read back as Windows-1252
    writeFileSync(run.resultsPath, iconv.encode(readFileSync(run.resultsPath, 'utf8').replace(/^\uFEFF/, ''), encoding));
    const retried = await retryResults({
      ...unattended({ settleDelayMs: 10 }),
      resultsFile: run.resultsPath,
      conn: connectionTo(sb),
    });
    const rows = (await readResults(retried.resultsPath)).rows;
    expect(rows.map((r) => r.result.status)).toEqual(['INVALID', 'PENDING']);
    // (read back as Windows-1252, "£ukasz" and "W—jcik" read like another code page: refused as such before any comparison)
    const why = encoding === 'windows-1252' ? /^accountName lost characters/ : /^"\S+ukasz W\S+jcik \?" reads like another code page/;
    expect(rows[0]!.result).toMatchObject({ errorCode: 'ENCODING', errorMessage: expect.stringMatching(why) });
    expect(await allPayouts(sb)).toHaveLength(1);
  });

it("an invalid row fixed in a spreadsheet that dropped its account number's leading zeros is not sent", async () => {
  sb = await startSb();
  const dir = await dirs.make();
  const invalid = ach('ZI-1', '0012345678').replace(',checking,', ',chequing,');
  writeFileSync(`${dir}/pay.csv`, [HEADER.join(','), invalid, ach('ZI-2', '987654321')].join('\n') + '\n');
  const run = await runBatch({ file: `${dir}/pay.csv`, conn: connectionTo(sb), ...unattended({ settleDelayMs: 10 }) });
  expect((await readResults(run.resultsPath)).rows.map((r) => r.result.status)).toEqual(['INVALID', 'PENDING']);

  // the account type fixed in a spreadsheet, which saved the account number as the number it read
  const saved = readFileSync(run.resultsPath, 'utf8').replace(',0012345678,', ',12345678,').replace(',chequing,', ',checking,');
  writeFileSync(run.resultsPath, saved);
  const retried = await retryResults({
    ...unattended({ settleDelayMs: 10 }),
    resultsFile: run.resultsPath,
    conn: connectionTo(sb),
  });
  const rows = (await readResults(retried.resultsPath)).rows;
  expect(rows.map((r) => r.result.status)).toEqual(['INVALID', 'PENDING']);
  expect(rows[0]!.result).toMatchObject({
    errorCode: 'EXCEL_LEADING_ZEROS_LOST',
    errorMessage: expect.stringMatching(/^accountNumber lost the 2 leading zeros/),
  });
  expect(await allPayouts(sb)).toHaveLength(1);
});

it('a refused row whose 16-digit account number a spreadsheet saved into the CSV as the 15 digits it keeps is not sent', async () => {
  sb = await startSb();
  const dir = await dirs.make();
  writeFileSync(`${dir}/pay.csv`, [HEADER.join(','), ach('DC-1', '1234567890123456'), ach('DC-2', '987654321')].join('\n') + '\n');
  const run = await runBatch({ file: `${dir}/pay.csv`, conn: connectionTo(sb, refuse), ...unattended({ settleDelayMs: 10 }) });
  expect((await readResults(run.resultsPath)).rows.map((r) => r.result.status)).toEqual(['FAILED_TO_SEND', 'FAILED_TO_SEND']);

  // the column shown as a number ("0") and saved as shown: the 16th digit became a zero
  writeFileSync(run.resultsPath, readFileSync(run.resultsPath, 'utf8').replace(',1234567890123456,', ',1234567890123450,'));
  const retried = await retryResults({
    ...unattended({ settleDelayMs: 10 }),
    resultsFile: run.resultsPath,
    conn: connectionTo(sb),
  });
  const rows = (await readResults(retried.resultsPath)).rows;
  expect(rows.map((r) => r.result.status)).toEqual(['INVALID', 'PENDING']);
  expect(rows[0]!.result).toMatchObject({
    errorCode: 'EXCEL_DIGITS_LOST',
    errorMessage: expect.stringMatching(/^accountNumber lost the digits after the 15th/),
  });
  expect(await allPayouts(sb)).toHaveLength(1);
});

it('a refused row whose 16-digit account number a spreadsheet stored as a number in the saved workbook is not sent', async () => {
  sb = await startSb();
  const dir = await dirs.make();
  writeFileSync(`${dir}/pay.csv`, [HEADER.join(','), ach('DL-1', '1234567890123456'), ach('DL-2', '987654321')].join('\n') + '\n');
  const run = await runBatch({ file: `${dir}/pay.csv`, conn: connectionTo(sb, refuse), ...unattended({ settleDelayMs: 10 }) });
  expect((await readResults(run.resultsPath)).rows.map((r) => r.result.status)).toEqual(['FAILED_TO_SEND', 'FAILED_TO_SEND']);

  // opened and saved as a workbook: row 2's account number became a number, of the 15 digits Excel keeps
  const saved = `${dir}/pay.results.xlsx`;
  await writeResults(saved, { ...(await readResults(run.resultsPath)), format: 'xlsx' });
  const wb = XLSX.read(readFileSync(saved), { dense: true });
  const data = (wb.Sheets[wb.SheetNames[0]!] as { '!data': XLSX.CellObject[][] })['!data'];
  data[1]![HEADER.indexOf('accountNumber')] = { t: 'n', v: 1234567890123450 };
  writeFileSync(saved, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);

  const retried = await retryResults({
    ...unattended({ settleDelayMs: 10 }),
    resultsFile: saved,
    conn: connectionTo(sb),
  });
  const rows = (await readResults(retried.resultsPath)).rows;
  expect(rows.map((r) => r.result.status)).toEqual(['INVALID', 'PENDING']);
  expect(rows[0]!.result.errorCode).toBe('EXCEL_DIGITS_LOST');
  expect(await allPayouts(sb)).toHaveLength(1);
});

it('a row fixed in the results workbook whose new reference Excel took for a date is not sent under that date', async () => {
  sb = await startSb();
  const dir = await dirs.make();
  writeFileSync(
    `${dir}/pay.csv`,
    [HEADER.join(','), ach('DT-1', '123456789').replace(',checking,', ',chequing,'), ach('DT-2', '987654321')].join('\n') + '\n',
  );
  const run = await runBatch({ file: `${dir}/pay.csv`, conn: connectionTo(sb), ...unattended({ settleDelayMs: 10 }) });
  expect((await readResults(run.resultsPath)).rows.map((r) => r.result.status)).toEqual(['INVALID', 'PENDING']);

  // in the results workbook the account type fixed and the reference typed again as "Jan-25": Excel stored a date
  const saved = `${dir}/pay.results.xlsx`;
  const table = await readResults(run.resultsPath);
  table.rows[0]!.cells.accountType = 'checking';
  await writeResults(saved, { ...table, format: 'xlsx' });
  const wb = XLSX.read(readFileSync(saved), { dense: true });
  const data = (wb.Sheets[wb.SheetNames[0]!] as { '!data': XLSX.CellObject[][] })['!data'];
  data[1]![HEADER.indexOf('reference')] = { t: 'n', v: 45658, z: 'mmm-yy' };
  writeFileSync(saved, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);

  const retried = await retryResults({
    ...unattended({ settleDelayMs: 10 }),
    resultsFile: saved,
    conn: connectionTo(sb),
  });
  const rows = (await readResults(retried.resultsPath)).rows;
  expect(rows.map((r) => [r.result.status, r.result.errorCode])).toEqual([
    ['INVALID', 'EXCEL_DATE'],
    ['PENDING', undefined],
  ]);
  expect(rows[0]!.result.errorMessage).toMatch(/formatted as a date \(shows "Jan-25"\)/);
  expect(await allPayouts(sb)).toHaveLength(1);
});

it('a workbook row refused for the digits Excel lost stays refused when retried untouched, the workbook fixed at its source since', async () => {
  sb = await startSb();
  const dir = await dirs.make();
  // row 2's account a number of 16 digits shown in full (format "0"): Excel kept 15 of them
  const ws = XLSX.utils.aoa_to_sheet([HEADER, ...[ach('DS-1', ''), ach('DS-2', '987654321')].map((l) => l.split(','))]);
  const cell = XLSX.utils.encode_cell({ r: 1, c: HEADER.indexOf('accountNumber') });
  ws[cell] = { t: 'n', v: 1234567890123450, z: '0' };
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, ws, 'Pay');
  writeFileSync(`${dir}/pay.xlsx`, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);
  const run = await runBatch({ file: `${dir}/pay.xlsx`, conn: connectionTo(sb), ...unattended({ settleDelayMs: 10 }) });
  expect((await readResults(run.resultsPath)).rows.map((r) => [r.result.status, r.result.errorCode])).toEqual([
    ['INVALID', 'EXCEL_DIGITS_LOST'],
    ['PENDING', undefined],
  ]);

  // the account typed again as text in the batch workbook; the results file retried as it is
  ws[cell] = { t: 's', v: '1234567890123456' };
  writeFileSync(`${dir}/pay.xlsx`, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);
  const retried = await retryResults({
    ...unattended({ settleDelayMs: 10 }),
    resultsFile: run.resultsPath,
    conn: connectionTo(sb),
  });
  expect((await readResults(retried.resultsPath)).rows.map((r) => [r.result.status, r.result.errorCode])).toEqual([
    ['INVALID', 'EXCEL_DIGITS_LOST'],
    ['PENDING', undefined],
  ]);
  expect(await allPayouts(sb)).toHaveLength(1);
});

// `retry` reads the batch file again to find its rows as the run judged them (an invalid row not
// edited since keeps its verdict): it must read the file as the run did, the sheet and the
// --encoding the run was given, or a row the run refused reads as new and is paid unedited.
import { join } from 'node:path';
import { readFile, writeFile } from 'node:fs/promises';
import iconv from 'iconv-lite';
import * as XLSX from 'xlsx';
import { afterEach, describe, expect, it } from 'vitest';
import { runBatch, type RunOptions } from '../../src/engine/pipeline.ts';
import { readResults } from '../../src/results/read.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, connectionTo, startSb, unattended } from '../ops/helpers.ts';
import { tempDirs, writeBatch, retryResults } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-retry-reads-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

/** Runs the batch as given, then retries its results unedited: each row's status, and the amounts paid. */
async function runThenRetry(file: string, reading: Pick<RunOptions, 'sheet' | 'encoding'>) {
  const o = { conn: connectionTo(sb!), ...unattended({ settleDelayMs: 10 }) };
  const run = await runBatch({ file, ...reading, ...o });
  const statuses = async (path: string) => (await readResults(path)).rows.map((r) => r.result.errorCode ?? r.result.status);
  const before = await statuses(run.resultsPath);
  const retried = await retryResults({ resultsFile: run.resultsPath, ...o });
  const paid = (await allPayouts(sb!)).map((p) => p.sourceAmount).sort();
  return { before, after: await statuses(retried.resultsPath), paid };
}

describe('retry of a batch run with --sheet or --encoding, its results unedited', () => {
  it('keeps a row the sheet hides refused (HIDDEN_ROW) when the payroll is not the first sheet', async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const csv = await readFile(await writeBatch(dir, 'pay.csv', { rows: 3, currencies: ['GBP'], prefix: 'RRS' }), 'utf8');
    const payroll = XLSX.utils.aoa_to_sheet(
      csv
        .trim()
        .split('\n')
        .map((l) => l.split(',')),
    );
    payroll['!rows'] = [{}, {}, { hidden: true }]; // row 3 hidden: never paid unseen
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['Payroll notes'], ['prepared by Alice']]), 'Notes');
    XLSX.utils.book_append_sheet(wb, payroll, 'Payroll');
    const file = join(dir, 'pay.xlsx');
    await writeFile(file, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer);

    const r = await runThenRetry(file, { sheet: 'Payroll' });
    expect(r.before).toEqual(['PENDING', 'HIDDEN_ROW', 'PENDING']);
    expect(r.after).toEqual(['PENDING', 'HIDDEN_ROW', 'PENDING']);
    expect(r.paid).toEqual([10, 12.02]);
  });

  it('keeps a row of extra cells refused (EXTRA_CELLS) in a windows-1250 file', async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const file = await writeBatch(dir, 'pay.csv', { rows: 3, currencies: ['GBP'], prefix: 'RRE' });
    const lines = (await readFile(file, 'utf8')).replace('Amelia Jones', 'Tomáš Dvořák').split('\n');
    lines[2] += ',a narration cut at its comma';
    await writeFile(file, iconv.encode(lines.join('\n'), 'windows-1250'));

    const r = await runThenRetry(file, { encoding: 'windows-1250' });
    expect(r.before).toEqual(['PENDING', 'EXTRA_CELLS', 'PENDING']);
    expect(r.after).toEqual(['PENDING', 'EXTRA_CELLS', 'PENDING']);
    expect(r.paid).toEqual([10, 12.02]);
  });
});

// A report replaces only a report: `report pay.csv --out pay.csv` (or --out naming a results file)
// never writes its HTML over the batch or the run's record; refused, naming the file, the file unchanged.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ExitCode } from '../../src/cli/exit-codes.ts';
import { writeReportOf } from '../../src/report/write-report.ts';
import { cleanEnv, runMain } from '../engine/helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'pb-report-out-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BATCH =
  'reference,sourceAmount,sourceCurrency,destinationCurrency,destinationCountryCode,method,accountName,accountCurrency,iban,narration\n' +
  'R-1,10.00,EUR,EUR,DEU,SEPA,Ann,EUR,DE89370400440532013000,pay\n';

it('refuses an --out that is the batch file, or another file that is no report', async () => {
  writeFileSync(join(dir, 'pay.csv'), BATCH);
  writeFileSync(join(dir, 'notes.txt'), 'my notes');
  for (const out of ['pay.csv', 'notes.txt']) {
    const before = readFileSync(join(dir, out), 'utf8');
    const r = await runMain(['report', 'pay.csv', '--out', out], { cwd: dir, env: cleanEnv() });
    expect(r.code).toBe(ExitCode.UNUSABLE_INPUT);
    expect(r.stderr).toContain(out);
    expect(readFileSync(join(dir, out), 'utf8')).toBe(before);
  }
  // a report there is replaced, as every run replaces its own
  const first = await writeReportOf('pay.csv', { dir, out: 'pay.html' });
  expect(first.kind).toBe('batch');
  await writeReportOf('pay.csv', { dir, out: 'pay.html' });
  expect(readFileSync(join(dir, 'pay.html'), 'utf8')).toMatch(/^<!doctype html>/);
});

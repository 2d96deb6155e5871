// `validate FILE --report FILE`: the problems report is never written over the batch it checks (the
// batch's rows would be lost); refused before reading, naming the flag, exit 2, the batch unchanged.
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ExitCode } from '../../src/cli/exit-codes.ts';
import { cleanEnv, runMain } from '../engine/helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'pb-validate-report-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BATCH =
  'reference,sourceAmount,sourceCurrency,destinationCurrency,destinationCountryCode,method,accountName,accountCurrency,iban,narration\n' +
  'R-1,10.00,EUR,EUR,DEU,SEPA,Ann,EUR,DE89370400440532013000,pay\n' +
  'R-2,x,EUR,EUR,DEU,SEPA,Bob,EUR,DE89370400440532013000,pay\n';

it('refuses a --report that names the batch file, by its name or through a link', async () => {
  writeFileSync(join(dir, 'pay.csv'), BATCH);
  symlinkSync(join(dir, 'pay.csv'), join(dir, 'link.csv'));
  for (const report of ['pay.csv', './pay.csv', 'link.csv']) {
    const r = await runMain(['validate', 'pay.csv', '--report', report, '--json'], { cwd: dir, env: cleanEnv() });
    expect(r.code).toBe(ExitCode.UNUSABLE_INPUT);
    expect(r.stderr).toContain(`--report ${report}`);
    expect(JSON.parse(r.stdout)).toMatchObject({ exitCode: ExitCode.UNUSABLE_INPUT });
    expect(readFileSync(join(dir, 'pay.csv'), 'utf8')).toBe(BATCH);
  }
  // another file is written as asked
  const ok = await runMain(['validate', 'pay.csv', '--report', 'problems.csv'], { cwd: dir, env: cleanEnv() });
  expect(ok.code).toBe(ExitCode.ROWS_FAILED);
  expect(readFileSync(join(dir, 'problems.csv'), 'utf8')).toContain('INVALID_AMOUNT');
});

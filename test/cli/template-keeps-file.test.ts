// `template` never writes over a file that is there: a template filled in with payouts (its default
// name again) or a batch named by mistake keeps its rows; the refusal names the file, exit 2.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ExitCode } from '../../src/cli/exit-codes.ts';
import { cleanEnv, runMain } from '../engine/helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'pb-template-keeps-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('refuses to write a template over an existing file, which keeps its bytes', async () => {
  const filled = join(dir, 'payout-template-all-methods.xlsx');
  const first = await runMain(['template', '--format', 'xlsx'], { cwd: dir, env: cleanEnv() });
  expect(first.code, first.stderr).toBe(ExitCode.OK);
  writeFileSync(filled, 'a workbook filled in with 200 payouts');
  const again = await runMain(['template', '--format', 'xlsx'], { cwd: dir, env: cleanEnv() });
  expect(again.code).toBe(ExitCode.UNUSABLE_INPUT);
  expect(again.stderr).toContain('payout-template-all-methods.xlsx');
  expect(readFileSync(filled, 'utf8')).toBe('a workbook filled in with 200 payouts');

  writeFileSync(join(dir, 'payroll.csv'), 'reference,sourceAmount\nR-1,10.00\n');
  const named = await runMain(['template', '--out', 'payroll.csv'], { cwd: dir, env: cleanEnv() });
  expect(named.code).toBe(ExitCode.UNUSABLE_INPUT);
  expect(readFileSync(join(dir, 'payroll.csv'), 'utf8')).toBe('reference,sourceAmount\nR-1,10.00\n');
});

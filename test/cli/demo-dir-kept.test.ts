// `demo --dir DIR` never writes over what DIR holds: a payroll of the sample's name (an edited copy of
// it, or an earlier demo's) or a documents folder is refused, named, before anything is copied or sent.
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ExitCode } from '../../src/cli/exit-codes.ts';
import { DemoRefused, runDemo } from '../../src/demo/tour.ts';
import { cleanEnv, runMain } from '../engine/helpers.ts';

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

it("refuses a --dir holding the sample's payroll or a documents folder, and leaves them as they are", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pb-demo-dir-'));
  dirs.push(dir);
  await writeFile(join(dir, 'payroll-2025-01.csv'), 'my own edited payroll');
  await expect(runDemo({ dir })).rejects.toBeInstanceOf(DemoRefused);
  expect(await readFile(join(dir, 'payroll-2025-01.csv'), 'utf8')).toBe('my own edited payroll');
  expect(await readdir(dir)).toEqual(['payroll-2025-01.csv']);

  const other = await mkdtemp(join(tmpdir(), 'pb-demo-dir-'));
  dirs.push(other);
  await mkdir(join(other, 'documents'));
  await writeFile(join(other, 'documents', 'invoice.pdf'), 'mine');
  const r = await runMain(['demo', '--dir', other], { cwd: other, env: cleanEnv() });
  expect(r.code).toBe(ExitCode.UNUSABLE_INPUT);
  expect(r.stderr).toContain(join(other, 'documents'));
  expect(r.stderr).not.toContain('unexpected error');
  expect(await readdir(join(other, 'documents'))).toEqual(['invoice.pdf']);
});

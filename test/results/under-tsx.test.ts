// The hand-run campaigns (test/chaos/) run the source under tsx, whose CommonJS interop gives a
// dynamically imported package no `default`: the ISO writer and the PDF merge must load there too.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { ROOT } from '../engine/helpers.ts';

it('writes an ISO 20022 file and merges a PDF when the source runs under tsx', async () => {
  const script = join(ROOT, 'test/results/lazy-libraries.ts');
  const pdf = join(ROOT, 'samples/documents', 'invoice-uk-c1.pdf');
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script, pdf], { cwd: ROOT });
  expect(JSON.parse(stdout)).toEqual({ xml: true, pdf: '%PDF-' });
});

// --metrics-file replaces only a metrics file (or writes a new one): a path naming the batch, its
// results or any other file by mistake keeps its bytes, and the log says why no metrics were written.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { signalsFor } from '../../src/signals/signals.ts';

const dir = mkdtempSync(join(tmpdir(), 'pb-metrics-kept-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('never writes its metrics over a file that is no metrics file; replaces its own', async () => {
  const lines: string[] = [];
  const logger = createLogger({ destination: { write: (l: string) => void lines.push(l) } });
  const batch = join(dir, 'payroll.csv');
  writeFileSync(batch, 'reference,sourceAmount\nR-1,10.00\n');
  await signalsFor({ metricsFile: batch }, 'run', logger).end({ exitCode: 0, failed: false, byStatus: { PENDING: 1 } });
  expect(readFileSync(batch, 'utf8')).toBe('reference,sourceAmount\nR-1,10.00\n');
  expect(lines.join('')).toMatch(/metrics file not written/);

  const prom = join(dir, 'payroll.prom');
  for (const exitCode of [1, 0]) await signalsFor({ metricsFile: prom }, 'run', logger).end({ exitCode, failed: exitCode !== 0 });
  expect(readFileSync(prom, 'utf8')).toMatch(/^payout_batch_exit_code\{source="payroll"\} 0$/m);
});

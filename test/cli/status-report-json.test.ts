// The --json document names the pain.002 it wrote by its path alone, its version apart: a script
// reads `statusReport` as the file to hand to the ERP.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { runMain } from '../engine/helpers.ts';
import { cleanEnv, KEY, paidBatch, startSb } from '../ops/helpers.ts';

let sb: LocalSandbox;
beforeAll(async () => {
  sb = await startSb({ monthlyQuota: null });
});
afterAll(() => sb?.close());

it('status --json --status-report gives the report path as statusReport, and its version apart', async () => {
  const { dir, results } = await paidBatch(sb, { rows: 1 });
  const r = await runMain(['status', results, '--json', '--status-report', 'erp.pain002.xml', '--base-url', sb.url], {
    cwd: dir,
    env: cleanEnv({ PAYOUT_API_KEY: KEY }),
  });
  const doc = JSON.parse(r.stdout) as { statusReport?: string; statusReportVersion?: string };
  expect(doc.statusReport).toBe(join(dir, 'erp.pain002.xml'));
  expect(existsSync(doc.statusReport!)).toBe(true);
  expect(doc.statusReportVersion).toBe('pain.002.001.03');
});

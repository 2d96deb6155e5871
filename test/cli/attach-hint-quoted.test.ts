// `attach --results FILE` says how to see the review later: a command naming FILE as one shell word,
// so that a results file named with a space is the one `status` reads when the line is copied.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { readResults } from '../../src/results/results.ts';
import { runMain } from '../engine/helpers.ts';
import { cleanEnv, paidBatch, sampleDoc, setStatus, startSb } from '../ops/helpers.ts';

let sb: LocalSandbox;
beforeAll(async () => {
  sb = await startSb({ monthlyQuota: null });
});
afterAll(() => sb?.close());

it('attach names a results file with a space in its hint as one word', async () => {
  const { dir, results, ids } = await paidBatch(sb, { rows: 1, currencies: ['GBP'], prefix: 'HINT' });
  await setStatus(sb, ids[0]!, 'ADDITIONAL_INFO_REQUIRED');
  copyFileSync(results, join(dir, 'jan payroll.results.csv'));
  const reference = (await readResults(results)).rows[0]!.cells.reference!;
  const r = await runMain(['attach', reference, sampleDoc(), '--results', 'jan payroll.results.csv', '--base-url', sb.url], {
    cwd: dir,
    env: cleanEnv(),
  });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain("See the review later with `payout-batch status 'jan payroll.results.csv'`");
});

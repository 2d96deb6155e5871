// A plan made with --allow-duplicate-rows holds both rows of one payee and amount: `run --plan` sends exactly
// it, never refuses it as a file "changed since the plan was made" (found by test/chaos/input-fuzz.ts).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, cleanEnv, HEADER, runMain, tempDirs } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-plan-dup-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

it('run --plan of a plan made with --allow-duplicate-rows sends both rows, as planned', async () => {
  sb = await startSandbox({ rateLimitPerSecond: null, monthlyQuota: null });
  const dir = await dirs.make();
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const sample = (await readFile(join(import.meta.dirname, '../../samples/payroll-2025-01.csv'), 'utf8')).split(/\r?\n/);
  const row = sample.find((l) => l.includes(',SEPA,'))!.split(',');
  const at = (c: string) => HEADER.indexOf(c);
  const rows = ['INV-1', 'INV-2'].map((ref) =>
    row.map((v, i) => (i === at('reference') ? ref : i === at('documents') ? '' : i === at('withdrawal') ? 'true' : v)).join(','),
  );
  await writeFile(join(dir, 'pay.csv'), [HEADER.join(','), ...rows].join('\n') + '\n');
  const plan = await runMain(['plan', 'pay.csv', '--allow-duplicate-rows', '--base-url', sb.url, '--out', 'pay.plan.json'], {
    cwd: dir,
    env,
  });
  expect(plan.code, plan.stdout + plan.stderr).toBe(0);
  const run = await runMain(['run', '--plan', 'pay.plan.json', '--base-url', sb.url, '--yes'], { cwd: dir, env });
  expect(run.code, run.stdout + run.stderr).toBe(0);
  expect(await allPayouts(sb)).toHaveLength(2);
});

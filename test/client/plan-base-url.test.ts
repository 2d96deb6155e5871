// `run --plan` with a --base-url the plan was not made for: refused, the URL named without the
// password or token a mistyped one may carry.
import { afterEach, expect, it } from 'vitest';
import { cleanEnv, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';

const dirs = tempDirs('pb-plan-base-url-');
afterEach(() => dirs.remove());

it('the refusal quotes neither the password nor the query of --base-url', async () => {
  const cwd = await dirs.make();
  const env = cleanEnv();
  await writeBatch(cwd, 'payroll.csv', { rows: 1 });
  const plan = await runMain(['plan', 'payroll.csv', '--out', 'p.json', '--env', 'local'], { cwd, env });
  expect(plan.code, plan.stderr).toBe(0);
  const url = 'http://u:PlanPassword42@127.0.0.1:1/?token=PlanToken4242';
  const r = await runMain(['run', '--plan', 'p.json', '--yes', '--base-url', url], { cwd, env });
  expect(r.code, r.stderr).toBe(3);
  expect(r.stderr).toContain('--base-url http://***@127.0.0.1:1/?***, but the plan was made for local');
  expect(r.stdout + r.stderr).not.toMatch(/PlanPassword42|PlanToken4242/);
});

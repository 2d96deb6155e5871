// `run --plan` takes the environment and base URL from the plan (issue 31, item 2): the command
// `plan` prints is run exactly as printed, with no connection flag and no $PAYOUT_BASE_URL, and a
// flag naming another service is refused (exit 3) before any request. The runs that pay are
// processes, as users run them; the refusals, not about a process, run main() in this process.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSeed, startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { cleanEnv, initiates, runCli, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';

let sb: LocalSandbox;
const dirs = tempDirs('pb-run-plan-env-');
beforeAll(async () => {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null, monthlyQuota: null });
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

describe('run --plan and the plan environment', () => {
  it('runs the printed hint on the service of the plan; --env or --base-url naming another is refused, nothing sent', async () => {
    const dir = await dirs.make();
    await writeBatch(dir, 'payroll.csv', { rows: 2, currencies: ['GBP'] });
    const inProcess = (...args: string[]) => runMain([...args, '--rate', '100'], { cwd: dir, env: cleanEnv() });
    // (the plan, and its printed hint, by main() in this process: the run as printed is the process)
    const plan = await runMain(['plan', 'payroll.csv', '--out', 'payroll.plan.json', '--base-url', sb.url, '--rate', '100'], {
      cwd: dir,
      env: cleanEnv(),
    });
    expect(plan.code, plan.stderr).toBe(0);
    const hint = /run it with `payout-batch ([^`]+)`/.exec(plan.stdout)?.[1];
    expect(hint).toBe('run --plan payroll.plan.json --yes');

    const otherEnv = await inProcess('run', '--plan', 'payroll.plan.json', '--yes', '--env', 'local');
    expect(otherEnv.code).toBe(3);
    expect(otherEnv.stderr).toMatch(/--env local, but the plan was made for custom .*127\.0\.0\.1/);
    const otherUrl = await inProcess('run', '--plan', 'payroll.plan.json', '--yes', '--base-url', 'http://127.0.0.1:9');
    expect(otherUrl.code).toBe(3);
    expect(otherUrl.stderr).toMatch(/--base-url http:\/\/127\.0\.0\.1:9, but the plan was made for/);
    expect(initiates(sb)).toHaveLength(0);

    // exactly as printed, with $PAYOUT_ENV naming another environment: the plan wins over it
    const run = await runCli([...hint!.split(' '), '--rate', '100'], { cwd: dir, env: cleanEnv({ PAYOUT_ENV: 'sandbox' }) });
    expect(run.code, run.stderr).toBe(0);
    expect(initiates(sb)).toHaveLength(2);
    // the same base URL spelt another way is the same account: agreed, and nothing is paid twice (by main() in this process)
    const again = await runMain(
      ['run', '--plan', 'payroll.plan.json', '--yes', '--base-url', sb.url.replace('127.0.0.1', 'localhost'), '--rate', '100'],
      {
        cwd: dir,
        env: cleanEnv(),
      },
    );
    expect(again.code, again.stderr).toBe(0);
    expect(initiates(sb)).toHaveLength(2);
  });
});

it('a production plan pays only with --env production on the command line, as a run without a plan does', async () => {
  const seed = defaultSeed();
  seed.businesses[0]!.keys = ['acme_unlabelled_key_0123456789']; // (a key whose prefix names no environment)
  const prod = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null, monthlyQuota: null, seed });
  try {
    const dir = await dirs.make();
    await writeBatch(dir, 'payroll.csv', { rows: 1, currencies: ['USD'] });
    const env = cleanEnv({ PAYOUT_API_KEY: 'acme_unlabelled_key_0123456789', PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
    const cli = (...args: string[]) => runCli([...args, '--rate', '100'], { cwd: dir, env });
    const inProcess = (...args: string[]) => runMain([...args, '--rate', '100'], { cwd: dir, env });
    const plan = await runMain(
      ['plan', 'payroll.csv', '--out', 'payroll.plan.json', '--env', 'production', '--base-url', prod.url, '--rate', '100'],
      { cwd: dir, env },
    );
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('run it with `payout-batch run --plan payroll.plan.json --env production --yes`');
    const unnamed = await inProcess('run', '--plan', 'payroll.plan.json', '--yes');
    expect(unnamed.code).toBe(3);
    expect(unnamed.stderr).toContain('the plan pays in production: name it on the command line (--env production)');
    expect(initiates(prod)).toHaveLength(0);
    const named = await cli('run', '--plan', 'payroll.plan.json', '--env', 'production', '--yes');
    expect(named.code, named.stderr).toBe(0);
    expect(initiates(prod)).toHaveLength(1);
  } finally {
    await prod.close();
  }
});

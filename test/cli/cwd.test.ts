// main(argv, io) reads and writes every path a command is given relative to io.cwd, never to the
// process's folder: the bin passes process.cwd(), a test running main() in its worker another folder.
import { existsSync } from 'node:fs';
import { copyFile, cp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { cleanEnv, KEY, ROOT, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';
import { startSb } from '../ops/helpers.ts';
import { packageJson } from '../../src/package-root.ts';

let sb: LocalSandbox;
const dirs = tempDirs('pb-cwd-');
beforeAll(async () => {
  sb = await startSb();
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

it('every command reads and writes the relative paths it is given in io.cwd, not in the process folder', async () => {
  const dir = await dirs.make();
  expect(process.cwd()).not.toBe(dir);
  await writeBatch(dir, 'payroll.csv', { rows: 2, currencies: ['GBP'], prefix: 'CWD' });
  await writeBatch(dir, 'second.csv', { rows: 1, currencies: ['GBP'], prefix: 'CWD2', amount: () => '77.00' });
  await cp(join(ROOT, 'samples/sanctions'), join(dir, 'lists'), { recursive: true });
  await copyFile(join(ROOT, 'samples/documents/invoice-uk-c1.pdf'), join(dir, 'invoice.pdf'));
  const env = cleanEnv({ PAYOUT_BASE_URL: sb.url, PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const cli = async (code: number, ...args: string[]) => {
    const r = await runMain(args, { cwd: dir, env });
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(code);
    return r;
  };
  const made = (name: string) => expect(existsSync(join(dir, name)), name).toBe(true);

  // the key file of $PAYOUT_API_KEY_FILE read in io.cwd (the variables' key is not the sandbox's: taken, it would be refused)
  await writeFile(join(dir, 'acme.key'), `${KEY}\n`, { mode: 0o600 });
  const keyed = { ...env, PAYOUT_API_KEY: 'sk_sandbox_not_this_one_0123456789', PAYOUT_API_KEY_FILE: 'acme.key' };
  const account = await runMain(['account'], { cwd: dir, env: keyed });
  expect(account.code, account.stderr).toBe(0);

  const v = await cli(0, 'validate', 'payroll.csv', '--report', 'problems.csv');
  expect(v.stdout).toContain('Summary of payroll.csv'); // (named as given)
  made('problems.csv');
  const missing = await cli(2, 'validate', 'nowhere.csv');
  expect(missing.stderr).toContain('nowhere.csv: no such file.');
  expect((await cli(0, 'screen', 'payroll.csv', '--sanctions-list', 'lists/sdn.csv')).stdout).toContain('payees of payroll.csv');

  await cli(0, 'plan', 'payroll.csv', '--out', 'payroll.plan.json');
  made('payroll.plan.json');
  made('payroll.plan.html');
  await cli(0, 'report', 'payroll.plan.json', '--out', 'again.plan.html');
  made('again.plan.html');
  await cli(0, 'run', '--plan', 'payroll.plan.json', '--yes', '--results', 'paid.csv', '--status-report', 'paid.pain002.xml');
  made('paid.csv');
  made('paid.pain002.xml');
  await cli(0, 'run', 'second.csv', '--yes');
  made('second.results.csv');

  await cli(5, 'status', 'paid.csv');
  await cli(0, 'report', 'paid.csv');
  made('paid.html');
  await cli(0, 'retry', 'paid.csv', '--yes', '--out', 'paid.retry.csv');
  const reconciled = await runMain(['reconcile', 'paid.csv', '--statement', 'paid.camt053.xml'], { cwd: dir, env });
  expect(reconciled.stderr).not.toMatch(/no such file|ENOENT/);
  made('paid.reconciliation.csv');
  made('paid.camt053.xml');
  const attached = await cli(0, 'attach', 'CWD-0001', 'invoice.pdf', '--results', 'paid.csv');
  expect(attached.stdout).toContain('Attached 1 document');

  // the sandbox's seed file read (not found, it would say it cannot be read), the demo's folder made here
  await writeFile(join(dir, 'seed.json'), '{');
  expect((await cli(2, 'sandbox', '--seed', 'seed.json')).stderr).toContain(`bad seed file ${join(dir, 'seed.json')}: is not valid JSON`);
  await cli(0, 'demo', '--dir', 'tour', '--json', '--rate', '200');
  made('tour/payroll-2025-01.csv');
});

it("the demo reads no key of the user's: neither the process's variables nor a key file, in io.cwd or the process's folder", async () => {
  const dir = await dirs.make();
  const theirs = 'sk_sandbox_not_the_demos_0123456789';
  await writeFile(join(dir, 'mine.key'), `${theirs}\n`, { mode: 0o600 });
  // (the process's own variables, which main() was not given: a relative key file there, and a key the throwaway sandbox refuses)
  vi.stubEnv('PAYOUT_API_KEY_FILE', 'nowhere.key');
  vi.stubEnv('PAYOUT_API_KEY', theirs);
  try {
    for (const env of [cleanEnv({ PAYOUT_API_KEY_FILE: 'mine.key' }), cleanEnv({ PAYOUT_API_KEY: theirs })]) {
      const r = await runMain(['demo', '--json', '--rate', '200'], { cwd: dir, env });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ first: { exitCode: 0 }, replay: { initiatesSent: 0 }, balancesMatch: true });
    }
  } finally {
    vi.unstubAllEnvs();
  }
});

it('--help and --version are written to io.stdout, and main() returns: yargs neither prints to the process nor exits it', async () => {
  const dir = await dirs.make();
  const env = cleanEnv();
  const version = await runMain(['--version'], { cwd: dir, env });
  expect([version.code, version.stdout, version.stderr]).toEqual([0, `${packageJson().version}\n`, '']);
  const help = await runMain(['run', '--help'], { cwd: dir, env });
  expect(help.code).toBe(0);
  expect(help.stdout).toMatch(/^payout-batch run \[file\]\n/);
  expect(help.stdout).toContain('--expect-rows');
  expect(help.stderr).toBe('');
});

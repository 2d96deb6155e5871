// `run --json` prints one document on stdout however the run ends: also when the engine refuses the
// batch or cannot read it, or the connection fails (a script reading `.exitCode` never gets an empty stdout);
// so does every other command taking --json that ends on an error.
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { cleanEnv, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';
import { startSb } from '../ops/helpers.ts';

const SDN = join(import.meta.dirname, '../../samples/sanctions/sdn.csv');
let sb: LocalSandbox;
const dirs = tempDirs('pb-json-errors-');
beforeAll(async () => {
  sb = await startSb();
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

describe('run --json when the engine says no', () => {
  it('a batch file not there (exit 2) and a batch refused by the ledger (exit 3): the document says so', async () => {
    const dir = await dirs.make();
    const cli = (...args: string[]) =>
      runMain(['run', ...args, '-y'], { cwd: dir, env: cleanEnv({ PAYOUT_BASE_URL: sb.url, PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }) });
    const missing = await cli(join(dir, 'missing.csv'), '--json');
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.stdout)).toEqual({ exitCode: 2, error: expect.stringContaining('no such file') as string });

    await writeBatch(dir, 'payroll.csv', { rows: 1, currencies: ['GBP'], prefix: 'JSONERR' });
    expect((await cli(join(dir, 'payroll.csv'))).code).toBe(0);
    await copyFile(join(dir, 'payroll.csv'), join(dir, 'copy.csv'));
    const again = await cli(join(dir, 'copy.csv'), '--json');
    expect(again.code).toBe(3);
    expect(JSON.parse(again.stdout)).toEqual({ exitCode: 3, refused: [expect.stringContaining('same content as') as string] });
  });
});

describe('run and retry --json when the connection fails', () => {
  it.each([
    [['--key-file', 'no-such-key'], 2, 'cannot read key file'],
    [['--ledger', 'postgres://payout@127.0.0.1:1/nowhere'], 4, 'cannot be reached'],
  ])('run %j, an error thrown before the run (exit %i): the document says so', async (flags, exitCode, said) => {
    const dir = await dirs.make();
    const file = await writeBatch(dir, 'payroll.csv', { rows: 1, currencies: ['GBP'], prefix: 'JSONCONN' });
    const r = await runMain(['run', file, '-y', '--json', ...flags], {
      cwd: dir,
      env: cleanEnv({ PAYOUT_BASE_URL: sb.url, PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }),
    });
    expect(r.code, r.stderr).toBe(exitCode);
    expect(JSON.parse(r.stdout)).toEqual({ exitCode, error: expect.stringContaining(said) as string });
  });

  it.each([
    ['run --json', ['run', 'payroll.csv', '-y', '--json']],
    ['ledger status', ['ledger', 'status']],
    // (neither opens the ledger: no service to screen for, a batch file to report on, not a batch id)
    ['screen, no service', ['screen', 'payroll.csv', '--env', 'local', '--sanctions-list', SDN]],
    ['report of a batch file', ['report', 'payroll.csv']],
  ])(
    '%s with a password in --ledger: refused (exit 2) before connecting, saying where to put it, the password nowhere',
    async (_, command) => {
      const dir = await dirs.make();
      await writeBatch(dir, 'payroll.csv', { rows: 1, currencies: ['GBP'], prefix: 'JSONPW' });
      const env = cleanEnv({ PAYOUT_BASE_URL: sb.url, PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
      for (const url of ['postgres://payout:Sekrit-pw@127.0.0.1:1/team', 'postgres://payout@127.0.0.1:1/team?password=Sekrit-pw']) {
        const args = command.map((a) => (a === 'payroll.csv' ? join(dir, a) : a));
        const r = await runMain([...args, '--ledger', url], { cwd: dir, env });
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toMatch(/--ledger takes no password \(other users see it in ps\): use PGPASSWORD/);
        if (command.includes('--json')) expect(JSON.parse(r.stdout)).toMatchObject({ exitCode: 2 });
        expect(r.stdout + r.stderr).not.toContain('Sekrit');
      }
    },
  );

  it('retry --resend-failed, the key refused while a failed row is checked (exit 4): the document says so', async () => {
    const dir = await dirs.make();
    const env = cleanEnv({ PAYOUT_BASE_URL: sb.url, PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
    await writeBatch(dir, 'payroll.csv', { rows: 1, currencies: ['GBP'], prefix: 'JSONREQ' });
    expect((await runMain(['run', join(dir, 'payroll.csv'), '-y'], { cwd: dir, env })).code).toBe(0);
    const results = join(dir, 'payroll.results.csv');
    await writeFile(results, (await readFile(results, 'utf8')).replace(',PENDING,', ',FAILED,'));
    const r = await runMain(['retry', results, '-y', '--json', '--resend-failed'], {
      cwd: dir,
      env: { ...env, PAYOUT_API_KEY: 'sk_sandbox_revoked_0123456789' },
    });
    expect(r.code, r.stderr).toBe(4);
    expect(JSON.parse(r.stdout)).toEqual({ exitCode: 4, error: expect.stringContaining('refused the API key') as string });
  });
});

describe('every command taking --json, ended by an error', () => {
  it.each([
    ['validate', ['validate', 'missing.csv'], 'no such file'],
    ['screen', ['screen', 'missing.csv', '--sanctions-list', SDN], 'no such file'],
    ['status', ['status', 'missing.results.csv'], 'no such file'],
    ['reconcile', ['reconcile', 'missing.results.csv'], 'no such file'],
    ['watch', ['watch', 'no-folder', '--once'], 'cannot read the configuration'],
    ['attach', ['attach', '3f8a1c2e-0000-4000-8000-000000000000', 'missing.pdf'], 'does not exist'],
    ['policy', ['policy', 'apply', 'missing.json'], 'missing.json'],
    ['ledger', ['ledger', 'status'], 'needs --ledger'],
  ])('%s: one document on stdout, its exit code and the error', async (_, args, said) => {
    const dir = await dirs.make();
    const r = await runMain([...args, '--json'], {
      cwd: dir,
      env: cleanEnv({ PAYOUT_BASE_URL: sb.url, PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }),
    });
    expect(r.code, r.stderr).toBe(2);
    const doc = JSON.parse(r.stdout) as { exitCode: number };
    expect(doc.exitCode).toBe(2);
    expect(JSON.stringify(doc)).toContain(said);
  });

  it('reconcile --statement over a period with no movement of the batch (exit 2): the document says so', async () => {
    const dir = await dirs.make();
    const env = cleanEnv({ PAYOUT_BASE_URL: sb.url, PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
    await writeBatch(dir, 'payroll.csv', { rows: 1, currencies: ['GBP'], prefix: 'JSONSTMT' });
    expect((await runMain(['run', join(dir, 'payroll.csv'), '-y'], { cwd: dir, env })).code).toBe(0);
    const period = ['--since', '2030-01-01', '--until', '2030-01-02'];
    const r = await runMain(['reconcile', 'payroll.results.csv', '--json', '--no-report', '--statement', 'st.xml', ...period], {
      cwd: dir,
      env,
    });
    expect(r.code, r.stderr).toBe(2);
    expect(JSON.parse(r.stdout)).toEqual({ exitCode: 2, error: expect.stringContaining('no wallet transaction of the period') as string });
  });

  it('attach, the key refused (exit 4): the document says so', async () => {
    const dir = await dirs.make();
    await writeFile(join(dir, 'invoice.pdf'), '%PDF-1.4\n%%EOF\n');
    const r = await runMain(['attach', '3f8a1c2e-0000-4000-8000-000000000000', 'invoice.pdf', '--json'], {
      cwd: dir,
      env: cleanEnv({
        PAYOUT_BASE_URL: sb.url,
        PAYOUT_BATCH_STATE_DIR: join(dir, 'state'),
        PAYOUT_API_KEY: 'sk_sandbox_revoked_0123456789',
      }),
    });
    expect(r.code, r.stderr).toBe(4);
    expect(JSON.parse(r.stdout)).toEqual({ exitCode: 4, error: expect.stringContaining('refused the API key') as string });
  });
});

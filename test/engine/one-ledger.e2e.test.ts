// Issue 26: one ledger per account however its URL is written, and a state folder no other user
// can change. The CLI against the sandbox over real HTTP, as a user runs it.
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultStateDir } from '../../src/client/quota.ts';
import { accountOf } from '../../src/ledger/account-ledger.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { allPayouts, cleanEnv, initiates, runCli, runMain, tempDirs, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-one-ledger-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

describe('accountOf: one account however the base URL is spelled', () => {
  it('treats loopback aliases, case, a trailing dot, default ports and slashes as one', () => {
    const one = accountOf('http://127.0.0.1:4010');
    for (const u of [
      'http://localhost:4010',
      'http://LOCALHOST.:4010/',
      'http://127.1.2.3:4010',
      'http://[::1]:4010',
      'HTTP://127.0.0.1:4010//',
    ])
      expect(accountOf(u), u).toBe(one);
    expect(accountOf('https://Api.Example.com.:443/v1/')).toBe('https://api.example.com/v1');
    expect(accountOf('http://127.0.0.1:4011')).not.toBe(one);
  });
});

describe('one ledger per account', () => {
  it('localhost then 127.0.0.1, same state folder: one ledger, nothing sent twice, the results file intact', async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    const state = join(dir, 'state');
    await writeBatch(dir, 'payroll.csv', { rows: 3, currencies: ['GBP'], prefix: 'AL' });
    const port = new URL(sb.url).port;
    const cli = (host: string, ...args: string[]) =>
      runCli([...args, '--base-url', `http://${host}:${port}`, '--rate', '100'], {
        cwd: dir,
        env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: state }),
      });

    // the first run sets the scene, through main() in this process
    const first = await runMain(['run', join(dir, 'payroll.csv'), '--yes', '--base-url', `http://127.0.0.1:${port}`, '--rate', '100'], {
      cwd: dir,
      env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: state }),
    });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const results = readFileSync(join(dir, 'payroll.results.csv'), 'utf8');
    expect(initiates(sb)).toHaveLength(3);

    const again = await cli('localhost', 'run', 'payroll.csv', '--yes');
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(initiates(sb)).toHaveLength(3);
    expect(await allPayouts(sb)).toHaveLength(3);
    expect(readdirSync(join(state, 'ledgers'))).toHaveLength(1);
    const after = readFileSync(join(dir, 'payroll.results.csv'), 'utf8');
    expect(after.match(/SUCCESSFUL|PENDING|PROCESSING/g)?.length).toBe(results.match(/SUCCESSFUL|PENDING|PROCESSING/g)?.length);
    expect(after).not.toContain('CONFLICT');
  });
});

describe('a state folder named relative to the working folder', () => {
  it('$PAYOUT_BATCH_STATE_DIR relative is refused: from each folder a command runs in, it would name another ledger', async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    await writeBatch(dir, 'payroll.csv', { rows: 2, currencies: ['GBP'], prefix: 'RS' });
    const r = await runCli(['run', 'payroll.csv', '--yes', '--base-url', sb.url], {
      cwd: dir,
      env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: 'state' }),
    });
    expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(/PAYOUT_BATCH_STATE_DIR state is not an absolute path/)]);
    expect(initiates(sb)).toHaveLength(0);
    expect(readdirSync(dir)).not.toContain('state');
  });

  it('$XDG_STATE_HOME relative is ignored, as the XDG spec says', () => {
    expect(defaultStateDir({ XDG_STATE_HOME: '.state' })).toBe(join(homedir(), '.local', 'state', 'payout-batch'));
    expect(defaultStateDir({ XDG_STATE_HOME: '/x/state' })).toBe('/x/state/payout-batch');
  });
});

describe('a state folder another user could change', () => {
  async function refusedWith(prepare: (state: string, dir: string) => string) {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    await writeBatch(dir, 'payroll.csv', { rows: 2, currencies: ['GBP'], prefix: 'SF' });
    const stateDir = prepare(join(dir, 'state'), dir);
    const r = await runCli(['run', 'payroll.csv', '--yes', '--base-url', sb.url, '--state-dir', stateDir], {
      cwd: dir,
      env: cleanEnv(),
    });
    expect(initiates(sb)).toHaveLength(0);
    return r;
  }

  it('refuses a symbolic link (exit 3, nothing sent)', async () => {
    const r = await refusedWith((state, dir) => {
      mkdirSync(state, { mode: 0o700 });
      symlinkSync(state, join(dir, 'link'));
      return join(dir, 'link');
    });
    expect(r.code, r.stdout + r.stderr).toBe(3);
    expect(r.stderr).toMatch(/state folder .*link is a symbolic link/);
  });

  it('refuses a folder writable by its group (exit 3, nothing sent)', async () => {
    const r = await refusedWith((state) => {
      mkdirSync(state);
      chmodSync(state, 0o770);
      return state;
    });
    expect(r.code, r.stdout + r.stderr).toBe(3);
    expect(r.stderr).toMatch(/state folder .* is writable by its group \(mode 770\)/);
  });

  it('creates its own folders for this user only, and journals 0600', async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    await writeBatch(dir, 'payroll.csv', { rows: 1, currencies: ['GBP'], prefix: 'SP' });
    const state = join(dir, 'fresh', 'state');
    const r = await runCli(['run', 'payroll.csv', '--yes', '--base-url', sb.url, '--state-dir', state], {
      cwd: dir,
      env: cleanEnv(),
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const ledgers = join(state, 'ledgers');
    const [account] = readdirSync(ledgers);
    const journal = readdirSync(join(ledgers, account!)).find((n) => n.endsWith('.journal.jsonl'))!;
    expect(statSync(state).mode & 0o777).toBe(0o700);
    expect(statSync(join(ledgers, account!)).mode & 0o777).toBe(0o700);
    expect(statSync(join(ledgers, account!, journal)).mode & 0o777).toBe(0o600);
  });
});

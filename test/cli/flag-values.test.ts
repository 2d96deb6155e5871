// A number flag of `run` that takes a bad value is a usage error (exit 2) said before any request:
// not a refusal after the preflight spent the key's quota, not "failed after sending began", not a
// worker per unit of a huge --concurrency until the heap runs out.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { cleanEnv, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';
import { startSb } from '../ops/helpers.ts';

let sb: LocalSandbox;
const dirs = tempDirs('pb-flag-values-');
beforeAll(async () => {
  sb = await startSb();
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

describe('run with a bad number flag', () => {
  it.each([
    ['--expect-rows', 'abc'],
    ['--expect-rows', '2.5'],
    ['--concurrency', 'abc'],
    ['--concurrency', '65'],
  ])('%s %s: exit 2 naming the flag, not one request', async (flag, value) => {
    const dir = await dirs.make();
    await writeBatch(dir, 'payroll.csv', { rows: 2, currencies: ['GBP'], prefix: `FV-${flag.slice(2, 5)}-${value.replace('.', '')}` });
    const before = sb.requestLog().length;
    const r = await runMain(['run', join(dir, 'payroll.csv'), '-y', flag, value], {
      cwd: dir,
      env: cleanEnv({ PAYOUT_BASE_URL: sb.url, PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }),
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`payout-batch: ${flag} takes a whole number`);
    expect(sb.requestLog().length).toBe(before);
  });
});

describe('run --results, retry --out in a folder that does not exist', () => {
  it('is refused before anything is sent (exit 2), not after the payouts went (exit 4)', async () => {
    const dir = await dirs.make();
    // (row 3 invalid: the run pays row 2, its results leave row 3 to a retry)
    await writeBatch(dir, 'payroll.csv', { rows: 2, currencies: ['GBP'], prefix: 'FV-NODIR', amount: (i) => ['10.00', 'abc'][i]! });
    const cli = (...args: string[]) =>
      runMain([...args, '-y'], { cwd: dir, env: cleanEnv({ PAYOUT_BASE_URL: sb.url, PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }) });
    const sent = () => sb.requestLog().filter((r) => r.route === 'initiate').length;
    const before = sent();
    const nowhere = join(dir, 'no-such-folder');
    const run = await cli('run', join(dir, 'payroll.csv'), '--results', join(nowhere, 'out.csv'));
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(`payout-batch: --results ${join(nowhere, 'out.csv')}: the folder ${nowhere} does not exist`);
    expect(sent()).toBe(before);

    expect((await cli('run', join(dir, 'payroll.csv'))).code).toBe(1);
    const results = join(dir, 'payroll.results.csv');
    await writeFile(results, (await readFile(results, 'utf8')).replace(',abc,', ',12.00,'));
    const paid = sent();
    const retry = await cli('retry', results, '--out', join(nowhere, 'retry.csv'));
    expect(retry.code, retry.stderr).toBe(2);
    expect(retry.stderr).toContain(`the folder ${nowhere} does not exist`);
    expect(sent()).toBe(paid);
  });
});

describe('a log level pino does not know', () => {
  it.each([
    [['--log-level', 'loud'], {}, '--log-level loud'],
    [[], { PAYOUT_BATCH_LOG_LEVEL: 'verbose' }, '$PAYOUT_BATCH_LOG_LEVEL verbose'],
  ])('%j %j: a usage error naming it and the levels, not an unexpected error', async (flags, vars, named) => {
    const dir = await dirs.make();
    await writeBatch(dir, 'payroll.csv', { rows: 1, currencies: ['GBP'] });
    const r = await runMain(['run', join(dir, 'payroll.csv'), '-y', ...flags], {
      cwd: dir,
      env: cleanEnv({ PAYOUT_BASE_URL: sb.url, PAYOUT_BATCH_STATE_DIR: join(dir, 'state'), ...vars }),
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(`payout-batch: ${named}: one of `);
    expect(r.stderr).not.toContain('unexpected error');
  });

  // (account warns only unless a level is asked for: the variable was named as the flag)
  it('account, with $PAYOUT_BATCH_LOG_LEVEL verbose: named as the variable, not as --log-level', async () => {
    const env = cleanEnv({ PAYOUT_BASE_URL: sb.url, PAYOUT_BATCH_LOG_LEVEL: 'verbose' });
    const r = await runMain(['account'], { cwd: await dirs.make(), env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('payout-batch: $PAYOUT_BATCH_LOG_LEVEL verbose: one of ');
  });
});

describe('a ledger timeout that is not a number of seconds', () => {
  it.each(['5m', '0', '-1'])('$PAYOUT_BATCH_LEDGER_TIMEOUT %s: a usage error naming it, before the ledger is opened', async (value) => {
    const dir = await dirs.make();
    await writeBatch(dir, 'payroll.csv', { rows: 1, currencies: ['GBP'] });
    const env = cleanEnv({ PAYOUT_BASE_URL: sb.url, PAYOUT_BATCH_STATE_DIR: join(dir, 'state'), PAYOUT_BATCH_LEDGER_TIMEOUT: value });
    const before = sb.requestLog().length;
    const r = await runMain(['run', join(dir, 'payroll.csv'), '-y', '--ledger', 'postgres://payout@127.0.0.1:9/none'], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`payout-batch: $PAYOUT_BATCH_LEDGER_TIMEOUT ${value}: a number of seconds above 0 (default 300)`);
    expect(sb.requestLog().length).toBe(before);
  });
});

describe('a flag given no value, or an empty one', () => {
  // `--plan "$PLAN"` with PLAN unset in a cron job: read as no plan, the file was run without one
  it.each([
    [['--plan'], '--plan needs a value'],
    [['--plan', ''], '--plan needs a value: it was given empty'],
    [['--plan='], '--plan needs a value: it was given empty'],
    [['--ping-url', '', '--yes'], '--ping-url needs a value: it was given empty'],
  ])('run FILE -y %j: exit 2 naming the flag, not one request', async (flags, said) => {
    const dir = await dirs.make();
    await writeBatch(dir, 'payroll.csv', { rows: 1, currencies: ['GBP'], prefix: `FV-EMPTY-${flags.join('').replace(/\W/g, '')}` });
    const before = sb.requestLog().length;
    const r = await runMain(['run', join(dir, 'payroll.csv'), '-y', ...flags], {
      cwd: dir,
      env: cleanEnv({ PAYOUT_BASE_URL: sb.url, PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }),
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`payout-batch: ${said}\n`);
    expect(sb.requestLog().length).toBe(before);
  });
});

describe('a flag of one value given twice', () => {
  // yargs makes it a list: `--ledger A --ledger B` reached the password check as one joined text, and `--base-url` crashed
  it.each([
    [['--ledger', 'postgres://u@127.0.0.1:1/d', '--ledger', 'postgres://u:Sekrit@127.0.0.1:1/d'], '--ledger'],
    [['--results', 'a.results.csv', '--results', 'b.results.csv'], '--results'],
  ])('run FILE -y %j: exit 2 naming the flag, not one request', async (flags, named) => {
    const dir = await dirs.make();
    const file = await writeBatch(dir, 'payroll.csv', { rows: 1, currencies: ['GBP'], prefix: 'FV-TWICE' });
    const before = sb.requestLog().length;
    const r = await runMain(['run', file, '-y', ...flags], {
      cwd: dir,
      env: cleanEnv({ PAYOUT_BASE_URL: sb.url, PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }),
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`payout-batch: ${named} was given more than once: give it once\n`);
    expect(r.stderr + r.stdout).not.toContain('Sekrit');
    expect(sb.requestLog().length).toBe(before);
  });
});

describe('a state folder that is a file', () => {
  it.each(['--state-dir', '$PAYOUT_BATCH_STATE_DIR'])(
    'run FILE -y, %s a file: exit 2 naming it and the flag, not an unexpected ENOTDIR',
    async (how) => {
      const dir = await dirs.make();
      const file = await writeBatch(dir, 'payroll.csv', { rows: 1, currencies: ['GBP'], prefix: 'FV-STATE-FILE' });
      const flag = how === '--state-dir';
      const before = sb.requestLog().length;
      const r = await runMain(['run', file, '-y', ...(flag ? ['--state-dir', file] : [])], {
        cwd: dir,
        env: cleanEnv({ PAYOUT_BASE_URL: sb.url, PAYOUT_BATCH_STATE_DIR: flag ? join(dir, 'state') : file }),
      });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`payout-batch: the state folder ${file} is a file: name a folder with --state-dir`);
      expect(sb.requestLog().length).toBe(before);
    },
  );
});

// A key given on the command line is refused (`ps` shows it to every user) and never quoted back,
// however the flag was mistyped: a value after an empty `--api-key=` is a stray argument yargs names.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, runMain, tempDirs } from '../engine/helpers.ts';

const dirs = tempDirs('pb-api-key-flag-');
afterEach(() => dirs.remove());

const KEY = 'sk_sandbox_GivenOnTheCommandLine01';

describe('--api-key', () => {
  for (const given of [['--api-key', KEY], [`--api-key=${KEY}`], ['--api-key=', KEY], ['--api-key', '', KEY]]) {
    it(given.join(' '), async () => {
      const cwd = await dirs.make();
      const r = await runMain(['account', '--base-url', 'http://127.0.0.1:9', ...given], { cwd, env: cleanEnv() });
      expect(r.code).toBe(2);
      expect(r.stdout + r.stderr).not.toContain(KEY.slice(11));
      expect(r.stderr).toContain('the API key is never taken from the command line');
    });
  }
});

// `--key-file= KEY`, `--secret-file= whsec_...`: yargs names the stray word; one shaped like a secret is not shown.
describe('a stray argument shaped like a secret', () => {
  const hidden = 'an argument was not expected (not shown: it looks like a secret)';
  const cases: [string[], string][] = [
    [['run', 'payroll.csv', '--key-file=', 'sk_live_StrayKeyOnTheLine0123'], 'StrayKeyOnTheLine'],
    [['status', 'r.csv', '--key-file', '', 'rk_test_StrayKeyOnTheLine0123'], 'StrayKeyOnTheLine'],
    [['listen', '--port', '1', '--secret-file=', 'whsec_StraySecretOnTheLine01'], 'StraySecretOnTheLine'],
    [['run', 'payroll.csv', 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1L7'], 'MIIBIjANBgkqhkiG9w0'],
    [['sk_production_StrayKeyOnTheLine0123'], 'StrayKeyOnTheLine'],
    // (pasted after a flag's dashes: named as an unknown flag)
    [['run', 'payroll.csv', '--sk_live_StrayKeyOnTheLine0123'], 'StrayKeyOnTheLine'],
  ];
  for (const [args, secret] of cases) {
    it(args.join(' '), async () => {
      const r = await runMain(args, { cwd: await dirs.make(), env: cleanEnv() });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(hidden);
      expect(r.stdout + r.stderr).not.toContain(secret);
    });
  }

  it('an ordinary stray word is still named; a secret given as a flag value is refused unquoted', async () => {
    const r = await runMain(['run', 'payroll.csv', 'extra'], { cwd: await dirs.make(), env: cleanEnv() });
    expect(r.stderr).toContain('Unknown argument: extra');
    const env = await runMain(['run', 'payroll.csv', '--env=sk_live_StrayKeyOnTheLine0123'], { cwd: await dirs.make(), env: cleanEnv() });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('not shown: it looks like a secret');
    expect(env.stderr).not.toContain('StrayKeyOnTheLine');
  });
});

// yargs translates its messages by LANG (from its locales folder, which the bundle in dist/ lacks): main() rewords them in English
describe("under another language's LANG", () => {
  it('the messages are the same, a secret still not shown', async () => {
    const was = process.env.LC_ALL;
    process.env.LC_ALL = 'tr_TR.UTF-8';
    try {
      const said = async (...args: string[]) => (await runMain(args, { cwd: await dirs.make(), env: cleanEnv() })).stderr;
      expect(await said('run', 'payroll.csv', 'extra')).toContain('payout-batch: Unknown argument: extra\n');
      expect(await said('run', 'payroll.csv', '-y', '--plan')).toContain('payout-batch: --plan needs a value\n');
      const secret = await said('run', 'payroll.csv', '--key-file=', 'sk_live_StrayKeyOnTheLine0123');
      expect(secret).toContain('an argument was not expected (not shown: it looks like a secret)');
      expect(secret).not.toContain('StrayKeyOnTheLine');
    } finally {
      if (was === undefined) delete process.env.LC_ALL;
      else process.env.LC_ALL = was;
    }
  });
});

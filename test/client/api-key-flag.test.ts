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

// `payout-batch --help` ends on the exit codes: every code of exit-codes.ts, each said as the README's
// table says it (5 is also `run`'s and `retry`'s when the only rows not sent are not due yet).
import { expect, it } from 'vitest';
import { ExitCode } from '../../src/cli/exit-codes.ts';
import { cleanEnv, runMain } from '../engine/helpers.ts';

it('names every exit code in --help, and 5 for run as for status', async () => {
  const r = await runMain(['--help'], { cwd: '/', env: cleanEnv() });
  const line = /Exit codes: ([\s\S]*)$/.exec(r.stdout.replace(/\s+/g, ' '))?.[1] ?? '';
  for (const code of Object.values(ExitCode)) expect(line).toMatch(new RegExp(`(^|, )${code} `));
  const five = /(?:^|, )5 ([^,]*(?:,[^,0-9]*)*)/.exec(line)?.[1] ?? '';
  expect(five).toMatch(/\brun\b/);
});

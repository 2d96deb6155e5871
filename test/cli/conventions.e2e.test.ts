// The conventions a user of gh, npm or the Stripe CLI expects, on the compiled CLI: help from the
// bare command and -h, unknown flags named once. One sandbox for the file; few spawns per case.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/index.ts';
import { commands } from '../../src/cli/commands/index.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { KEY, cleanEnv, runCli, tempDirs, writeBatch } from '../engine/helpers.ts';

let sb: LocalSandbox;
const dirs = tempDirs('pb-conventions-');
beforeAll(async () => {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null, monthlyQuota: null });
});
afterAll(async () => {
  await sb?.close();
  await dirs.remove();
});

/** A folder with a batch of `rows` rows, and the CLI run in it against the sandbox as `key`. */
async function batchDir(prefix: string, rows = 3, key = KEY) {
  const dir = await dirs.make();
  await writeBatch(dir, 'payroll.csv', { rows, prefix });
  const env = cleanEnv({ PAYOUT_API_KEY: key, PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const cli = (...args: string[]) => runCli(args, { cwd: dir, env });
  const connected = (...args: string[]) => cli(...args, '--base-url', sb.url);
  return { dir, cli, connected };
}

const names = commands.map((c) => c.command.split(' ')[0]!);

describe('help', () => {
  it('bare payout-batch and -h list every command on stdout and exit 0; run --help shows its flags', async () => {
    const { cli } = await batchDir('HELP', 1);
    for (const args of [[], ['-h']]) {
      const r = await cli(...args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).toContain('Commands:');
      for (const n of names) expect(r.stdout).toContain(`payout-batch ${n}`);
    }
    const run = await cli('run', '--help');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('--yes');
  });
});

describe('unknown flags and commands', () => {
  it('names each unknown flag once, as typed, even when it took the file as its value; an unknown command says so', async () => {
    const { cli } = await batchDir('UNKNOWN', 1);
    const r = await cli('validate', '--bogus-flag', 'x', '--bogus-flag=y', '--max-problem', '3', 'payroll.csv', '-z', 'payroll.csv');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown flags: --bogus-flag, --max-problem, -z');
    expect(r.stderr.match(/bogus/gi)).toHaveLength(1);
    expect(r.stderr).not.toMatch(/bogusFlag|maxProblem/);
    const typo = await cli('validat', 'payroll.csv');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('unknown command "validat": did you mean validate?');
  });
});

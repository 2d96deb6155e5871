// The README is executed (issue 31, item 1): every line of its ```sh blocks is run, in order, as one
// story in one shell (so `cd` and `export` carry over), in a copy of what a fresh clone holds (the
// samples), with a fresh HOME (so the default state folder, and the local sandbox in it) and
// `payout-batch` on PATH as the built CLI. A line expects exit 0, or N when its comment starts with
// `exit N`; the test names the first line that exits otherwise, with its output. Other blocks
// (```bash: installing and testing; ```text: cron, output) are not run.
// $PAYOUT_BATCH_RATE keeps it short: the client, and the local sandbox with it, at 100 requests a second.
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from './engine/helpers.ts';
import { TEST_SHAPES } from './shapes.ts';

interface Step {
  /** 1-based line number in README.md. */
  at: number;
  command: string;
  expect: number;
}

/** The command lines of the README's sh blocks, each with the exit code its comment expects. */
export function readmeSteps(markdown: string): Step[] {
  const steps: Step[] = [];
  let inSh = false;
  let inBlock = false;
  markdown.split('\n').forEach((line, i) => {
    const fence = /^```(\S*)/.exec(line);
    if (fence) {
      inSh = !inBlock && fence[1] === 'sh';
      inBlock = !inBlock;
      return;
    }
    if (!inSh || !line.trim() || line.trim().startsWith('#')) return;
    const comment = /\s#\s(.*)$/.exec(line)?.[1] ?? '';
    steps.push({ at: i + 1, command: line, expect: Number(/^exit (\d+)/.exec(comment)?.[1] ?? 0) });
  });
  return steps;
}

const dir = mkdtempSync(join(tmpdir(), 'pb-readme-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the steps in one sh, each line's output in logs/N.log and its exit code on fd 3. */
function runStory(steps: Step[], clone: string, env: NodeJS.ProcessEnv): Promise<{ codes: number[]; logs: string }> {
  const logs = join(dir, 'logs');
  mkdirSync(logs);
  const script = [
    `cd '${clone}'`,
    ...steps.flatMap((s, n) => [`{\n${s.command}\n} > '${logs}/${n}.log' 2>&1 < /dev/null`, 'echo $? >&3']),
  ].join('\n');
  writeFileSync(join(dir, 'story.sh'), script + '\n');
  return new Promise((resolve, reject) => {
    const child = spawn('sh', [join(dir, 'story.sh')], { env, stdio: ['ignore', 'ignore', 'ignore', 'pipe'] });
    let codes = '';
    child.stdio[3]!.on('data', (d) => (codes += String(d)));
    child.on('error', reject);
    child.on('close', () => resolve({ codes: codes.split('\n').filter(Boolean).map(Number), logs }));
  });
}

describe('README.md, executed', () => {
  it('runs the treasurer and the cron walkthroughs as written, each line with the exit code it expects', async () => {
    const steps = readmeSteps(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    expect(steps.some((s) => /payout-batch watch .*--once/.test(s.command))).toBe(true);
    expect(steps.some((s) => /payout-batch run --plan/.test(s.command))).toBe(true);

    const clone = join(dir, 'clone');
    cpSync(join(ROOT, 'samples'), join(clone, 'samples'), { recursive: true });
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'payout-batch'), `#!/bin/sh\nexec '${process.execPath}' '${join(ROOT, 'dist/bin.js')}' "$@"\n`, {
      mode: 0o755,
    });
    mkdirSync(join(dir, 'home'));
    const inherited = Object.entries(process.env).filter(([k]) => !k.startsWith('PAYOUT_') && k !== 'XDG_STATE_HOME');
    const env = {
      ...Object.fromEntries(inherited),
      PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: join(dir, 'home'),
      PAYOUT_BATCH_RATE: '100',
      PAYOUT_SANDBOX_SHAPES: TEST_SHAPES,
    };

    const { codes, logs } = await runStory(steps, clone, env);
    steps.forEach((s, n) => {
      const got = codes[n];
      if (got !== s.expect) {
        const out = (() => {
          try {
            return readFileSync(join(logs, `${n}.log`), 'utf8').slice(-3000);
          } catch {
            return '(no output)';
          }
        })();
        expect.fail(`README.md line ${s.at}: \`${s.command.trim()}\` exited ${got ?? 'never ran'}, expected ${s.expect}\n${out}`);
      }
    });

    // The story did what it says: 52 rows paid (moved by the local sandbox), one file done by the watch.
    const results = parse<Record<string, string>>(readFileSync(join(clone, 'payroll/payroll-2025-01.results.csv'), 'utf8'), {
      columns: true,
      bom: true,
    });
    expect(results).toHaveLength(52);
    expect(new Set(results.map((r) => r.status))).toEqual(new Set(['SUCCESSFUL']));
    expect(readdirSync(join(clone, 'payroll/acme/done'))).toHaveLength(1);
  }, 300_000);
});

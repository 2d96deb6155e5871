// `run` on a terminal, as Treasury uses it: the plan, one confirmation with the totals, nothing sent
// before "y", then a progress bar and the summary. The CLI runs under `script` (util-linux), which
// gives it a real pseudo-terminal for stdin, stdout and stderr; we answer through that terminal.
import { spawn } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { ROOT, cleanEnv, generateCsv, workDir } from '../engine/helpers.ts';

let sb: LocalSandbox;
beforeAll(async () => {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: 50, monthlyQuota: null });
});
afterAll(() => sb?.close());

const sent = () => sb.requestLog().filter((r) => r.route === 'quote' || r.route === 'initiate' || r.route === 'uploadUrl').length;

/** Runs `payout-batch run FILE` on a pseudo-terminal and types `answer` at the [y/N] prompt. */
async function onTerminal(
  prefix: string,
  answer: string,
  flags: string[] = [],
): Promise<{ code: number | null; screen: string; sentBeforeAnswer: number; prompts: number; files: string[] }> {
  const dir = await workDir('pb-tty-');
  const file = join(dir, 'payroll.csv');
  await writeFile(file, generateCsv({ rows: 12, prefix }));
  const cmd = [process.execPath, join(ROOT, 'dist/bin.js'), 'run', file, '--base-url', sb.url, '--rate', '50', ...flags]
    .map((a) => `'${a}'`)
    .join(' ');
  const child = spawn('script', ['-qfec', cmd, '/dev/null'], {
    env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state'), TERM: 'xterm', COLUMNS: '120' }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let screen = '';
  let sentBeforeAnswer = -1;
  const onData = (d: Buffer) => {
    screen += d.toString('utf8');
    if (sentBeforeAnswer === -1 && screen.includes('[y/N]')) {
      sentBeforeAnswer = sent();
      child.stdin.write(answer);
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no exit within 60 s; the terminal showed:\n${screen}`));
    }, 60_000);
    child.on('close', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  return { code, screen, sentBeforeAnswer, prompts: screen.split('[y/N]').length - 1, files: await readdir(dir) };
}

describe('run on a terminal', () => {
  it('shows the plan, asks once with the totals, sends nothing before "y", then shows a progress bar and the summary', async () => {
    const before = sent();
    const t = await onTerminal('TTYYES', 'y\n');
    expect(t.code, t.screen).toBe(0);
    expect(t.prompts).toBe(1);
    expect(t.sentBeforeAnswer).toBe(before);
    // The question names the rows and the total per source currency, fees included.
    expect(t.screen).toMatch(/Send 12 payouts \(NGN [\d,]+\.\d\d, USD [\d,]+\.\d\d\) from custom\? \[y\/N\]/);
    expect(t.screen.indexOf('Plan for')).toBeLessThan(t.screen.indexOf('[y/N]'));
    // Preflight says what it is doing as it happens, before the plan (one line, rewritten in place).
    expect(t.screen).toMatch(/preflight: reading the payment methods of \d+ corridors? \(\d+ done\)/);
    expect(t.screen.indexOf('preflight: reading the wallets')).toBeLessThan(t.screen.indexOf('Plan for'));
    // The bar: rows done of the total, failures, pace.
    expect(t.screen).toMatch(/12\/12 rows \| failed 0 \| [\d.]+ req\/s/);
    expect(t.screen).toContain('All 12 payouts created.');
    // A person reads this terminal: no JSON log lines on it.
    expect(t.screen).not.toContain('{"level"');
    expect(sent() - before).toBeGreaterThanOrEqual(12); // an initiate per row (the run sends no quote)
  });

  it('anything but yes sends nothing, writes nothing (no results file, no report) and exits 3', async () => {
    const before = sent();
    const t = await onTerminal('TTYNO', 'n\n', ['--report']);
    expect(t.code, t.screen).toBe(3);
    expect(t.prompts).toBe(1);
    expect(sent()).toBe(before);
    expect(t.screen).toContain('declined at the confirmation: nothing was sent');
    expect(t.files.filter((f) => f !== 'state')).toEqual(['payroll.csv']);
    expect(t.screen).not.toMatch(/NOT_SENT|results /);
    expect(t.screen).not.toMatch(/rows \| failed/);
  });

  it('-q still shows the plan it asks about, with the environment explained; Ctrl-C at the question answers no', async () => {
    const before = sent();
    const t = await onTerminal('TTYQUIET', '\x03', ['-q']);
    expect(t.code, t.screen).toBe(3);
    expect(t.screen).toContain('declined at the confirmation: nothing was sent');
    expect(t.screen.indexOf('Plan for')).toBeGreaterThanOrEqual(0);
    expect(t.screen.indexOf('Plan for')).toBeLessThan(t.screen.indexOf('[y/N]'));
    expect(t.screen).toContain('environment  custom (a base URL given with --base-url');
    expect(sent()).toBe(before);
  });

  it('Ctrl-D at the question (end of input) answers no, as Ctrl-C does: exit 3, nothing sent', async () => {
    const before = sent();
    const t = await onTerminal('TTYEOF', '\x04');
    expect(t.code, t.screen).toBe(3);
    expect(t.screen).toContain('declined at the confirmation: nothing was sent');
    expect(sent()).toBe(before);
  });
});

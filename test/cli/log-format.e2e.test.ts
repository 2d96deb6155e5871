// Issue 31: raw pino JSON lines (429 retries) were mixed into the human output on a terminal. On a
// terminal each log event is one short line for a person; off a terminal, or with --log-format
// json, JSON lines for a machine. The sandbox answers one spurious 429 to the first wallets request
// of each run, so the client logs a retry (warn, the level a terminal shows by default).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { KEY, cleanEnv, runCli, workDir } from '../engine/helpers.ts';
import { onTerminal } from './pty.ts';

let sb: LocalSandbox;
beforeAll(async () => {
  sb = await startSandbox({
    shapes: TEST_SHAPES,
    rateLimitPerSecond: 100,
    monthlyQuota: null,
    // one 429 per run: the fault is taken back once it was answered
    onRequest: (e) => {
      if (e.status === 429) sb.setFaults({});
    },
  });
});
afterAll(() => sb?.close());

const oneRetry = () => sb.setFaults({ spurious429: 1, routes: ['wallets'] });
const account = (...flags: string[]) => ['account', '--base-url', sb.url, ...flags];
const jsonLines = (text: string) => text.split(/\r?\n/).filter((l) => l.startsWith('{"level"'));

describe('log lines', () => {
  it('on a terminal: one human line per event, no JSON, no key; --log-format json forces JSON lines', async () => {
    const dir = await workDir('pb-logfmt-');
    oneRetry();
    const human = await onTerminal(account(), { env: cleanEnv(), cwd: dir });
    expect(human.code, human.output).toBe(0);
    expect(human.output).not.toContain('{"level"');
    expect(human.output).toMatch(/warn: retrying listWallets: 429[^\n]*\(status=429 route=listWallets attempt=1 /);
    expect(human.output).not.toContain(KEY);
    expect(human.output).toContain('Wallets'); // the command's own output is still there

    oneRetry();
    const json = await onTerminal(account('--log-format', 'json'), { env: cleanEnv(), cwd: dir });
    expect(json.code, json.output).toBe(0);
    const lines = jsonLines(json.output.replace(/\r/g, ''));
    expect(lines.length, json.output).toBeGreaterThan(0);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 40, route: 'listWallets', status: 429 });
  });

  it('off a terminal: JSON lines, unless --log-format human', async () => {
    const dir = await workDir('pb-logfmt-');
    oneRetry();
    const json = await runCli(account(), { cwd: dir, env: cleanEnv() });
    expect(json.code, json.stderr).toBe(0);
    expect(jsonLines(json.stderr).map((l) => JSON.parse(l) as { msg: string })).toEqual([
      expect.objectContaining({ level: 40, msg: expect.stringMatching(/^retrying listWallets: 429/) }),
    ]);

    oneRetry();
    const human = await runCli(account('--log-format', 'human'), { cwd: dir, env: cleanEnv() });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stderr).toMatch(/^warn: retrying listWallets: 429.*\(status=429 route=listWallets /m);
    expect(human.stderr).not.toContain('{"level"');
    expect(human.stderr).not.toContain('\x1b['); // no terminal control off a terminal
  });
});

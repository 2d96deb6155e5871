// Issue 31: on an 80×24 terminal the confirmation of `run` must show the totals and the question on
// one screen; trading-hours warnings for ten countries pushed the totals off it. The sample payroll
// (52 rows, 13 countries) against a sandbox whose seed has ten of those countries closed now.
import { readFile, writeFile } from 'node:fs/promises';
import { stripVTControlCharacters } from 'node:util';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSeed, startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { ROOT, cleanEnv, initiates, workDir } from '../engine/helpers.ts';
import { onTerminal, screenLines } from './pty.ts';

const CLOSED = ['AUT', 'CHN', 'DEU', 'ESP', 'FRA', 'HKG', 'IND', 'IRL', 'ITA', 'NLD'];
const OPEN = ['GBR', 'NGA', 'USA'];

/** HH:MM:SS `minutes` from now in a country's time zone (wrapping at midnight). */
function localTime(timeZone: number, minutes: number): string {
  const now = new Date();
  const m = (((now.getUTCHours() * 60 + now.getUTCMinutes() + Math.round(timeZone * 60) + minutes) % 1440) + 1440) % 1440;
  return `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}:00`;
}

/** The sample payroll in a folder of its own, its documents named by absolute path so that it can be read from there. */
async function samplePayroll() {
  const dir = await workDir('pb-screen-');
  const file = join(dir, 'payroll.csv');
  const sample = await readFile(join(ROOT, 'samples/payroll-2025-01.csv'), 'utf8');
  await writeFile(file, sample.replace(/documents\//g, `${join(ROOT, 'samples/documents')}/`));
  return { dir, file };
}

let sb: LocalSandbox;
beforeAll(async () => {
  const seed = defaultSeed();
  for (const c of seed.countries) {
    // closed: the window opens in two hours; open: it opened an hour ago
    if (CLOSED.includes(c.code)) [c.tradingStartTime, c.tradingEndTime] = [localTime(c.timeZone, 120), localTime(c.timeZone, 180)];
    if (OPEN.includes(c.code)) [c.tradingStartTime, c.tradingEndTime] = [localTime(c.timeZone, -60), localTime(c.timeZone, 60)];
  }
  sb = await startSandbox({ seed, shapes: TEST_SHAPES, rateLimitPerSecond: 100, monthlyQuota: null });
});
afterAll(() => sb?.close());

describe('run on an 80×24 terminal', () => {
  it('shows the totals of every currency and the question on one screen, the warnings grouped by rule', async () => {
    const { dir, file } = await samplePayroll();
    const t = await onTerminal(['run', file, '--base-url', sb.url, '--rate', '50', '--no-report'], {
      env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }),
      cwd: dir,
      cols: 80,
      rows: 24,
      answer: 'n\n',
    });
    expect(t.code, t.output).toBe(3);
    expect(initiates(sb)).toHaveLength(0);

    const screen = screenLines(t.atQuestion, 80).slice(-24);
    const shown = screen.join('\n');
    // the plan from its first line, every currency's total, and the whole question
    expect(shown, shown).toMatch(/^Plan for payroll\.csv \(custom, batch [0-9a-f]{16}\)$/m);
    for (const [currency, rows, total] of [
      ['CNY', 2, '40,540.00'],
      ['EUR', 7, '27,895.00'],
      ['GBP', 9, '34,986.00'],
      ['HKD', 3, '92,060.00'],
      ['NGN', 11, '8,601,000.50'],
      ['USD', 20, '103,319.21'],
    ] as const)
      expect(shown, shown).toMatch(new RegExp(`^ +${currency} +${rows} rows .* = +${total} -> +[\\d,]+\\.\\d\\d$`, 'm'));
    expect(shown.replace(/\n/g, '')).toMatch(/Send 52 payouts \(CNY 40,540\.00, .*USD 103,319\.21\) from custom\? \[y\/N\]/);
    // ten countries closed: one line for the rule, its rows counted, not one line per country
    expect(shown).toMatch(/^ {2}warning {6}outside trading hours now: \d+ rows \(rows \d+, \d+, \d+ and \d+ more\)/m);
    expect(shown.match(/trading hours/g)).toHaveLength(1);
    // what is cut to fit says where the whole plan is
    expect(shown).toContain('(shortened to fit the screen: add --dry-run to print it whole)');
  });
});

describe('plan on an 80-column terminal', () => {
  it('writes no line wider than the terminal: the notes after the plan wrap too (issue 43, item 9)', async () => {
    const { dir, file } = await samplePayroll();
    const t = await onTerminal(['plan', file, '--base-url', sb.url, '--rate', '50', '--no-report'], {
      env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }),
      cwd: dir,
      cols: 80,
      rows: 24,
    });
    expect(t.code, t.output).toBe(0);
    const lines = stripVTControlCharacters(t.output).split(/\r?\n|\r/);
    expect(lines.filter((l) => l.length > 80)).toEqual([]);
    // the note that nothing was quoted is there whole, carried over lines
    expect(lines.join(' ').replace(/\s+/g, ' ')).toContain(
      `Nothing was quoted, fees are estimated: \`payout-batch plan ${file} --out PLAN\` quotes the rows`,
    );
  });
});

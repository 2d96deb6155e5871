// The host's locale decides nothing that is paid, planned or written: a batch planned in Tallinn and
// run on a server in UTC funds the same swaps and pays the same rows. `localeCompare` orders by LANG
// (Estonian sorts ZAR before TRY, Czech HKD before CHF); ICU reads LANG when Node starts, so each
// locale is a child process running host-order.ts.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.ts';
import { hostOrders } from './host-order.ts';

const inLocale = async (locale: string): Promise<ReturnType<typeof hostOrders>> => {
  const env = { ...process.env, LC_ALL: locale, LANG: locale };
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(ROOT, 'test/engine/host-order.ts')], {
    cwd: ROOT,
    env,
  });
  return JSON.parse(stdout) as ReturnType<typeof hostOrders>;
};

describe('the host locale', () => {
  it('orders currencies by their codes: the swap funded, the rows paid, the plan, totals and swaps written', () => {
    const here = hostOrders();
    expect(here).toMatchObject({
      paid: [3], // the TRY row, whose swap comes first; the ZAR row waits for the wallet
      swappedFor: ['TRY'],
      tieFundedFrom: ['CHF'],
      planCurrencies: ['CHF', 'HKD', 'TRY', 'ZAR'],
      moneyTotals: ['CHF', 'HKD', 'TRY', 'ZAR'],
      swapLines: ['CHF', 'HKD', 'TRY', 'ZAR'],
    });
  });

  it.each([
    ['et_EE.UTF-8', 'et-EE'],
    ['cs_CZ.UTF-8', 'cs-CZ'],
  ])('under LANG=%s decides and writes as here', async (locale, icu) => {
    const there = await inLocale(locale);
    expect(there.locale).toBe(icu); // (else the child did not run under that locale, and proves nothing)
    expect({ ...there, locale: undefined }).toEqual({ ...hostOrders(), locale: undefined });
  });
});

describe('ESLint (test/eslint.config.js) in src/', () => {
  const eslint = new ESLint({
    cwd: ROOT,
    overrideConfigFile: 'test/eslint.config.js',
    overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
    ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-properties' || ruleId === 'no-restricted-syntax',
  });
  const problems = async (filePath: string, code: string) => (await eslint.lintText(code, { filePath }))[0]!.messages.length;

  it("refuses an order by the host's locale and a date in its zone; lets UTC and a named locale be", async () => {
    for (const code of [
      'export const f = (a: string, b: string) => a.localeCompare(b);',
      'export const d = new Date(2025, 0, 31);',
      'export const h = new Date().getHours();',
      'export const m = (d: Date) => d.getDate();',
      'export const t = (n: number) => n.toLocaleString();',
      "export const s = new Date().toLocaleDateString('en-GB');",
    ])
      expect(await problems('src/engine/x.ts', code), code).toBe(1);
    const fine = "export const x = [Date.UTC(2025, 0, 31), new Date(0).getUTCHours(), (1).toLocaleString('en-US'), new Date()];";
    expect(await problems('src/engine/x.ts', fine)).toBe(0);
    expect(await problems('test/x.ts', "export const f = 'a'.localeCompare('b');")).toBe(0);
  });
});

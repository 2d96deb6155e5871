// A command of "Rows that need action", copied from the report as a browser shows it, is the command
// the report made: a path's runs of spaces, tab or line break (inside its quotes) are kept, not folded into one space.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { resultsHtml } from '../../src/report/html.ts';
import { resultsViewOf } from '../../src/report/model.ts';
import type { ResultsTable } from '../../src/results/results.ts';
import { launchChromium } from './chromium.ts';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(() => browser?.close());

it('copies a command whose path holds two spaces, a tab and a line break as it is', async () => {
  const file = '/data/Pay  Roll/jan\tfeb\nmar.results.csv';
  const t: ResultsTable = {
    format: 'csv',
    inputColumns: ['reference', 'sourceAmount', 'sourceCurrency'],
    rows: [{ rowNumber: 2, cells: { reference: 'R-2', sourceAmount: '10', sourceCurrency: 'EUR' }, result: { status: 'FAILED_TO_SEND' } }],
  };
  const view = await resultsViewOf(t, file);
  const command = view.action[0]!.command!;
  expect(command).toBe(`payout-batch retry '${file}'`);
  const page = await browser.newPage();
  try {
    await page.setContent(resultsHtml(view));
    const copied = await page.evaluate(() => {
      const code = document.querySelector('code.cmd')!;
      const range = document.createRange();
      range.selectNodeContents(code);
      const selection = window.getSelection()!;
      selection.removeAllRanges();
      selection.addRange(range);
      return selection.toString();
    });
    expect(copied).toBe(command);
  } finally {
    await page.close();
  }
});

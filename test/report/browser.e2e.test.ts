// The HTML batch report (src/report) as a treasurer sees it: headless Chromium (Debian's package,
// test/report/chromium.ts) opens the reports the CLI's main() wrote for a plan and for a results file
// from file:// URLs, offline, and the test reads the rendered DOM against the plan file and the
// results file: totals per currency as exact decimal strings, row counts, status counts, the
// invalid row with its number. No request may leave the page but the document itself; script and
// markup injected through the batch's cells stay text. Screenshots and A4 PDFs are kept in
// test/report/screenshots/ (ignored by git) for a person to look at.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Decimal } from 'decimal.js';
import { PDFDocument } from 'pdf-lib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readResults, type ResultsTable } from '../../src/results/results.ts';
import { defaultSeed, startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { ROOT, cleanEnv, generateCsv, runMain, tempDirs } from '../engine/helpers.ts';
import { setStatus } from '../ops/helpers.ts';
import { launchChromium } from './chromium.ts';

const SHOTS = join(ROOT, 'test/report/screenshots');
const SCRIPT = '<script>alert(1)</script>';
const IMG = '"><img src=x onerror=alert(1)>';
const FORMULA = '=HYPERLINK("http://example.com/x","pay here")';
/** A4's width at 96 px per inch, less 12 mm side margins (the report's @page rule): 703 px. */
const A4_CONTENT_PX = Math.floor(((210 - 2 * 12) / 25.4) * 96);

const dirs = tempDirs('pb-report-');
let sb: LocalSandbox;
let browser: Browser;
let work: string;
let planPath: string;
let resultsPath: string;
let planHtml: string;
let resultsHtml: string;
/** reconcile --json's answer: the tie-out per currency. */
let reconciled: { tiesOut: boolean; totals: { currency: string; net: string; expectedNet: string }[] };

/** The batch's cells as CSV, quoting what needs it. */
const csvLine = (cells: string[]) => cells.map((c) => (/[",\r\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c)).join(',');

/** The batch file's name: markup too, shown in both reports. */
const BATCH = `payroll ${IMG}.csv`;

/**
 * Seven valid rows in three source currencies; a valid row's beneficiary name and narration are
 * markup, another's name a spreadsheet formula; the last row (row 9 as a spreadsheet numbers it) is invalid: its `withdrawal` cell is a
 * script tag (the message quotes it), and so is its reference.
 */
function batchCsv(): string {
  const parts = [
    generateCsv({ rows: 3, currencies: ['GBP'], prefix: 'GBP', amount: (i) => ['1200.10', '950.05', '0.30'][i]! }),
    generateCsv({ rows: 2, currencies: ['USD'], prefix: 'USD', amount: (i) => ['5200.00', '48.99'][i]! }),
    generateCsv({ rows: 2, currencies: ['NGN'], prefix: 'NGN', amount: (i) => ['650000.00', '12.50'][i]! }),
  ].map((t) => t.trim().split('\n'));
  const header = parts[0]![0]!.split(',');
  const col = (n: string) => header.indexOf(n);
  // generateCsv's cells hold no comma or quote: a plain split reads them back
  const rows = parts.flatMap((p) => p.slice(1)).map((l) => l.split(','));
  rows[1]![col('accountName')] = IMG;
  rows[1]![col('narration')] = SCRIPT;
  rows[3]![col('accountName')] = FORMULA;
  const bad = [...rows[0]!];
  bad[col('reference')] = SCRIPT;
  bad[col('withdrawal')] = SCRIPT;
  rows.push(bad);
  return [header.join(','), ...rows.map(csvLine)].join('\n') + '\n';
}

beforeAll(async () => {
  // One browser for the file. Its launch installs Debian's chromium first when it is missing (CI
  // installs it in .ci/run before npm test): hence the long timeout, spent only on such a run.
  browser = await launchChromium();
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
  work = await dirs.make();
  await writeFile(join(work, BATCH), batchCsv());
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(work, 'state') });
  // (each command by main() in this process: they set the scene, the pages are what is tested)
  const cli = async (args: string[], codes: number[], service = true) => {
    const r = await runMain(service ? [...args, '--base-url', sb.url, '--rate', '100'] : args, { cwd: work, env });
    expect(codes, `${args.join(' ')}: exit ${r.code}\n${r.stdout}\n${r.stderr}`).toContain(r.code);
    return r;
  };

  // The plan (exit 1: an invalid row), its report by the `report` command.
  planPath = join(work, 'payroll.plan.json');
  await cli(['plan', BATCH, '--out', planPath], [1]);
  planHtml = join(work, 'plan-report.html');
  await cli(['report', planPath, '--out', planHtml], [0], false);

  // The run of that plan; then the service moves some payouts on: one paid, one failed (and
  // refunded), one waiting for information; status reads them, reconcile ties the wallets out and
  // rewrites the results' report beside the results file with the tie-out.
  await cli(['run', '--plan', planPath, '--yes'], [0, 1]);
  resultsPath = join(work, BATCH.replace(/\.csv$/, '.results.csv'));
  const ids = (await readResults(resultsPath)).rows.map((r) => r.result.payoutId);
  await setStatus(sb, ids[0]!, 'PROCESSING');
  await setStatus(sb, ids[0]!, 'SUCCESSFUL');
  await setStatus(sb, ids[1]!, 'FAILED', { reason: 'bank rejected the account' });
  await setStatus(sb, ids[3]!, 'ADDITIONAL_INFO_REQUIRED');
  await cli(['status', resultsPath], [0, 1]);
  reconciled = JSON.parse((await cli(['reconcile', resultsPath, '--json'], [0])).stdout);
  expect(reconciled.tiesOut).toBe(true);
  resultsHtml = resultsPath.replace(/\.csv$/, '.reconciliation.html'); // reconcile's own report, with the tie-out
  expect(existsSync(resultsHtml), resultsHtml).toBe(true);
  await mkdir(SHOTS, { recursive: true });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await sb?.close();
  await dirs.remove();
});

interface Opened {
  page: Page;
  context: BrowserContext;
  requests: string[];
  dialogs: string[];
  errors: string[];
}

/**
 * Opens a report from its file:// URL in a fresh context, offline, recording every request, dialog,
 * console error and page error. The report's own Content-Security-Policy is bypassed: it would
 * block a fetch or an inline handler before it shows as a request or a dialog, and what is tested
 * here is the file itself (nothing to fetch, everything escaped); its CSP is checked apart.
 */
async function open(path: string): Promise<Opened> {
  const url = pathToFileURL(path).href;
  // JavaScript on, as in a person's browser: markup that got through unescaped would run.
  const context = await browser.newContext({
    offline: true,
    bypassCSP: true,
    javaScriptEnabled: true,
    viewport: { width: 1280, height: 900 },
  });
  const o: Omit<Opened, 'page'> = { context, requests: [], dialogs: [], errors: [] };
  // Anything but the document itself is recorded and refused.
  await context.route('**/*', async (route) => {
    const u = route.request().url();
    o.requests.push(u);
    if (u === url) await route.continue();
    else await route.abort();
  });
  const page = await context.newPage();
  page.on('request', (r) => o.requests.push(r.url()));
  page.on('requestfailed', (r) => o.requests.push(r.url()));
  page.on('dialog', (d) => {
    o.dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') o.errors.push(m.text());
  });
  page.on('pageerror', (e) => o.errors.push(e.message));
  await page.goto(url, { waitUntil: 'load' });
  return { page, ...o };
}

/** Only the document was requested: no http(s), no font, image, style or data fetched, nothing refused. */
async function onlyTheDocument(o: Opened, path: string): Promise<void> {
  expect(new Set(o.requests)).toEqual(new Set([pathToFileURL(path).href]));
  const resources = await o.page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name));
  expect(resources).toEqual([]);
  expect(o.errors).toEqual([]);
  // and, should a value ever get through, the file's own policy refuses any fetch and any script
  const csp = await o.page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
  expect(csp).toMatch(/default-src 'none'/);
  expect(csp).not.toMatch(/script-src/);
}

/** Nothing executed, nothing executable: no dialog, no script element, no on* attribute, the markup shown as text. */
async function inert(o: Opened): Promise<void> {
  expect(o.dialogs).toEqual([]);
  const found = await o.page.evaluate(() => ({
    scripts: document.querySelectorAll('script').length,
    handlers: [...document.querySelectorAll('*')].flatMap((e) =>
      [...e.attributes].filter((a) => a.name.toLowerCase().startsWith('on')).map((a) => `${e.tagName}[${a.name}]`),
    ),
    images: [...document.querySelectorAll('img')].map((i) => i.getAttribute('src')),
    // a link or a source outside the file (an anchor inside it or a data: image is no fetch)
    links: [...document.querySelectorAll('*')].flatMap((e) =>
      ['href', 'src', 'action', 'formaction', 'xlink:href']
        .map((a) => e.getAttribute(a))
        .filter((v): v is string => v !== null && !v.startsWith('#') && !v.startsWith('data:')),
    ),
    text: document.body.innerText,
  }));
  expect(found.scripts).toBe(0);
  expect(found.links, 'links').toEqual([]);
  expect(found.handlers).toEqual([]);
  expect(found.images).not.toContain('x');
  expect(found.text).toContain(SCRIPT);
}

/**
 * Saves a full-page screenshot and an A4 PDF (print media, the report's own @page margins), then
 * checks the print layout at A4's printable width: nothing sticks out or is cut (the page, every
 * table, chart and section, every cell's text), no amount or count wraps over two lines, no title
 * or short word is split inside, table text is not too small to read, the PDF's pages are A4.
 */
async function screenshotAndPrint(o: Opened, name: string): Promise<void> {
  const png = join(SHOTS, `${name}.png`);
  const pdf = join(SHOTS, `${name}.pdf`);
  await o.page.screenshot({ path: png, fullPage: true });
  await o.page.emulateMedia({ media: 'print' });
  const bytes = await o.page.pdf({ path: pdf, format: 'A4', printBackground: true });
  console.log(`report of ${name}: ${png} ${pdf}`);

  await o.page.setViewportSize({ width: A4_CONTENT_PX, height: 1100 });
  const layout = await o.page.evaluate(() => {
    const doc = document.documentElement;
    const nameOf = (e: Element) => e.getAttribute('data-section') ?? e.closest('[data-section]')?.getAttribute('data-section') ?? e.tagName;
    const where = (e: Element) => `${nameOf(e)}: ${e.textContent.trim()}`;
    const lineCount = (r: Range) => new Set([...r.getClientRects()].filter((b) => b.width > 0).map((b) => Math.round(b.top))).size;
    const boxes = [...document.querySelectorAll('table, svg, figure, section')].map((e) => {
      const parent = e.parentElement!;
      return { name: nameOf(e), right: e.getBoundingClientRect().right, scroll: parent.scrollWidth, client: parent.clientWidth };
    });
    const cells = [...document.querySelectorAll('td, th')];
    // "1,000,000.0" over "0": an amount or a count on two lines
    const wrapped = [...document.querySelectorAll('td[data-value]')]
      .filter((td) => /^-?\d[\d.]*$/.test(td.getAttribute('data-value')!))
      .filter((td) => {
        const r = document.createRange();
        r.selectNodeContents(td);
        return lineCount(r) > 1;
      })
      .map(where);
    // "Curren" over "cy", "FASTER_PAYME" over "NTS": a title, or a word of a cell, split inside.
    // A line may break after a hyphen; long tokens (hashes, ids, paths, references: monospace, or
    // over 16 characters) may wrap anywhere, but a status (ADDITIONAL_INFO_REQUIRED) stays whole.
    const split: string[] = [];
    for (const cell of cells) {
      const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (let n = walk.nextNode(); n; n = walk.nextNode()) {
        if (n.parentElement!.closest('.mono')) continue;
        for (const m of n.textContent!.matchAll(/[^\s-]+/g)) {
          if (cell.tagName === 'TD' && cell.getAttribute('data-field') !== 'status' && m[0].length > 16) continue;
          const r = document.createRange();
          r.setStart(n, m.index);
          r.setEnd(n, m.index + m[0].length);
          if (lineCount(r) > 1) split.push(`${where(cell)} (${m[0]})`);
        }
      }
    }
    return {
      scroll: doc.scrollWidth,
      client: doc.clientWidth,
      tables: document.querySelectorAll('table').length,
      boxes,
      // a cell whose content is wider than the cell spills over its neighbours (fixed layout)
      spilled: cells.filter((c) => c.scrollWidth > c.clientWidth + 1).map(where),
      wrapped,
      split,
      smallest: Math.min(...cells.map((c) => Number.parseFloat(getComputedStyle(c).fontSize))),
    };
  });
  expect(layout.tables).toBeGreaterThan(0);
  expect(layout.scroll, 'the page is wider than A4').toBeLessThanOrEqual(layout.client);
  for (const b of layout.boxes) {
    expect(b.right, `${b.name} sticks out of the page`).toBeLessThanOrEqual(layout.client + 0.5);
    expect(b.scroll, `${b.name} is cut by its container`).toBeLessThanOrEqual(b.client);
  }
  // cells whose text spills over their neighbours; amounts or counts on two lines; words split
  const { spilled, wrapped, split } = layout;
  expect({ spilled, wrapped, split }, `${name} printed on A4`).toEqual({ spilled: [], wrapped: [], split: [] });
  expect(layout.smallest, 'table text printed too small to read (px)').toBeGreaterThanOrEqual(10); // 7.5 pt

  const doc = await PDFDocument.load(bytes);
  expect(doc.getPageCount()).toBeGreaterThanOrEqual(1);
  expect(doc.getPageCount()).toBeLessThanOrEqual(6); // eight rows: a few pages, not one per row
  for (const p of doc.getPages()) {
    const { width, height } = p.getSize();
    // A4 is 595.28 × 841.89 points; Chromium rounds the page to whole CSS pixels
    expect(Math.abs(width - 595.28), `page width ${width}`).toBeLessThan(2);
    expect(Math.abs(height - 841.89), `page height ${height}`).toBeLessThan(2);
  }
}

/** The `data-value` of every cell of a table's rows keyed by a row attribute: key → field → value. */
async function cells(page: Page, section: string, key: string): Promise<Record<string, Record<string, string>>> {
  return page.evaluate(
    ({ section, key }) => {
      const out: Record<string, Record<string, string>> = {};
      for (const tr of document.querySelectorAll(`[data-section="${section}"] tr[${key}]`)) {
        const row: Record<string, string> = {};
        for (const td of tr.querySelectorAll('[data-field]'))
          row[td.getAttribute('data-field')!] = td.getAttribute('data-value') ?? td.textContent.trim();
        out[tr.getAttribute(key)!] = row;
      }
      return out;
    },
    { section, key },
  );
}

/** The identity table: field → data-value (or text). */
async function identity(page: Page): Promise<Record<string, string>> {
  return page.evaluate(() =>
    Object.fromEntries(
      [...document.querySelectorAll('[data-section="identity"] [data-field]')].map((td) => [
        td.getAttribute('data-field'),
        td.getAttribute('data-value') ?? td.textContent.trim(),
      ]),
    ),
  );
}

/** README's groups of statuses (src/report/README.md, "DOM hooks"). */
function groupOf(status: string): string {
  if (status === 'SUCCESSFUL') return 'paid';
  if (['PENDING', 'PROCESSING'].includes(status)) return 'in-progress';
  if (['FAILED', 'REJECTED'].includes(status)) return 'failed-refunded';
  if (status === 'ADDITIONAL_INFO_REQUIRED') return 'waiting-info';
  if (['INVALID', 'NOT_SENT', 'FAILED_TO_SEND', 'CONFLICT'].includes(status)) return 'not-sent';
  return 'unknown';
}

describe('the HTML report in headless Chromium', () => {
  it('a plan report: offline, inert, its totals and row counts those of the plan file, the invalid row listed, A4 when printed', async () => {
    const plan = JSON.parse(await readFile(planPath, 'utf8'));
    const o = await open(planHtml);
    try {
      await onlyTheDocument(o, planHtml);
      await inert(o);
      const { page } = o;
      expect(await page.getAttribute('body', 'data-kind')).toBe('plan');
      expect(await identity(page)).toMatchObject({
        sha256: plan.fileSha256,
        rows: '8',
        valid: '7',
        invalid: '1',
        toSend: String(plan.rows.length),
      });
      expect(plan.rows).toHaveLength(7);
      // totals per source currency: exactly the plan file's decimal strings
      const totals = await cells(page, 'totals', 'data-currency');
      expect(Object.keys(totals).sort()).toEqual(['GBP', 'NGN', 'USD']);
      for (const c of plan.currencies) {
        expect(totals[c.currency], c.currency).toMatchObject({
          rows: String(c.rows),
          amount: c.amount,
          fees: c.estimatedFees,
          total: c.total,
          ...(c.balance === undefined ? {} : { balance: c.balance, balanceAfter: c.balanceAfter }),
        });
        // and the plan file's rows add up to the same
        const mine = plan.rows.filter((r: { sourceCurrency: string }) => r.sourceCurrency === c.currency);
        expect(mine).toHaveLength(c.rows);
        expect(mine.reduce((s: Decimal, r: { sourceAmount: string }) => s.plus(r.sourceAmount), new Decimal(0)).toFixed(2)).toBe(c.amount);
      }
      // the chart by method: one group per currency, whose bars add up to the currency's amount
      const bars = await page.$$eval('[data-section="chart-method"] g[data-label]', (gs) =>
        gs.map((g) => [g.getAttribute('data-currency')!, g.getAttribute('data-value')!] as const),
      );
      const byCurrency: Record<string, string> = {};
      for (const [c, v] of bars) byCurrency[c] = new Decimal(byCurrency[c] ?? 0).plus(v).toFixed(2);
      expect(byCurrency).toEqual(
        Object.fromEntries(plan.currencies.map((c: { currency: string; amount: string }) => [c.currency, c.amount])),
      );
      // the invalid row: its number as a spreadsheet shows it (header row 1), its column, the value shown as text
      const invalid = await cells(page, 'invalid', 'data-row');
      expect(Object.keys(invalid)).toEqual(['9']);
      expect(invalid['9']).toMatchObject({ row: '9' });
      expect(invalid['9']!.column).toContain('withdrawal');
      expect(await page.textContent('[data-section="invalid"] tr[data-row="9"]')).toContain(SCRIPT);
      expect(await page.textContent('[data-section="identity"] [data-field="file"]')).toContain(IMG);
      await screenshotAndPrint(o, 'plan-report');
      await onlyTheDocument(o, planHtml);
    } finally {
      await o.context.close();
    }
  });

  it('a results report: offline, inert, its status counts, totals and tie-out those of the results and reconcile, A4 when printed', async () => {
    const table: ResultsTable = await readResults(resultsPath);
    expect(table.rows).toHaveLength(8);
    const o = await open(resultsHtml);
    try {
      await onlyTheDocument(o, resultsHtml);
      await inert(o);
      const { page } = o;
      expect(await page.getAttribute('body', 'data-kind')).toBe('results');
      expect(await identity(page)).toMatchObject({ rows: '8' });
      // status counts
      const counts: Record<string, number> = {};
      for (const r of table.rows) counts[r.result.status!] = (counts[r.result.status!] ?? 0) + 1;
      expect(counts).toMatchObject({ SUCCESSFUL: 1, FAILED: 1, ADDITIONAL_INFO_REQUIRED: 1, PENDING: 4, INVALID: 1 });
      const shown = await cells(page, 'status-counts', 'data-status');
      expect(Object.fromEntries(Object.entries(shown).map(([s, c]) => [s, Number(c.rows)]))).toEqual(counts);
      // paid / in progress / failed and refunded / waiting for information / not sent, per currency
      const want: Record<string, { rows: string; amount: Decimal; total?: Decimal }> = {};
      for (const r of table.rows) {
        const k = `${groupOf(r.result.status!)} ${r.cells.sourceCurrency}`;
        const g = (want[k] ??= { rows: '0', amount: new Decimal(0) });
        g.rows = String(Number(g.rows) + 1);
        g.amount = g.amount.plus(r.cells.sourceAmount!);
        if (r.result.totalDeductible) g.total = (g.total ?? new Decimal(0)).plus(r.result.totalDeductible);
      }
      const groups = await page.$$eval('[data-section="groups"] tr[data-group]', (trs) =>
        trs.map((tr) => [
          `${tr.getAttribute('data-group')} ${tr.getAttribute('data-currency')}`,
          Object.fromEntries(
            [...tr.querySelectorAll('[data-field]')].map((td) => [td.getAttribute('data-field'), td.getAttribute('data-value')]),
          ),
        ]),
      );
      expect(groups.map(([k]) => k).sort()).toEqual(Object.keys(want).sort());
      for (const [k, f] of groups as [string, Record<string, string>][]) {
        const w = want[k]!;
        expect(f, k).toMatchObject({ rows: w.rows, amount: w.amount.toFixed(2), ...(w.total ? { total: w.total.toFixed(2) } : {}) });
      }
      // the chart: each group's amount, per currency
      const bars = await page.$$eval('[data-section="chart-groups"] g[data-label]', (gs) =>
        gs.map((g) => [`${g.getAttribute('data-group')} ${g.getAttribute('data-currency')}`, g.getAttribute('data-value')]),
      );
      expect(Object.fromEntries(bars)).toEqual(Object.fromEntries(Object.entries(want).map(([k, w]) => [k, w.amount.toFixed(2)])));
      // every row listed, in the file's order
      const listed = await page.$$eval('[data-section="rows"] tr[data-row]', (trs) =>
        trs.map((tr) => [tr.getAttribute('data-row'), tr.getAttribute('data-status')]),
      );
      expect(listed).toEqual(table.rows.map((r) => [String(r.rowNumber), r.result.status]));
      // the rows that need action: waiting for information first, the failed one, the invalid one
      const action = await page.$$eval('[data-section="action"] tr[data-row]', (trs) =>
        trs.map((tr) => [tr.getAttribute('data-row'), tr.getAttribute('data-status')]),
      );
      const rowOf = (status: string) => String(table.rows.find((r) => r.result.status === status)!.rowNumber);
      expect(action).toEqual([
        [rowOf('ADDITIONAL_INFO_REQUIRED'), 'ADDITIONAL_INFO_REQUIRED'],
        [rowOf('FAILED'), 'FAILED'],
        ['9', 'INVALID'],
      ]);
      expect(await page.textContent(`[data-section="action"] tr[data-row="${rowOf('FAILED')}"] [data-field="name"]`)).toBe(IMG);
      // a formula is the text it is, as the batch had it (not the results file's neutralised '=...)
      expect(
        await page.textContent(`[data-section="action"] tr[data-row="${rowOf('ADDITIONAL_INFO_REQUIRED')}"] [data-field="name"]`),
      ).toBe(FORMULA);
      expect(await page.textContent('[data-section="action"] tr[data-row="9"] [data-field="reference"]')).toBe(SCRIPT);
      // the tie-out per wallet, as reconcile computed it
      const tieout = await cells(page, 'tieout', 'data-currency');
      expect(Object.keys(tieout).sort()).toEqual(['GBP', 'NGN', 'USD']);
      for (const t of reconciled.totals)
        expect(tieout[t.currency], t.currency).toMatchObject({ net: t.net, expectedNet: t.expectedNet, ok: 'yes' });
      await screenshotAndPrint(o, 'results-report');
      await onlyTheDocument(o, resultsHtml);
    } finally {
      await o.context.close();
    }
  });
});

describe('a plan report of 10,000 rows', () => {
  it('opens on its totals and approval section, and pages its payees without a script; the CSV beside holds them all', async () => {
    const seed = defaultSeed();
    for (const b of seed.businesses) b.wallets = b.wallets.map((w) => ({ ...w, balance: '1000000000.00' }));
    const big = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null, seed });
    try {
      const dir = await dirs.make();
      // each amount its own: no row is a probable duplicate of another
      await writeFile(join(dir, 'big.csv'), generateCsv({ rows: 10_000, prefix: 'BIG', amount: (i) => (1 + i / 100).toFixed(2) }));
      const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
      const args = ['plan', 'big.csv', '--out', 'big.plan.json', '--base-url', big.url, '--rate', '100'];
      const r = await runMain(args, { cwd: dir, env }); // (the plan sets the scene: main() in this process)
      expect(r.code, r.stderr.slice(-1500)).toBe(0);
      const report = join(dir, 'big.plan.html');
      const csv = (await readFile(join(dir, 'big.plan.payees.csv'), 'utf8')).trim().split('\r\n');
      expect(csv).toHaveLength(10_001);
      expect(csv[1]).toMatch(/^2,BIG-0001,/);

      const o = await open(report);
      await onlyTheDocument(o, report);
      const p = o.page;
      expect(o.dialogs).toEqual([]);
      expect(await p.locator('script').count()).toBe(0);
      // totals and the approval section before any list
      const order = await p.evaluate(() => [...document.querySelectorAll('[data-section]')].map((e) => e.getAttribute('data-section')));
      expect(order.indexOf('totals')).toBeLessThan(order.indexOf('payees'));
      expect(order.indexOf('approvals')).toBeLessThan(order.indexOf('payees'));
      expect(await p.locator('nav.pages label').count()).toBe(10_000 / 500);
      const row = (n: number) => p.locator(`table[data-section="payees"] tr[data-row="${n}"]`);
      const visibleRows = () =>
        p.evaluate(
          () => [...document.querySelectorAll('table[data-section="payees"] tr[data-row]')].filter((e) => e.checkVisibility()).length,
        );
      expect(await visibleRows()).toBe(500);
      expect(await row(2).isVisible()).toBe(true);
      expect(await row(502).isVisible()).toBe(false);
      await p.locator('nav.pages label[data-page="2"]').click();
      expect(await row(502).isVisible()).toBe(true);
      expect(await row(2).isVisible()).toBe(false);
      await p.locator('nav.pages label[data-page="20"]').click();
      expect(await row(10_001).isVisible()).toBe(true);
      expect(await visibleRows()).toBe(500);
      expect(await p.locator('[data-field="payees-csv"]').textContent()).toBe('big.plan.payees.csv');
      await o.context.close();
    } finally {
      await big.close();
    }
  }, 300_000);
});

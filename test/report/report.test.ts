// The HTML report (src/report): nothing in a cell can become markup, account numbers are masked,
// the DOM hooks the browser test reads hold the plan's and the results' exact figures. Unit tests:
// no service, no browser (test/report/browser.e2e.test.ts opens the file in Chromium).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { BatchPlan } from '../../src/engine/batch-plan.ts';
import type { PlanFile, PlanRow } from '../../src/engine/plan-file.ts';
import { planHtml, resultsHtml, timeText } from '../../src/report/html.ts';
import { planFixture } from '../engine/plan-fixture.ts';
import { planViewOffline, planViewOfPlan, readOfflineBatch, resultsViewOf } from '../../src/report/model.ts';
import { escapeHtml, safe } from '../../src/report/safe-html.ts';
import { planReportPathFor, readTieOut, reportPathFor, writePlanReport, writeReportOf } from '../../src/report/write-report.ts';
import { writeResults, type ResultsTable } from '../../src/results/results.ts';
import { batchColumns } from '../../src/results/read.ts';
import { mapColumns } from '../../src/input/batch-columns.ts';
import { HEADER, generateCsv } from '../engine/helpers.ts';

const INJECTIONS = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  "'><svg onload=alert(1)>",
  '=HYPERLINK("http://x.example/steal","click")',
  'javascript:alert(document.cookie)',
  '</style><script src="http://x.example/a.js"></script>',
  '</title></textarea><iframe src="http://x.example">',
  '<a href="http://x.example">link</a>',
  '<!-- comment --><base href="http://x.example/">',
  '+cmd|/c calc!A0',
];

const ALLOWED_TAGS = new Set(
  'html head meta title style body header footer section h1 h2 p strong span code div ul li table colgroup col thead tbody tr th td figure figcaption svg g text rect time input nav label'.split(
    ' ',
  ),
);

/**
 * Every "<" of the document is one of the report's own tags (the value of every attribute is
 * double-quoted, so a tag ends at the first ">" outside quotes): no tag outside the allowed set, no
 * event handler, no URL attribute, nothing left over that a browser could read as markup.
 */
function assertInert(doc: string): void {
  expect(doc.startsWith('<!doctype html>')).toBe(true);
  const body = doc.slice('<!doctype html>'.length);
  const style = /<style>([\s\S]*?)<\/style>/.exec(body);
  expect(style, 'one style element').not.toBeNull();
  expect(style![1]).not.toMatch(/[<>]|@import|url\(/i);
  const rest = body.replace(style![0], '');
  const tag = /<\/?([a-zA-Z][a-zA-Z0-9]*)((?:\s+[a-zA-Z_:][-a-zA-Z0-9_:.]*(?:="[^"<>]*")?)*)\s*\/?>/g;
  let m: RegExpExecArray | null;
  let leftover = '';
  let last = 0;
  while ((m = tag.exec(rest))) {
    leftover += rest.slice(last, m.index);
    last = m.index + m[0].length;
    const name = m[1]!.toLowerCase();
    expect(ALLOWED_TAGS.has(name), `tag <${name}>`).toBe(true);
    for (const a of m[2]!.matchAll(/([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:="([^"]*)")?/g)) {
      const attr = a[1]!.toLowerCase();
      expect(attr.startsWith('on'), `attribute ${attr}`).toBe(false);
      expect(['href', 'src', 'xlink:href', 'action', 'formaction', 'srcset', 'background', 'poster']).not.toContain(attr);
      expect(a[2] ?? '').not.toMatch(/javascript:|^\s*https?:/i);
    }
  }
  leftover += rest.slice(last);
  expect(leftover, 'a "<" that is not one of the report\'s tags').not.toContain('<');
  expect(doc).not.toMatch(/<script/i);
  expect((doc.match(/<\/style>/g) ?? []).length).toBe(1);
  expect(doc).toContain(`content="default-src 'none'`);
}

const dirs: string[] = [];
async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'pb-report-'));
  dirs.push(d);
  return d;
}
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

const csvCell = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
const col = (name: string) => HEADER.indexOf(name);

describe('safe-html', () => {
  it('escapes every interpolated value, nested fragments once, and offers no raw escape hatch', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    const inner = safe`<b>${'<i>'}</b>`;
    expect(safe`<p title="${'"onx="'}">${inner}${['<', safe`<br>`]}${undefined}${false}${0}</p>`.toString()).toBe(
      '<p title="&quot;onx=&quot;"><b>&lt;i&gt;</b>&lt;<br>0</p>',
    );
  });

  it('shows a format character from the service as its code point, never applies it (issue 29)', () => {
    expect(escapeHtml('rejected: \u202Eelbaliava ton\u200B')).toBe('rejected: [U+202E]elbaliava ton[U+200B]');
    expect(safe`<td>${'Zo\uFEFFë'}</td>`.toString()).toBe('<td>Zo[U+FEFF]ë</td>');
  });
});

describe('results report', () => {
  const table = (): ResultsTable => ({
    format: 'csv',
    inputColumns: ['reference', 'sourceAmount', 'sourceCurrency', 'accountName', 'iban', 'narration', INJECTIONS[0]!],
    rows: INJECTIONS.map((inj, i) => ({
      rowNumber: i + 2,
      cells: {
        reference: inj,
        sourceAmount: i % 2 ? '1,000.50' : '250.25',
        sourceCurrency: i < 5 ? 'EUR' : 'GBP',
        accountName: inj,
        iban: 'GB29NWBK60161331926819',
        narration: inj,
        [INJECTIONS[0]!]: inj,
      },
      result: {
        status: ['SUCCESSFUL', 'FAILED', 'ADDITIONAL_INFO_REQUIRED', 'INVALID', 'UNKNOWN_OUTCOME'][i % 5]!,
        idempotencyKey: `pb2-0123456789abcdef-${'0'.repeat(24)}-1`,
        totalDeductible: i % 5 === 0 ? '251.00' : undefined,
        refunded: i % 5 === 1 ? '1001.00' : undefined,
        errorCode: i % 5 === 3 ? 'INVALID_IBAN' : undefined,
        errorMessage: inj,
        statusReason: inj,
        nextStep: i % 5 === 2 ? inj : undefined,
      },
    })),
  });

  it('shows every hostile cell as text: no executable markup', async () => {
    const doc = resultsHtml(await resultsViewOf(table(), '/tmp/<script>x</script>.results.csv'));
    assertInert(doc);
    expect(doc).toContain('/tmp/&lt;script&gt;x&lt;/script&gt;.results.csv');
    expect(doc).toContain('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
    expect(doc).toContain('&lt;/title&gt;&lt;/textarea&gt;&lt;iframe src=&quot;http://x.example&quot;&gt;');
    expect(doc).toContain('=HYPERLINK(&quot;http://x.example/steal&quot;,&quot;click&quot;)');
  });

  it('masks account numbers and gives the counts and totals in the DOM hooks', async () => {
    const doc = resultsHtml(await resultsViewOf(table(), 'batch.results.csv'));
    expect(doc).not.toContain('GB29NWBK60161331926819');
    expect(doc).toContain('********6819');
    expect(doc).toMatch(/<body data-kind="results">/);
    expect(doc).toMatch(/<tr data-status="SUCCESSFUL">.*?data-field="rows" data-value="2"/);
    // paid EUR: row 2 (250.25), GBP: row 7 (1,000.50 read as 1000.50)
    expect(doc).toMatch(
      /<tr data-group="paid" data-currency="EUR">.*?data-field="amount" data-value="250.25".*?data-field="total" data-value="251.00"/,
    );
    expect(doc).toMatch(/<tr data-group="paid" data-currency="GBP">.*?data-field="amount" data-value="1000.50"/);
    expect(doc).toMatch(/<tr data-group="failed-refunded" data-currency="EUR">.*?data-field="refunded" data-value="1001.00"/);
    // action first: the information request (rows 4 and 9) before the unknown outcome and the rest
    const actionTable = /<table data-section="action">.*?<\/table>/s.exec(doc)![0];
    const order = [...actionTable.matchAll(/<tr data-row="(\d+)" data-status="([A-Z_]+)/g)].map((m) => m[2]);
    expect(order.slice(0, 2)).toEqual(['ADDITIONAL_INFO_REQUIRED', 'ADDITIONAL_INFO_REQUIRED']);
    expect(order).toContain('UNKNOWN_OUTCOME');
    expect(order).not.toContain('SUCCESSFUL');
  });

  it('says why a row needs action even when the service gave no reason; colours a status by its outcome', async () => {
    const t = table();
    for (const r of t.rows) r.result = { ...r.result, statusReason: undefined, errorCode: undefined, errorMessage: undefined };
    const doc = resultsHtml(await resultsViewOf(t, 'batch.results.csv'));
    expect(doc).toMatch(/<tr data-row="\d+" data-status="FAILED">.*?<td data-field="reason">Failed \(refunded\)<\/td>/);
    const fill = (group: string) => new RegExp(`<g [^>]*data-group="${group}"[^>]*>.*?fill="(#[0-9a-f]{6})"`).exec(doc)?.[1];
    expect(fill('paid')).toBe('#3a9a6a');
    expect(fill('failed-refunded')).toBe('#b83b4b');
  });
});

describe('rows that need action (issue 31)', () => {
  it('give each amount with its currency and each command whole, on a line of its own that wraps at spaces only', async () => {
    const id = '3f2a9c1e-5b7d-4e8a-9c0f-1a2b3c4d5e6f';
    const row = (n: number, status: string, extra: Record<string, string> = {}) => ({
      rowNumber: n,
      cells: { reference: `R-${n}`, sourceAmount: '1820', sourceCurrency: 'usd', accountName: 'Ann Lee', iban: 'GB29NWBK60161331926819' },
      result: { status, payoutId: id, ...extra },
    });
    const t: ResultsTable = {
      format: 'csv',
      inputColumns: ['reference', 'sourceAmount', 'sourceCurrency', 'accountName', 'iban'],
      rows: [
        row(2, 'ADDITIONAL_INFO_REQUIRED'),
        row(3, 'FAILED', { refunded: '1825.00', statusReason: 'bank closed the account' }),
        row(4, 'REJECTED'),
      ],
    };
    const doc = resultsHtml(await resultsViewOf(t, '/data/jan payroll.results.csv'));
    expect(doc).toContain('<td class="num" data-field="amount" data-value="1820.00" data-currency="USD">USD 1,820.00</td>');
    // each word of a command in a span that does not wrap: a line breaks only at a space between them
    const commands = [...doc.matchAll(/<code class="cmd" data-field="command">((?:<span>[^<\s]*<\/span> ?)+)<\/code>/g)].map((m) =>
      m[1]!.replace(/<\/?span>/g, ''),
    );
    expect(commands).toEqual([
      `payout-batch attach ${id} FILE...`,
      'payout-batch retry &#39;/data/jan payroll.results.csv&#39; --resend-failed',
      'payout-batch status &#39;/data/jan payroll.results.csv&#39;', // REJECTED, its refund not seen yet (quotes escaped)
    ]);
    expect(doc).toContain('code.cmd span { white-space: pre; }');
  });

  it('counts a payout whose row was copied in the file once, as status does, and says so', async () => {
    const row = (n: number) => ({
      rowNumber: n,
      cells: { reference: 'R-2', sourceAmount: '10', sourceCurrency: 'EUR' },
      result: { status: 'SUCCESSFUL', payoutId: 'p2', totalDeductible: '10.50' },
    });
    const t: ResultsTable = { format: 'csv', inputColumns: ['reference', 'sourceAmount', 'sourceCurrency'], rows: [row(2), row(3)] };
    const view = await resultsViewOf(t, 'b.results.csv');
    expect(view.groups).toEqual([{ group: 'paid', currency: 'EUR', rows: 1, amount: '10.00', total: '10.50' }]);
    expect(view.notes).toEqual(["Row 3: payout p2 is row 2's too: counted once."]);
  });

  it('takes the amount from the column status and reconcile take: the exact name over an alias before it', async () => {
    // a batch may hold both ("Net Pay" is kept as an extra column, with a note), so its results file does
    const header = ['reference', 'Net Pay', 'sourceAmount', 'sourceCurrency', 'destinationCurrency', 'destinationCountryCode'];
    const inputColumns = [...header, 'method', 'accountName', 'accountCurrency', 'narration'];
    expect(mapColumns(inputColumns, 'b.csv').fields.sourceAmount).toBe('sourceAmount');
    expect(batchColumns({ inputColumns }).sourceAmount).toBe('sourceAmount');
    const cells = { reference: 'R-2', 'Net Pay': '900.00', sourceAmount: '1000.00', sourceCurrency: 'EUR', accountName: 'A' };
    const t: ResultsTable = {
      format: 'csv',
      inputColumns,
      rows: [{ rowNumber: 2, cells, result: { status: 'SUCCESSFUL', payoutId: 'p2' } }],
    };
    const view = await resultsViewOf(t, 'b.results.csv');
    expect(view.rows[0]!.amount).toBe('1000.00');
    expect(view.groups).toMatchObject([{ group: 'paid', currency: 'EUR', rows: 1, amount: '1000.00' }]);
  });

  it('tells a row not due yet to wait for its day, not to be fixed', async () => {
    const t: ResultsTable = {
      format: 'csv',
      inputColumns: ['reference', 'sourceAmount', 'sourceCurrency'],
      rows: [
        {
          rowNumber: 2,
          cells: { reference: 'R-2', sourceAmount: '10', sourceCurrency: 'EUR' },
          result: {
            status: 'NOT_SENT',
            errorCode: 'NOT_DUE',
            errorMessage: 'not due until 2099-12-31 (ReqdExctnDt, a UTC day): not sent before that day',
          },
        },
      ],
    };
    const [action] = (await resultsViewOf(t, 'b.results.csv')).action;
    expect(action!.next).toMatch(/^Not due yet/);
  });

  it('lists a row held by sanctions screening: it waits for approvers, never "None"', async () => {
    const t: ResultsTable = {
      format: 'csv',
      inputColumns: ['reference', 'sourceAmount', 'sourceCurrency'],
      rows: [
        {
          rowNumber: 2,
          cells: { reference: 'R-2', sourceAmount: '10', sourceCurrency: 'EUR' },
          result: { status: 'SUCCESSFUL', payoutId: 'p2' },
        },
        { rowNumber: 3, cells: { reference: 'R-3', sourceAmount: '20', sourceCurrency: 'EUR' }, result: { status: 'HELD_SCREENING' } },
      ],
    };
    const view = await resultsViewOf(t, 'b.results.csv');
    expect(view.action.map((a) => a.row)).toEqual([3]);
    expect(view.action[0]!.next).toMatch(/screen --clear/);
  });
});

describe('plan report', () => {
  const plan = (): BatchPlan => ({
    batchId: 'a'.repeat(64),
    fileSha256: 'a'.repeat(64),
    env: 'local',
    file: '/tmp/payroll.csv',
    rows: 3,
    valid: 2,
    invalid: 1,
    toSend: [2, 3],
    created: [],
    notSent: new Map(),
    invalidRows: new Map([[4, { code: 'PROHIBITED_COUNTRY', message: INJECTIONS[1]! }]]),
    alreadyCreated: 0,
    toSettle: 0,
    currencies: [
      {
        currency: 'EUR',
        rows: 2,
        amount: '1234567.50',
        estimatedFees: '3.00',
        total: '1234570.50',
        balance: '2000000.00',
        balanceAfter: '765429.50',
      },
    ],
    corridorsNotEnabled: [],
    warnings: [INJECTIONS[5]!],
    requests: {
      preflight: 4,
      estimate: 10,
      quotes: 2,
      uploadUrls: 1,
      storagePuts: 1,
      initiates: 2,
      patches: 1,
      swapRequests: 0,
      listPages: 0,
      usedThisMonth: 100,
      quota: 10000,
    },
    swaps: [],
    swapRefusals: [],
    fundedBySwaps: false,
    shortfall: false,
    corridorBlocked: false,
  });

  it('holds the plan figures in the hooks, and says when nobody approved', () => {
    const doc = planHtml(planViewOfPlan(plan(), { environment: 'local', planFile: { fileSha256: 'b'.repeat(64) } }));
    assertInert(doc);
    expect(doc).toMatch(/<body data-kind="plan">/);
    const row = /<tr data-currency="EUR">(.*?)<\/tr>/.exec(doc)![1]!;
    expect(row).toContain('data-field="amount" data-value="1234567.50">1,234,567.50<');
    expect(row).toContain('data-field="fees" data-value="3.00"');
    expect(row).toContain('data-field="total" data-value="1234570.50"');
    expect(row).toContain('data-field="balanceAfter" data-value="765429.50"');
    expect(doc).toMatch(/data-section="invalid">.*<tr data-row="4">/);
    expect(doc).toContain('<p data-field="no-approvals">No approvals recorded</p>');
    expect(doc).toContain(`data-field="signed-sha256">${'b'.repeat(64)}<`);
  });

  it("shows each payee's amount with its currency, the destination currency and country, and whom it is for (what an approver signs)", () => {
    const row = (rowNumber: number, sourceCurrency: string, sourceAmount: number, destinationCurrency: string, country: string) =>
      ({
        rowNumber,
        reference: `PAY-${rowNumber}`,
        sourceCurrency,
        sourceAmount: String(sourceAmount),
        body: {
          sourceAmount,
          sourceCurrency,
          destinationCurrency,
          destinationCountryCode: country,
          method: 'SWIFT',
          beneficiary: { accountName: 'Cloudhost Inc', accountCurrency: destinationCurrency, accountNumber: '0123456789' },
          narration: 'x',
        },
        documents: [],
      }) as unknown as PlanRow;
    const doc = planHtml(
      planViewOfPlan(plan(), {
        environment: 'local',
        planFile: { rows: [row(2, 'NGN', 2350000, 'USD', 'USA'), { ...row(3, 'USD', 120.5, 'EUR', 'DEU'), ultimateCreditor: 'Ada Obi' }] },
      }),
    );
    assertInert(doc);
    const payee = (n: number) => new RegExp(`<tr data-row="${n}" data-currency="[A-Z]+">(.*?)</tr>`).exec(doc)![1]!;
    expect(payee(2)).toContain('data-field="amount" data-value="2350000.00" data-currency="NGN">NGN 2,350,000.00<');
    expect(payee(2)).toContain('<span data-field="destination">(USD USA)</span>');
    expect(payee(3)).toContain('data-currency="USD">USD 120.50<');
    expect(payee(3)).toContain('Cloudhost Inc for Ada Obi <span data-field="destination">(EUR DEU)</span>');
    expect(payee(2)).toContain('Cloudhost Inc <span');
  });

  it('says first why run would refuse the plan: a wallet short, a corridor not enabled', () => {
    const p = plan();
    p.currencies[0] = { ...p.currencies[0]!, balance: '1000.00', balanceAfter: '-1233570.50', shortfall: '1233570.50' };
    p.shortfall = true;
    p.corridorBlocked = true;
    p.notSent.set(5, { status: 'NOT_SENT', code: 'CORRIDOR_NOT_ENABLED', message: 'USD to NGN is not enabled' });
    const doc = planHtml(planViewOfPlan(p, { environment: 'local' }));
    assertInert(doc);
    const refusals = /<div class="alert" data-section="refusals">(.*?)<\/div>/.exec(doc)![1]!;
    expect(refusals).toContain('the EUR wallet is short by 1233570.50 EUR');
    expect(refusals).toContain('not enabled');
    expect(doc).toContain('data-field="shortfall" data-value="1233570.50"');
    expect(doc).toMatch(/<table data-section="not-sent">.*<tr data-row="5">.*CORRIDOR_NOT_ENABLED/);
  });

  it('shows who approved, escaped, and flags the maker', () => {
    const doc = planHtml(
      planViewOfPlan(plan(), {
        environment: 'local',
        approvals: {
          preparedBy: 'alice',
          approvals: [
            { name: 'alice', signedAt: '2026-01-01T10:00:00Z', publicKeyFingerprint: 'SHA256:aa', valid: true },
            { name: INJECTIONS[0]!, signedAt: INJECTIONS[1]!, publicKeyFingerprint: INJECTIONS[2]!, valid: false, reason: INJECTIONS[3] },
          ],
        },
      }),
    );
    assertInert(doc);
    expect(doc).toContain('data-field="preparedBy">alice<');
    expect(doc).toMatch(/<tr data-approver="alice" data-valid="true">.*does not count/);
    expect(doc).toContain('data-approver="&lt;script&gt;alert(1)&lt;/script&gt;" data-valid="false"');
    // without an approvers list, a signature that holds is not a "yes": anyone can make a key
    expect(doc).toMatch(/<tr data-approver="alice"[^]*?data-field="valid" class="">signature holds</);
    expect(doc).toContain('data-field="list-not-checked"');
    const checked = planHtml(
      planViewOfPlan(plan(), {
        environment: 'local',
        approvals: { approvals: [{ name: 'bob', signedAt: 't', publicKeyFingerprint: 'f', valid: true }], listChecked: true },
      }),
    );
    expect(checked).toMatch(/data-field="valid" class="ok">yes</);
    expect(checked).not.toContain('list-not-checked');
  });

  it('reads a hostile batch file offline: invalid rows with row, column and message; no fees claimed', async () => {
    const dir = await tmp();
    const lines = generateCsv({ rows: 3, currencies: ['EUR'] })
      .trim()
      .split('\n');
    const rows = lines.slice(1).map((l) => l.split(','));
    rows[0]![col('reference')] = INJECTIONS[0]!;
    rows[0]![col('narration')] = INJECTIONS[3]!;
    rows[1]![col('accountName')] = INJECTIONS[1]!;
    rows[2]![col('sourceAmount')] = 'twelve';
    rows[2]![col('reference')] = INJECTIONS[5]!;
    const file = join(dir, 'payroll.csv');
    await writeFile(file, [lines[0], ...rows.map((r) => r.map(csvCell).join(','))].join('\n') + '\n');
    const view = planViewOffline(await readOfflineBatch(file));
    expect(view.identity.invalid).toBe(1);
    const doc = planHtml(view);
    assertInert(doc);
    expect(doc).toMatch(/<body data-kind="plan" data-offline="true">/);
    expect(doc).toMatch(
      /<tr data-row="4"><td class="num" data-field="row">4<\/td><td data-field="column">(<div>[^<]*<\/div>)*<div>sourceAmount<\/div>/,
    );
    expect(doc).not.toContain('data-field="fees"');
    expect(doc).toContain('data-section="chart-method"');

    // the command's entry point: a batch file gives the offline report beside it
    const r = await writeReportOf(file);
    expect(r).toEqual({ kind: 'batch', path: join(dir, 'payroll.plan.html') });
    assertInert(await readFile(r.path, 'utf8'));
  });
});

describe('the plan report beside a plan file', () => {
  it('says once that the batch changed while the plan was made, not also that it was not read', async () => {
    const dir = await tmp();
    const file = join(dir, 'payroll.csv');
    await writeFile(file, generateCsv({ rows: 2, currencies: ['EUR'] }));
    const planPath = join(dir, 'payroll.plan.json');
    // the plan file names the bytes the plan was made of; the file on disk is another
    const planFile = { fileSha256: 'f'.repeat(64) } as PlanFile;
    const path = await writePlanReport(planFixture({ file }), { environment: 'local', planFile, planPath });
    const notes = /<ul data-section="notes">([\s\S]*?)<\/ul>/.exec(await readFile(path, 'utf8'))?.[1];
    expect(notes?.match(/<li>/g)).toHaveLength(1);
    expect(notes).toContain('The batch file changed while the plan was made');
  });

  it("names the plan file's batch label, as the report of the plan file does", async () => {
    const dir = await tmp();
    const file = join(dir, 'payroll.csv');
    await writeFile(file, generateCsv({ rows: 2, currencies: ['EUR'] }));
    const planFile = { fileSha256: 'f'.repeat(64), batchLabel: 'January payroll' } as PlanFile;
    const path = await writePlanReport(planFixture({ file }), { environment: 'local', planFile, planPath: join(dir, 'p.json') });
    expect(await readFile(path, 'utf8')).toContain('<td data-field="batchLabel">January payroll</td>');
  });
});

describe('where reports go, and the tie-out read back', () => {
  it('puts a report beside its output, never over it', () => {
    expect(reportPathFor('/d/payroll.results.csv')).toBe('/d/payroll.results.html');
    expect(reportPathFor('/d/plan.json')).toBe('/d/plan.html');
    expect(reportPathFor('/d/plan.html')).toBe('/d/plan.report.html');
    expect(planReportPathFor('/d/payroll.xlsx')).toBe('/d/payroll.plan.html');
  });

  /** A results file of one paid EUR row, with the reconciliation `reconcile` would write beside it. */
  async function reconciled(net: string): Promise<string> {
    const dir = await tmp();
    const results = join(dir, 'b.results.csv');
    await writeResults(results, {
      format: 'csv',
      inputColumns: ['reference', 'sourceAmount', 'sourceCurrency'],
      rows: [
        {
          rowNumber: 2,
          cells: { reference: 'R1', sourceAmount: '10.00', sourceCurrency: 'EUR' },
          result: { status: 'SUCCESSFUL', payoutId: 'p1', payoutRef: 'PO-1', idempotencyKey: 'k1', totalDeductible: '10.50' },
        },
      ],
    });
    // the CSV as reconcile writes it, and the tie-out beside it as JSON (the one the report reads)
    await writeFile(
      join(dir, 'b.results.reconciliation.csv'),
      '\uFEFFkind,row,reference,payoutId,payoutRef,status,currency,walletId,totalDeductible,debit,refund,net,transactionIds,createdAt,tiesOut,problem\r\n' +
        `row,2,R1,p1,PO-1,SUCCESSFUL,EUR,w_eur,10.50,-10.50,0.00,${net},t1,,yes,\r\n`,
    );
    const totals = [{ currency: 'EUR', walletIds: ['w_eur'], debited: '-10.50', refunded: '0.00', net, expectedNet: '-10.50', ok: true }];
    const summary = { ok: true, totals, problems: [], file: join(dir, 'b.results.reconciliation.csv') };
    await writeFile(join(dir, 'b.results.reconciliation.json'), JSON.stringify(summary));
    return results;
  }

  it("shows reconcile's own tie-out, read back from the JSON beside the results, not summed again", async () => {
    const results = await reconciled('-10.50');
    expect((await readTieOut(results)).tieOut?.totals[0]).toMatchObject({ currency: 'EUR', net: '-10.50', ok: true });
    const { path } = await writeReportOf(results);
    const doc = await readFile(path, 'utf8');
    expect(doc).toMatch(
      /<tr data-currency="EUR" data-wallet="w_eur">.*data-field="net" data-value="-10.50".*data-field="ok" class="ok">yes</,
    );
  });

  it("never shows the tie-out of other payouts: an earlier batch's, whose results file had this name", async () => {
    const results = await reconciled('-10.50');
    const json = join(results, '..', 'b.results.reconciliation.json');
    const summary = JSON.parse(await readFile(json, 'utf8')) as Record<string, unknown>;
    await writeFile(json, JSON.stringify({ ...summary, rows: [{ rowNumber: 2, payoutId: 'p-january' }] }));
    expect((await readTieOut(results)).problem).toMatch(/b\.results\.reconciliation\.json is of other payouts than this file's/);
    const doc = await readFile((await writeReportOf(results)).path, 'utf8');
    expect(doc).not.toContain('<table data-section="tieout"');
    await writeFile(json, JSON.stringify({ ...summary, rows: [{ rowNumber: 2, payoutId: 'p1' }] }));
    expect((await readTieOut(results)).tieOut?.totals[0]).toMatchObject({ currency: 'EUR', ok: true });
    // (a copy of the results written before the row was sent again: its payout is the one replaced)
    await writeFile(json, JSON.stringify({ ...summary, rows: [{ rowNumber: 2, payoutId: 'p1-again', earlier: [{ payoutId: 'p1' }] }] }));
    expect((await readTieOut(results)).tieOut?.totals[0]).toMatchObject({ currency: 'EUR', ok: true });
  });

  it('says a reconciliation amount it cannot read is a problem, and never counts it as 0', async () => {
    // (the report once summed the CSV again, and "-10,5O" became 0: a tie-out that did not exist)
    const results = await reconciled('-10,5O');
    const read = await readTieOut(results);
    expect(read.tieOut).toBeUndefined();
    expect(read.problem).toMatch(/b\.results\.reconciliation\.json cannot be read \(totals\.0\.net: not an amount\)/);
    const { path } = await writeReportOf(results);
    const doc = await readFile(path, 'utf8');
    expect(doc).not.toContain('<table data-section="tieout"');
    expect(doc).toMatch(/<ul data-section="notes"><li>The reconciliation .*totals\.0\.net: not an amount/);
  });

  it('a results amount that is no amount is a note, left out of its total, never a 0', async () => {
    const t: ResultsTable = {
      format: 'csv',
      inputColumns: ['reference', 'sourceAmount', 'sourceCurrency'],
      rows: [2, 3].map((n) => ({
        rowNumber: n,
        cells: { reference: `R${n}`, sourceAmount: n === 2 ? '10.00' : 'ten', sourceCurrency: 'EUR' },
        result: { status: 'PENDING', payoutId: `p${n}`, totalDeductible: '10.50' },
      })),
    };
    const v = await resultsViewOf(t, 'b.results.csv');
    expect(v.groups).toEqual([{ group: 'inProgress', currency: 'EUR', rows: 2, amount: '10.00', total: '21.00' }]);
    expect(v.notes).toEqual(['Row 3: sourceAmount "ten" is not an amount; it is left out of the totals of "In progress".']);
  });

  it('reads an amount the run paid as the run read it: "1.234,56", "1 234,56", "1\'234.56" and "12,34" are no note', async () => {
    // (statement-fuzz: the run paid each, the report called them no amount and left them out of its totals)
    const typed = ['1.234,56', '1 234,56', "1'234.56", '12,34', '1,234.56'];
    const t: ResultsTable = {
      format: 'csv',
      inputColumns: ['reference', 'sourceAmount', 'sourceCurrency'],
      rows: typed.map((a, i) => ({
        rowNumber: i + 2,
        cells: { reference: `R${i}`, sourceAmount: a, sourceCurrency: 'EUR' },
        result: { status: 'PENDING', payoutId: `p${i}`, totalDeductible: '1.00' },
      })),
    };
    const v = await resultsViewOf(t, 'b.results.csv');
    expect(v.notes).toEqual([]);
    expect(v.groups).toEqual([{ group: 'inProgress', currency: 'EUR', rows: 5, amount: '4950.58', total: '5.00' }]);
  });
});

describe('the results report as an audit file (issue 43, 15)', () => {
  const BATCH = 'f'.repeat(64);
  /** Rows 2..n+1: NGN 8,600,000.50 paid (row 2), then USD rows of 5,153.75, paid, failed, pending in turn. */
  const table = (n: number, extra: (i: number) => Partial<ResultsTable['rows'][number]['result']> = () => ({})): ResultsTable => ({
    format: 'csv',
    inputColumns: ['reference', 'sourceAmount', 'sourceCurrency', 'accountName'],
    rows: Array.from({ length: n }, (_, i) => ({
      rowNumber: i + 2,
      cells: {
        reference: i === 1 ? INJECTIONS[0]! : `REF-${i + 2}`,
        sourceAmount: i === 0 ? '8600000.50' : '5153.75',
        sourceCurrency: i === 0 ? 'NGN' : 'USD',
        accountName: i === 1 ? INJECTIONS[1]! : `Payee ${i + 2}`,
      },
      result: {
        status: i === 0 ? 'SUCCESSFUL' : ['SUCCESSFUL', 'FAILED', 'PENDING'][i % 3]!,
        idempotencyKey: `pb3-${'0'.repeat(32)}-1`,
        payoutId: `po-${i + 2}`,
        ...(i % 3 === 2 ? { errorCode: 'ACCOUNT_CLOSED', statusReason: 'the bank closed the account' } : {}),
        ...extra(i),
      },
    })),
  });
  /** Each bar of a chart: its label, value, currency and drawn width. */
  const bars = (doc: string, section: string) =>
    [
      ...(new RegExp(`<figure class="chart" data-section="${section}">.*?</figure>`, 's').exec(doc)?.[0] ?? '').matchAll(
        /<g data-label="([^"]*)" data-value="([^"]*)"[^>]*data-currency="([^"]*)"[^>]*>.*?<rect [^>]*width="(\d+)"/g,
      ),
    ].map(([, label, value, currency, width]) => ({ label, value, currency, width: Number(width) }));

  it('lists every row (reference, payee, amount with currency, status, payout id, note), paged, with the batch id in the header', async () => {
    assertInert(resultsHtml(await resultsViewOf(table(3), 'b.results.csv', { batchId: BATCH })));
    const doc = resultsHtml(await resultsViewOf(table(1001), 'b.results.csv', { batchId: BATCH }));
    expect(doc).toMatch(new RegExp(`<header>.*Batch <span class="mono" data-field="header-batchId">${BATCH}</span>`, 's'));
    expect(doc).toContain(`<td data-field="batchId" class="mono">${BATCH}</td>`);
    const list = /<table data-section="rows">.*?<\/table>/s.exec(doc)![0];
    expect([...list.matchAll(/<tr data-row="(\d+)"/g)].map((m) => Number(m[1]))).toEqual(Array.from({ length: 1001 }, (_, i) => i + 2));
    // in pages of 500, chosen without a script
    expect([...list.matchAll(/<tbody class="p(\d)" data-page="\d">/g)].map((m) => m[1])).toEqual(['1', '2', '3']);
    expect(doc).toMatch(/<nav class="pages" data-field="pages">Page: (<label for="rows-page-\d"[^>]*>\d<\/label>){3}<\/nav>/);
    expect(list).toContain(
      '<tr data-row="2" data-status="SUCCESSFUL" data-currency="NGN"><td class="num" data-field="row">2</td><td data-field="reference" class="mono">REF-2</td><td data-field="payee">Payee 2</td><td class="num" data-field="amount" data-value="8600000.50" data-currency="NGN">NGN 8,600,000.50</td><td data-field="status">SUCCESSFUL</td><td data-field="payoutId" class="mono">po-2</td></tr><tr data-row="3"',
    );
    expect(list).toMatch(
      /<tr data-row="4" data-status="PENDING".*?<\/tr><tr class="next" data-note-of="4"><td><\/td><td colspan="5" data-field="note">the bank closed the account: ACCOUNT_CLOSED<\/td><\/tr>/,
    );
    // a hostile cell is text
    expect(list).toContain('<td data-field="reference" class="mono">&lt;script&gt;alert(1)&lt;/script&gt;</td>');
    // without a batch id, the report says it is not known here
    expect(resultsHtml(await resultsViewOf(table(3), 'b.results.csv'))).toMatch(/data-field="batchId" class="mono">not known here/);
  });

  it('reads its rows once as they come and keeps only those it lists: 25,000 rows, the first 10,000 listed, counts and sums of all (issue 44)', async () => {
    const { rows, ...rest } = table(25_000);
    let read = 0;
    const view = await resultsViewOf(
      {
        ...rest,
        rows: (async function* () {
          for (const r of rows) {
            read++;
            yield r;
          }
        })(),
      },
      'b.results.csv',
    );
    expect(read).toBe(25_000);
    expect(view.identity.rows).toBe(25_000);
    expect(view.rows.map((r) => r.row)).toEqual(Array.from({ length: 10_000 }, (_, i) => i + 2));
    expect(view.statusCounts.reduce((n, c) => n + c.rows, 0)).toBe(25_000);
    // (rows 3, 6, 9, … failed: 8,333 rows need action, the 2,000 most urgent listed, in row order within their urgency)
    expect(view.action.length + view.actionOmitted).toBe(8_333);
    expect(view.action).toHaveLength(2_000);
    expect(view.action[0]!.row).toBe(3);
    expect(view.action.every((a, i) => i === 0 || a.row > view.action[i - 1]!.row)).toBe(true);
    expect(resultsHtml(view)).toContain('<p class="note" data-field="rows-omitted">The first 10,000 of 25,000 rows are listed here.</p>');
  });

  it('sizes bars by amount within each currency, never by rows: 8.6 M NGN is not shorter than 103 k USD', async () => {
    const doc = resultsHtml(await resultsViewOf(table(21), 'b.results.csv'));
    const drawn = bars(doc, 'chart-groups');
    expect(drawn.map((b) => b.currency).sort()).toEqual(['NGN', 'USD', 'USD', 'USD']);
    const ngn = drawn.find((b) => b.currency === 'NGN')!;
    // NGN's one row is all of NGN: the whole width (290); USD's groups share it by amount (6 paid, 7 in progress, 7 failed of 5,153.75)
    expect(ngn).toMatchObject({ value: '8600000.50', width: 290 });
    expect(drawn.filter((b) => b.currency === 'USD').map((b) => b.width)).toEqual([87, 102, 102]);
    for (const b of drawn.filter((x) => x.currency === 'USD')) expect(ngn.width).toBeGreaterThan(b.width);
    // the plan: one group per currency, a bar its share of the currency's total (no chart by rows)
    const view = planViewOfPlan(planFixture(), { environment: 'local' });
    view.byMethod = [
      { method: 'NIP', currency: 'NGN', rows: 11, amount: '8600000.50' },
      { method: 'ACH', currency: 'USD', rows: 15, amount: '90000.00' },
      { method: 'SWIFT', currency: 'USD', rows: 5, amount: '13075.00' },
    ];
    const plan = planHtml(view);
    expect(plan).not.toContain('bar length: rows');
    expect(bars(plan, 'chart-method').map((b) => [b.currency, b.width])).toEqual([
      ['NGN', 290],
      ['USD', 253],
      ['USD', 37],
    ]);
  });

  it('shows times on the reader clock with their zone, never a raw ISO string', async () => {
    expect(String(timeText('2026-11-29T16:27:02.123Z', 'Europe/Paris'))).toBe(
      '<time datetime="2026-11-29T16:27:02.123Z">2026-11-29 17:27:02 CET (UTC+01:00)</time>',
    );
    expect(String(timeText('2026-11-29T16:27:02Z', 'UTC'))).toContain('>2026-11-29 16:27:02 UTC</time>');
    expect(String(timeText('2026-11-29T16:27:02Z', 'Asia/Kolkata'))).toContain('>2026-11-29 21:57:02 UTC+05:30</time>');
    const textOf = (doc: string) => doc.replace(/<[^>]*>/g, ' ');
    const results = resultsHtml(await resultsViewOf(table(3), 'b.results.csv'));
    const plan = planHtml(
      planViewOfPlan(planFixture(), {
        environment: 'local',
        planFile: { createdAt: '2026-11-29T09:00:00.000Z' },
        approvals: { approvals: [{ name: 'Bob', signedAt: '2026-11-29T10:00:00.000Z', publicKeyFingerprint: 'fp', valid: true }] },
      }),
    );
    for (const doc of [results, plan]) {
      expect(textOf(doc)).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d/);
      expect(doc).toMatch(
        /Report written <time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (UTC|\S+ \(UTC[+-]\d\d:\d\d\)|UTC[+-]\d\d:\d\d)<\/time>/,
      );
    }
    expect(plan).toContain('<td data-field="createdAt"><time datetime="2026-11-29T09:00:00.000Z">');
    expect(plan).toContain('<td data-field="signedAt"><time datetime="2026-11-29T10:00:00.000Z">');
  });

  it("agrees with the tie-out on refunds: a replaced payout's refund counts, and a refund the results have not seen is named", async () => {
    const earlier = JSON.stringify([
      { payoutId: 'po-old', status: 'FAILED', currency: 'USD', amount: '5153.75', fee: '2.00', refunded: '5155.75' },
    ]);
    const t = table(2, (i) => (i === 1 ? { status: 'SUCCESSFUL', totalDeductible: '5155.75', earlierPayouts: earlier } : {}));
    const tieOut = {
      ok: true,
      problems: [],
      totals: [
        {
          currency: 'USD',
          walletIds: ['w'],
          debited: '-10311.50',
          refunded: '5155.75',
          net: '-5155.75',
          expectedNet: '-5155.75',
          ok: true,
        },
      ],
    };
    const v = await resultsViewOf(t, 'b.results.csv', { tieOut });
    expect(v.groups.find((g) => g.currency === 'USD')).toMatchObject({ group: 'paid', total: '10311.50', refunded: '5155.75' });
    expect(v.notes).toEqual([]);
    // the wallet shows a refund the results file has not recorded: said, with the command that records it
    const failed = table(3, (i) => (i === 1 ? { status: 'FAILED', totalDeductible: '5155.75' } : {}));
    const notes = (await resultsViewOf(failed, 'b.results.csv', { tieOut })).notes;
    expect(notes).toEqual([
      "USD: the results file says 0.00 refunded, the wallet's transactions 5155.75: payout-batch status b.results.csv records the refunds it sees.",
    ]);
  });
});

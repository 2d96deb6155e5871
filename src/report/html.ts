// The report as one self-contained HTML document: inline CSS and SVG, no script, nothing fetched
// (the CSP forbids it too), for a screen and A4. Every value is escaped by the safe tag; the data-*
// hooks are in README.md ("DOM hooks").
import type { SwapLine } from '../results/swap-summary.ts';
import { barChart } from './chart.ts';
import { safe, type HtmlValue, type SafeHtml } from './safe-html.ts';
import { STATUS_GROUP_WORDS, statusGroup, type StatusGroup } from '../engine/outcome.ts';
import { MAX_ROWS_LISTED, type ApprovalsInput, type PlanView, type ResultsView } from './model.ts';
import { groupThousands } from '../money.ts';
import { onBehalfOf } from '../engine/plan-file.ts';
import { plural } from '../text.ts';

// The program's own text, no value in it: the tag leaves it as written.
const CSS = safe`
@page { size: A4; margin: 14mm 12mm; }
* { box-sizing: border-box; }
body { font: 10pt/1.4 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: #1b1b1b; max-width: 200mm; margin: 0 auto; padding: 6mm; }
h1 { font-size: 16pt; margin: 0 0 2pt; }
h2 { font-size: 12pt; margin: 14pt 0 4pt; border-bottom: 2px solid #2f6db5; padding-bottom: 2pt; break-after: avoid; page-break-after: avoid; }
p { margin: 3pt 0; }
.sub { color: #555; }
table { width: 100%; border-collapse: collapse; table-layout: fixed; margin: 2pt 0 6pt; }
thead { display: table-header-group; }
th, td { border-bottom: 1px solid #d8d8d8; padding: 2pt 4pt; text-align: left; vertical-align: top; overflow-wrap: anywhere; word-break: break-word; }
th { background: #f1f4f8; font-weight: 600; }
tr { break-inside: avoid; page-break-inside: avoid; }
th { overflow-wrap: normal; word-break: normal; hyphens: manual; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; overflow-wrap: normal; word-break: normal; }
table[data-section="totals"], table[data-section="tieout"], table[data-section="groups"] { font-size: 9pt; }
table[data-section="invalid"], table[data-section="corridors"] { font-size: 8.5pt; }
table[data-section="action"], table[data-section="rows"] { font-size: 8pt; }
/* A command on a line of its own, whole: it wraps at spaces only, never inside an id, a flag or a path. */
table[data-section="action"] tr[data-row] td, table[data-section="rows"] tr[data-row]:has(+ tr.next) td { border-bottom: none; }
code.cmd { display: block; font-family: ui-monospace, "SF Mono", Menlo, Consolas, monospace; user-select: all; white-space: pre-wrap; }
/* (pre: a quoted path's runs of spaces, tab or line break are copied as they are, never folded into one space) */
code.cmd span { white-space: pre; }
th.num { white-space: normal; }
.mono { font-family: ui-monospace, "SF Mono", Menlo, Consolas, monospace; font-size: 8.5pt; }
.kv th { width: 28%; }
.alert { border: 2px solid #b83b4b; background: #fdf0f1; padding: 4pt 8pt; margin: 8pt 0; break-inside: avoid; }
.ok { color: #2a7a4a; font-weight: 600; }
.bad { color: #b83b4b; font-weight: 600; }
.note { color: #555; font-style: italic; }
figure.chart { margin: 6pt 0; break-inside: avoid; page-break-inside: avoid; }
figure.chart figcaption { font-weight: 600; margin-bottom: 2pt; }
figure.chart svg { max-width: 100%; height: auto; font: 9px system-ui, Helvetica, Arial, sans-serif; }
figure.chart text.group { font-weight: 600; }
ul { margin: 2pt 0; padding-left: 16pt; }
li { break-inside: avoid; }
footer { margin-top: 16pt; color: #777; font-size: 8pt; }
@media print { body { padding: 0; max-width: none; } h2 { margin-top: 10pt; } }
`;

// The CSP: no fetch of any kind when the file is opened, whatever a value holds. The notes come last.
function page(kind: 'plan' | 'results', title: string, offline: boolean, notes: readonly string[], body: HtmlValue[]): string {
  const notesPart = notes.length
    ? safe`<section><h2>Notes</h2><ul data-section="notes">${notes.map((n) => safe`<li>${n}</li>`)}</ul></section>`
    : '';
  return safe`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; base-uri 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="payout-batch">
<title>${title}</title>
<style>${CSS}</style>
</head>
<body data-kind="${kind}"${offline ? safe` data-offline="true"` : ''}>
${body}${notesPart}
<footer>Written by payout-batch. This file loads nothing and runs nothing: everything it shows is in it.</footer>
</body>
</html>
`.toString();
}

/** A time in the reader's zone, labelled ("2026-11-29 17:27:02 CET (UTC+01:00)"), in a <time>; a text that is no time as it is. */
export function timeText(iso: string | undefined, timeZone?: string): SafeHtml | string {
  const t = iso === undefined ? NaN : Date.parse(iso);
  if (Number.isNaN(t)) return iso ?? '';
  const parts = (timeZoneName: 'short' | 'longOffset') =>
    Object.fromEntries(
      new Intl.DateTimeFormat('en-GB', { ...TIME_FIELDS, timeZone, timeZoneName }).formatToParts(t).map((p) => [p.type, p.value]),
    );
  const p = parts('short');
  const offset = parts('longOffset').timeZoneName!.replace(/^GMT/, 'UTC');
  // (a zone without a name of its own is its offset: "GMT+5:30" reads as UTC+05:30)
  const zone = p.timeZoneName === 'UTC' ? 'UTC' : /^GMT[+-]/.test(p.timeZoneName!) ? offset : `${p.timeZoneName} (${offset})`;
  return safe`<time datetime="${new Date(t).toISOString()}">${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second} ${zone}</time>`;
}
const TIME_FIELDS = {
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
} as const;

const money = (field: string, value: string | undefined, cls = 'num') =>
  safe`<td class="${cls}" data-field="${field}" data-value="${value ?? ''}">${value === undefined ? '—' : groupThousands(value)}</td>`;
const count = (field: string, value: number | undefined) => money(field, value === undefined ? undefined : String(value));
const kv = (label: string, field: string, value: string | number | undefined, mono = false) =>
  value === undefined || value === ''
    ? ''
    : safe`<tr><th>${label}</th><td data-field="${field}"${mono ? safe` class="mono"` : ''}>${String(value)}</td></tr>`;
/** Under a list cut short (model.ts MAX_LISTED): how many more there are. */
const more = (n: number, what: string, then = '') =>
  n ? safe`<p class="note">and ${plural(n, `more ${what}`)} not listed here${then}.</p>` : '';
/** A count's row of a key-value table; none when the count is not known. */
const countRow = (label: string, field: string, value: number | undefined) =>
  value === undefined ? '' : safe`<tr><th>${label}</th>${count(field, value)}</tr>`;

// ---------------------------------------------------------------- plan

/** Each status group's `data-group` (a DOM hook, README.md) and colour in the charts: paid green, failed red, ... */
const GROUP_DOM: Record<StatusGroup, { id: string; color: string }> = {
  paid: { id: 'paid', color: '#3a9a6a' },
  inProgress: { id: 'in-progress', color: '#2f6db5' },
  waiting: { id: 'waiting-info', color: '#c07a1b' },
  failed: { id: 'failed-refunded', color: '#b83b4b' },
  notSent: { id: 'not-sent', color: '#7a7a7a' },
  unknown: { id: 'unknown', color: '#8d4fb3' },
};
const groupTitle = (status: string) => STATUS_GROUP_WORDS[statusGroup(status)].title;

/** `payeesCsv`: the name of the CSV of every payee written beside the report. */
export function planHtml(v: PlanView, o: { payeesCsv?: string } = {}): string {
  const id = v.identity;
  const env = id.environment ? safe` for the <strong>${id.environment}</strong> environment` : '';
  const identity = [
    kv('File', 'file', id.file, true),
    kv('SHA-256 of the file', 'sha256', id.sha256, true),
    countRow('Payout rows', 'rows', id.rows),
    countRow('Valid', 'valid', id.valid),
    countRow('Invalid', 'invalid', id.invalid),
    countRow('To send in this run', 'toSend', id.toSend),
    countRow('Already created (earlier run)', 'alreadyCreated', id.alreadyCreated),
    kv('Batch id', 'batchId', id.batchId, true),
    kv('Batch label', 'batchLabel', id.batchLabel),
    kv('Sheet', 'sheet', id.sheet),
    kv('Environment', 'environment', id.environment),
    kv('Service', 'baseUrl', id.baseUrl, true),
    id.createdAt ? safe`<tr><th>Plan made</th><td data-field="createdAt">${timeText(id.createdAt)}</td></tr>` : '',
  ];
  const r = v.requests;
  const left = r?.quota !== undefined && r.usedThisMonth !== undefined ? r.quota - r.usedThisMonth - r.estimate : undefined;
  return page('plan', `Payout plan: ${id.fileName}`, v.offline, v.notes, [
    safe`<header><h1>${v.offline ? 'Batch file (offline check)' : 'Payout plan'}: ${id.fileName}</h1><p class="sub">Report written ${timeText(v.generatedAt)}${env}. Nothing has been sent.</p></header>`,
    v.refusals.length > 0 &&
      safe`<div class="alert" data-section="refusals"><strong>As it stands, run would refuse this batch:</strong><ul>${v.refusals.map((r) => safe`<li>${r}</li>`)}</ul></div>`,
    safe`<section><h2>Batch</h2><table class="kv" data-section="identity"><tbody>${identity}</tbody></table></section>`,
    totalsSection(v),
    // (what approvers sign and who signed, before any list: a plan of 100,000 rows opens on them)
    approvalsSection(v, v.approvals),
    v.byMethod.length > 0 &&
      safe`<section><h2>Charts</h2>${barChart(
        'Amount per method (valid rows of the file, before fees), by source currency: a bar is its share of the currency',
        'chart-method',
        v.byMethod.map((m) => ({
          label: `${m.method} ${m.currency}`,
          value: m.amount,
          currency: m.currency,
          shown: `${groupThousands(m.amount)} ${m.currency} (${plural(m.rows, 'row')})`,
          data: { method: m.method },
        })),
      )}</section>`,
    v.corridors.length > 0 && corridorsSection(v),
    r &&
      safe`<section><h2>Requests against the monthly quota</h2><table class="kv" data-section="requests"><tbody>
<tr><th>Preflight (wallets, pairs, methods, countries)</th>${count('preflight', r.preflight)}</tr>
<tr><th>This run, about (including preflight)</th>${count('estimate', r.estimate)}</tr>
<tr><th>Used this month (as counted here)</th>${count('usedThisMonth', r.usedThisMonth)}</tr>
<tr><th>Monthly quota</th>${count('quota', r.quota)}</tr>
<tr><th>Left after this run, about</th>${count('leftAfter', left)}</tr>
</tbody></table></section>`,
    safe`<section><h2>Warnings</h2>${
      v.warnings.length
        ? safe`<ul data-section="warnings">${v.warnings.map((w) => safe`<li>${w}</li>`)}</ul>${more(v.warningsOmitted, 'warning')}`
        : safe`<p data-section="warnings">None.</p>`
    }</section>`,
    invalidSection(v),
    v.notSent.length > 0 &&
      safe`<section><h2>Valid rows left out of this run</h2><table data-section="not-sent"><colgroup><col style="width:10%"><col style="width:22%"><col></colgroup><thead><tr><th class="num">Row</th><th>Code</th><th>Why</th></tr></thead><tbody>${v.notSent.map(
        (r) =>
          safe`<tr data-row="${String(r.row)}"><td class="num" data-field="row">${String(r.row)}</td><td data-field="code">${r.code}</td><td data-field="message">${r.message}</td></tr>`,
      )}</tbody></table></section>`,
    v.swaps.length > 0 && swapsSection(v.swaps, 'Swaps proposed to fund short wallets'),
    v.payees && payeesSection(v.payees, o.payeesCsv),
  ]);
}

function totalsSection(v: PlanView): SafeHtml {
  if (v.offline)
    return safe`<section><h2>Totals per source currency (valid rows, before fees)</h2><table data-section="totals"><thead><tr><th>Currency</th><th class="num">Rows</th><th class="num">Amount</th></tr></thead><tbody>${v.totals.map(
      (t) => safe`<tr data-currency="${t.currency}"><td>${t.currency}</td>${count('rows', t.rows)}${money('amount', t.amount)}</tr>`,
    )}</tbody></table></section>`;
  const notKnown = v.totals.filter((t) => t.feesNotKnown);
  const feesNote = notKnown.length
    ? safe`<p class="note">Fees not known before sending (the service decides): ${notKnown.map((t) => `${t.currency} ${plural(t.feesNotKnown!, 'row')}`).join(', ')}.</p>`
    : '';
  const balanceNote = v.totals.some((t) => t.balance === undefined)
    ? safe`<p class="note">A wallet without a balance: the service gave none, so funds are not checked before sending.</p>`
    : '';
  return safe`<section><h2>Totals per source currency, and the wallets</h2><table data-section="totals"><colgroup><col style="width:10%"><col style="width:7%"><col><col style="width:12%"><col><col><col><col style="width:11%"></colgroup><thead><tr><th>Currency</th><th class="num">Rows</th><th class="num">Amount</th><th class="num">Estimated fees</th><th class="num">Total</th><th class="num">Balance now</th><th class="num">Balance after</th><th class="num">Short by</th></tr></thead><tbody>${v.totals.map(
    (t) =>
      safe`<tr data-currency="${t.currency}"><td>${t.currency}</td>${count('rows', t.rows)}${money('amount', t.amount)}${money('fees', t.estimatedFees)}${money('total', t.total)}${money('balance', t.balance)}${money('balanceAfter', t.balanceAfter)}${money('shortfall', t.shortfall, t.shortfall ? 'num bad' : 'num')}</tr>`,
  )}</tbody></table>${feesNote}${balanceNote}</section>`;
}

function corridorsSection(v: PlanView): SafeHtml {
  const rateText = (rates: string[]) =>
    rates.length === 0 ? '' : rates.length <= 3 ? rates.join(', ') : `${rates.length} quotes, ${rates[0]} … ${rates[rates.length - 1]}`;
  return safe`<section><h2>Corridors and rates</h2><table data-section="corridors"><colgroup><col style="width:22%"><col style="width:20%"><col style="width:7%"><col style="width:17%"><col><col style="width:10%"></colgroup><thead><tr><th>Corridor</th><th>Method</th><th class="num">Rows</th><th class="num">Amount (source)</th><th>Quoted rate</th><th>Enabled</th></tr></thead><tbody>${v.corridors.map(
    (c) =>
      safe`<tr data-corridor="${`${c.sourceCurrency}>${c.destinationCurrency}@${c.destinationCountryCode}`}"><td>${c.sourceCurrency} → ${c.destinationCurrency} (${c.destinationCountryCode})</td><td data-field="method">${c.method ?? ''}</td>${count('rows', c.rows)}${money('amount', c.amount)}<td data-field="rate" class="mono">${rateText(c.rates) || (v.offline ? 'quoted by plan' : '—')}</td><td data-field="enabled"${c.enabled === false ? safe` class="bad"` : ''}>${c.enabled === undefined ? '—' : c.enabled ? 'yes' : 'NO'}</td></tr>`,
  )}</tbody></table><p class="note">Rates as the service quoted them for the rows to send; the rate applied is the one of the payout.</p></section>`;
}

function invalidSection(v: PlanView): SafeHtml {
  const n = v.identity.invalid ?? v.invalid.length + v.invalidOmitted;
  if (!v.invalid.length)
    return safe`<section><h2>Invalid rows</h2><p data-section="invalid">${n ? `${plural(n, 'invalid row')} (details not available).` : 'None: every row is valid.'}</p></section>`;
  const lines = (items: (string | undefined)[]) => items.map((t) => safe`<div>${t ?? '—'}</div>`);
  return safe`<section><h2>Invalid rows (never sent): ${groupThousands(String(n))}</h2><table data-section="invalid"><colgroup><col style="width:8%"><col style="width:18%"><col style="width:20%"><col></colgroup><thead><tr><th class="num">Row</th><th>Column</th><th>Code</th><th>Problem</th></tr></thead><tbody>${v.invalid.map(
    (r) =>
      safe`<tr data-row="${String(r.row)}"><td class="num" data-field="row">${String(r.row)}</td><td data-field="column">${lines(r.problems.map((p) => p.column))}</td><td data-field="code">${lines(r.problems.map((p) => p.code))}</td><td data-field="message">${lines(r.problems.map((p) => p.message))}</td></tr>`,
  )}</tbody></table>${more(v.invalidOmitted, 'invalid row', ': payout-batch validate FILE --report problems.csv lists them all')}<p class="note">Row numbers as the spreadsheet shows them (the header is row 1).</p></section>`;
}

const ROWS_PER_PAGE = 500;

/** A long list in pages chosen without a script (a radio button and a CSS rule per page); printed, every page shows. */
function pagedTable<T>(section: string, items: readonly T[], head: SafeHtml, row: (item: T) => SafeHtml, total = items.length): SafeHtml {
  const listed = items.slice(0, MAX_ROWS_LISTED);
  const pages = Array.from({ length: Math.ceil(listed.length / ROWS_PER_PAGE) }, (_, i) =>
    listed.slice(i * ROWS_PER_PAGE, (i + 1) * ROWS_PER_PAGE),
  );
  const id = (i: number) => `${section}-page-${i + 1}`;
  // (selectors without quotes: a <style> element's text is not unescaped, so the tag's escaping must find nothing to change)
  const shown = (what: string) => pages.map((_, i) => `#${id(i)}:checked ~ ${what}.p${i + 1}`).join(', ');
  const table = `table[data-section=${section}]`;
  const pager =
    pages.length > 1
      ? safe`<style>${table} tbody { display: none; } ${shown('table tbody')} { display: table-row-group; } ${shown('nav label')} { background: #2f6db5; color: #fff; } nav.pages label { display: inline-block; padding: 1pt 4pt; margin: 1pt; border: 1px solid #d8d8d8; cursor: pointer; } input.page { position: absolute; opacity: 0; } @media print { ${table} tbody { display: table-row-group; } nav.pages { display: none; } }</style>${pages.map(
          (_, i) =>
            safe`<input type="radio" class="page" name="${section}-page" id="${id(i)}" aria-label="page ${String(i + 1)}"${i ? '' : safe` checked`}>`,
        )}<nav class="pages" data-field="pages">Page: ${pages.map((_, i) => safe`<label for="${id(i)}" class="p${String(i + 1)}" data-page="${String(i + 1)}">${String(i + 1)}</label>`)}</nav>`
      : '';
  const cut =
    total > listed.length
      ? safe`<p class="note" data-field="${section}-omitted">The first ${groupThousands(String(listed.length))} of ${groupThousands(String(total))} rows are listed here.</p>`
      : '';
  return safe`${cut}${pager}<table data-section="${section}">${head}${pages.map(
    (page, i) => safe`<tbody class="p${String(i + 1)}" data-page="${String(i + 1)}">${page.map(row)}</tbody>`,
  )}</table>`;
}

/** An amount cell with its currency before it; `data-value` the exact decimal. */
const amountCell = (amount: string, currency: string) =>
  safe`<td class="num" data-field="amount" data-value="${amount}" data-currency="${currency}">${currency} ${groupThousands(amount)}</td>`;

/** Every row to send, paged (the plan file and the CSV beside the report hold them all). */
function payeesSection(payees: NonNullable<PlanView['payees']>, csvName: string | undefined): SafeHtml {
  if (!payees.length) return safe`<section><h2>Payees</h2><p data-section="payees">None: no row to send.</p></section>`;
  const csv = csvName
    ? safe` Every row: <span class="mono" data-field="payees-csv">${csvName}</span>, beside this report, and the plan file.`
    : '';
  const head = safe`<colgroup><col style="width:6%"><col style="width:12%"><col><col style="width:14%"><col style="width:20%"><col style="width:17%"></colgroup><thead><tr><th class="num">Row</th><th>Reference</th><th>Beneficiary, paid in</th><th>Account</th><th>Method</th><th class="num">Amount</th></tr></thead>`;
  return safe`<section><h2>Payees: every row to send</h2>${pagedTable(
    'payees',
    payees,
    head,
    (p) =>
      safe`<tr data-row="${String(p.rowNumber)}" data-currency="${p.currency}"><td class="num" data-field="row">${String(p.rowNumber)}</td><td data-field="reference">${p.reference}</td><td data-field="beneficiary">${p.beneficiary}${p.ultimateCreditor ? ` for ${p.ultimateCreditor}` : ''} <span data-field="destination">(${p.destination})</span>${onBehalfOf(p) && safe` <span data-field="on-behalf">${onBehalfOf(p)}</span>`}</td><td data-field="account" class="mono">${p.account}</td><td data-field="method">${p.method}</td>${amountCell(p.amount, p.currency)}</tr>`,
  )}<p class="note">What each initiate body pays, in its source currency, and the destination currency and country (account numbers masked); the body, beneficiary included, and each document's bytes are what an approval signs.${csv}</p></section>`;
}

function approvalsSection(v: PlanView, a: ApprovalsInput | undefined): SafeHtml {
  const approvals = a?.approvals ?? [];
  const sent = v.totals.filter((t) => t.rows > 0);
  // what src/approvals signs: the plan file's bytes, the batch file's sha256, the rows and their amounts (before fees)
  const totals = sent.length ? sent.map((t) => `${t.currency} ${groupThousands(t.amount)}`).join(', ') : '(none)';
  const planFile = v.identity.planSha256
    ? safe` plan file with SHA-256 <span class="mono" data-field="signed-plan-sha256">${v.identity.planSha256}</span>:`
    : ' plan:';
  const what = v.offline
    ? safe`<p class="note">An approval signs a plan file (payout-batch plan FILE --out PLAN), not a batch file.</p>`
    : safe`<p>An approval signs this exact${planFile} the batch file with SHA-256 <span class="mono" data-field="signed-sha256">${v.identity.sha256 ?? ''}</span>${v.identity.sheet ? `, sheet "${v.identity.sheet}"` : ''}, its <span data-field="signed-rows">${String(v.identity.toSend ?? 0)}</span> rows to send (each one's initiate body, beneficiary included, and documents, by their digests) and their amounts before fees (${totals})${v.identity.environment ? `, for the ${v.identity.environment} environment` : ''}${v.identity.baseUrl ? ` at ${v.identity.baseUrl}` : ''}.</p>`;
  const list = approvals.length
    ? safe`<table><colgroup><col style="width:20%"><col style="width:22%"><col style="width:28%"><col style="width:10%"><col></colgroup><thead><tr><th>Approved by</th><th>Signed at</th><th>Key fingerprint</th><th>Valid</th><th>Note</th></tr></thead><tbody>${approvals.map(
        (x) =>
          safe`<tr data-approver="${x.name}" data-valid="${x.valid ? 'true' : 'false'}"><td data-field="name">${x.name}</td><td data-field="signedAt">${timeText(x.signedAt)}</td><td data-field="fingerprint" class="mono">${x.publicKeyFingerprint}</td><td data-field="valid" class="${x.valid ? (a?.listChecked ? 'ok' : '') : 'bad'}">${x.valid ? (a?.listChecked ? 'yes' : 'signature holds') : 'NO'}</td><td data-field="reason">${
            x.reason ?? (a?.preparedBy && x.name === a.preparedBy ? 'the person who prepared the plan: does not count' : '')
          }</td></tr>`,
      )}</tbody></table>${
        a?.listChecked
          ? ''
          : safe`<p class="note" data-field="list-not-checked">No approvers list was given (report --approvers FILE): whether each signer may approve was not checked.</p>`
      }`
    : safe`<p data-field="no-approvals">No approvals recorded</p>`;
  return safe`<section data-section="approvals"><h2>Approvals</h2><p>Prepared by: <strong data-field="preparedBy">${a?.preparedBy || 'not recorded'}</strong></p>${what}${list}</section>`;
}

// ---------------------------------------------------------------- results

export function resultsHtml(v: ResultsView): string {
  const id = v.identity;
  const batch = id.batchId ? safe` Batch <span class="mono" data-field="header-batchId">${id.batchId}</span>.` : '';
  const needing = v.action.length + v.actionOmitted;
  const identity = [
    kv('File', 'file', id.file, true),
    kv('Batch id', 'batchId', id.batchId ?? 'not known here (the journal of the run is in another state folder)', true),
    countRow('Rows', 'rows', id.rows),
    kv('Environment', 'environment', id.environment),
  ];
  const chart = barChart(
    'Amount per outcome, by source currency: a bar is its share of the currency',
    'chart-groups',
    v.groups.map((g) => ({
      label: STATUS_GROUP_WORDS[g.group].title,
      value: g.amount,
      currency: g.currency,
      shown: `${groupThousands(g.amount)} ${g.currency} (${plural(g.rows, 'row')})`,
      color: GROUP_DOM[g.group].color,
      data: { group: GROUP_DOM[g.group].id },
    })),
  );
  const action = v.action.length
    ? safe`<table data-section="action"><colgroup><col style="width:5%"><col style="width:14%"><col style="width:12%"><col style="width:11%"><col style="width:14%"><col style="width:26%"><col></colgroup><thead><tr><th class="num">Row</th><th>Reference</th><th>Beneficiary</th><th>Account</th><th class="num">Amount</th><th>Status</th><th>Why</th></tr></thead><tbody>${v.action.map(actionRow)}</tbody></table>${more(v.actionOmitted, 'row')}`
    : safe`<p data-section="action">None.</p>`;
  return page('results', `Payout results: ${id.fileName}`, false, v.notes, [
    safe`<header><h1>Payout results: ${id.fileName}</h1><p class="sub">Report written ${timeText(v.generatedAt)}${id.environment ? safe` for the <strong>${id.environment}</strong> environment` : ''}.${batch}</p></header>`,
    needing > 0 &&
      safe`<div class="alert" data-section="action-summary"><strong>${plural(needing, 'row')} need${needing === 1 ? 's' : ''} action</strong>: see "Rows that need action" below.</div>`,
    safe`<section><h2>Results file</h2><table class="kv" data-section="identity"><tbody>${identity}</tbody></table></section>`,
    safe`<section><h2>Status counts</h2><table data-section="status-counts"><thead><tr><th>Status</th><th>Means</th><th class="num">Rows</th></tr></thead><tbody>${v.statusCounts.map(
      (s) => safe`<tr data-status="${s.status}"><td>${s.status}</td><td>${groupTitle(s.status)}</td>${count('rows', s.rows)}</tr>`,
    )}</tbody></table></section>`,
    safe`<section><h2>Paid, in progress, failed and refunded, waiting for information</h2><table data-section="groups"><colgroup><col style="width:22%"><col style="width:11%"><col style="width:8%"><col><col><col></colgroup><thead><tr><th>Group</th><th>Currency</th><th class="num">Rows</th><th class="num">Amount</th><th class="num">Total deducted</th><th class="num">Refunded</th></tr></thead><tbody>${v.groups.map(
      (g) =>
        safe`<tr data-group="${GROUP_DOM[g.group].id}" data-currency="${g.currency}"><td>${STATUS_GROUP_WORDS[g.group].title}</td><td>${g.currency || '—'}</td>${count('rows', g.rows)}${money('amount', g.amount)}${money('total', g.total)}${money('refunded', g.refunded)}</tr>`,
    )}</tbody></table><p class="note">Amount: the rows' sourceAmount before fees; total deducted: amount plus fee, as the service gave it; both it and refunded count the payouts a row replaced (failed, refunded, sent again), as the tie-out does.</p>${chart}</section>`,
    safe`<section><h2>Rows that need action</h2>${action}</section>`,
    v.swaps.length > 0 && swapsSection(v.swaps, 'Swaps that funded short wallets'),
    v.tieOut && tieOutSection(v.tieOut),
    rowsSection(v.rows, id.rows),
  ]);
}

/** Every row of the results, for the audit: what was paid to whom, its status and payout id, paged. */
function rowsSection(rows: ResultsView['rows'], total: number): SafeHtml {
  const head = safe`<colgroup><col style="width:5%"><col style="width:15%"><col style="width:17%"><col style="width:15%"><col style="width:26%"><col></colgroup><thead><tr><th class="num">Row</th><th>Reference</th><th>Payee</th><th class="num">Amount</th><th>Status</th><th>Payout id</th></tr></thead>`;
  // (the note, when there is one, on a full-width line under its row, as in "Rows that need action")
  return safe`<section><h2>Every row</h2>${pagedTable(
    'rows',
    rows,
    head,
    (r) =>
      safe`<tr data-row="${String(r.row)}" data-status="${r.status}" data-currency="${r.currency}"><td class="num" data-field="row">${String(r.row)}</td><td data-field="reference" class="mono">${r.reference}</td><td data-field="payee">${r.name}</td>${amountCell(r.amount, r.currency)}<td data-field="status">${r.status}</td><td data-field="payoutId" class="mono">${r.payoutId}</td></tr>${r.note ? safe`<tr class="next" data-note-of="${String(r.row)}"><td></td><td colspan="5" data-field="note">${r.note}</td></tr>` : ''}`,
    total,
  )}<p class="note">Row numbers as the spreadsheet shows them (the header is row 1); every row is in the results file.</p></section>`;
}

/** A row of "Rows that need action", then what to do on a full-width line under it. */
function actionRow(r: ResultsView['action'][number]): SafeHtml {
  // each word unbreakable, the spaces between them the only places a long command wraps
  const words = (r.command ?? '').split(' ').map((w, i) => safe`${i ? ' ' : ''}<span>${w}</span>`);
  const command = r.command ? safe` <code class="cmd" data-field="command">${words}</code>` : '';
  return safe`<tr data-row="${String(r.row)}" data-status="${r.status}"><td class="num" data-field="row">${String(r.row)}</td><td data-field="reference" class="mono">${r.reference}</td><td data-field="name">${r.name}</td><td data-field="account" class="mono">${r.account}</td>${amountCell(r.amount, r.currency)}<td data-field="status">${r.status}</td><td data-field="reason">${r.reason || groupTitle(r.status)}</td></tr><tr class="next" data-next-of="${String(r.row)}"><td></td><td colspan="6" data-field="next">${r.next}${command}</td></tr>`;
}

/** The batch's swaps (spec §4.7, §2 Swap): one row per short currency, its amounts with their currencies and its rate. */
function swapsSection(swaps: readonly SwapLine[], title: string): SafeHtml {
  const amount = (field: string, value: string | undefined, currency: string | undefined) =>
    safe`<td class="num" data-field="${field}" data-value="${value ?? ''}" data-currency="${currency ?? ''}">${value === undefined ? '—' : `${groupThousands(value)} ${currency ?? ''}`.trim()}</td>`;
  return safe`<section><h2>${title}</h2><table data-section="swaps"><colgroup><col style="width:8%"><col style="width:24%"><col style="width:22%"><col style="width:11%"><col><col><col style="width:11%"></colgroup><thead><tr><th>For</th><th>Reference</th><th>Swap id</th><th>Status</th><th class="num">From</th><th class="num">To</th><th>Rate</th></tr></thead><tbody>${swaps.map(
    (s) =>
      safe`<tr data-currency="${s.currency}" data-reference="${s.reference}"><td>${s.currency}</td><td data-field="reference" class="mono">${s.reference}</td><td data-field="id" class="mono">${s.id ?? '—'}</td><td data-field="status">${s.status}</td>${amount('sourceAmount', s.sourceAmount, s.sourceCurrency)}${amount('destinationAmount', s.destinationAmount, s.destinationCurrency)}<td data-field="exchangeRate">${s.exchangeRate ?? '—'}</td></tr>`,
  )}</tbody></table></section>`;
}

function tieOutSection(t: NonNullable<ResultsView['tieOut']>): SafeHtml {
  const others = t.others ?? [];
  const verdict = !t.ok
    ? safe`<span class="bad">Does not tie out.</span>`
    : safe`<span class="ok">${others.length ? 'This batch ties out.' : 'Everything ties out.'}</span>`;
  const file = t.file ? safe` Reconciliation file: <span class="mono">${t.file}</span>` : '';
  const list = (section: string, lines: string[]) => safe`<ul data-section="${section}">${lines.map((p) => safe`<li>${p}</li>`)}</ul>`;
  const problems = [
    t.problems.length ? list('tieout-problems', t.problems) : '',
    others.length
      ? safe`<p>Not this batch's: ${plural(others.length, 'debit')} of the period that no row of it, no batch of this ledger and no swap explains.</p>${list('tieout-others', others)}`
      : '',
  ];
  return safe`<section><h2>Tie-out per wallet (reconcile)</h2><p>${verdict}${file}</p><table data-section="tieout"><colgroup><col style="width:10%"><col style="width:19%"><col><col><col><col><col style="width:9%"></colgroup><thead><tr><th>Currency</th><th>Wallet</th><th class="num">Debited</th><th class="num">Refunded</th><th class="num">Net</th><th class="num">Results say</th><th>Ties out</th></tr></thead><tbody>${t.totals.map(
    (w) =>
      safe`<tr data-currency="${w.currency}" data-wallet="${w.walletIds.join(' ')}"><td>${w.currency}</td><td class="mono">${w.walletIds.join(', ')}</td>${money('debited', w.debited)}${money('refunded', w.refunded)}${money('net', w.net)}${money('expectedNet', w.expectedNet)}<td data-field="ok" class="${w.ok ? 'ok' : 'bad'}">${w.ok ? 'yes' : 'NO'}</td></tr>`,
  )}</tbody></table>${problems}</section>`;
}

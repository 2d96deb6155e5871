// Where a report goes and how it is written: beside the output it describes, atomically (a
// reader never sees half a page), and how a command says so.
import { access, readFile, rename, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import * as XLSX from 'xlsx';
import { Dec, formatAmount, isCurrencyCode } from '../money.ts';
import { unneutralise } from '../results/neutralise.ts';
import type { TieOutView } from './model.ts';

/**
 * The report of an output file: its path with the extension replaced by .html
 * (payroll.results.csv → payroll.results.html, plan.json → plan.html); never the output itself.
 */
export function reportPathFor(output: string): string {
  const ext = extname(output);
  const stem = ext ? output.slice(0, -ext.length) : output;
  const path = `${stem}.html`;
  return path === output ? `${stem}.report.html` : path;
}

/** The report of `plan FILE` without --out: `<batch name>.plan.html` beside the batch file. */
export function planReportPathFor(batchFile: string): string {
  const ext = extname(batchFile);
  return join(dirname(batchFile), `${basename(batchFile, ext)}.plan.html`);
}

export async function writeReport(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, text);
  await rename(tmp, path);
}

/** The reconciliation file `reconcile` wrote beside a results file, if there is one. */
export async function findReconciliation(resultsFile: string): Promise<string | undefined> {
  const ext = extname(resultsFile);
  const stem = basename(resultsFile, ext);
  for (const e of ['csv', 'xlsx']) {
    const p = join(dirname(resultsFile), `${stem}.reconciliation.${e}`);
    try {
      await access(p);
      return p;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/**
 * The tie-out per wallet, read back from a reconciliation file (src/ops/reconcile.ts writes it):
 * per currency and wallet, the debits, refunds and nets of the batch's rows and of the payouts they
 * replaced, and the net the results say (-totalDeductible of each created row not refunded); a
 * line that does not tie out, or a debit not from this batch, fails the whole tie-out.
 */
export async function readTieOut(path: string): Promise<TieOutView> {
  const buf = await readFile(path);
  let records: string[][];
  if (path.endsWith('.xlsx')) {
    const wb = XLSX.read(buf, { type: 'buffer', dense: true });
    const ws = wb.Sheets[wb.SheetNames[0]!]!;
    records = XLSX.utils
      .sheet_to_json<unknown[]>(ws, { header: 1, raw: false, defval: '' })
      .map((r) => r.map((c) => (typeof c === 'string' ? c : String(c as number))));
  } else {
    const parsed: string[][] = parseCsv(buf.toString('utf8').replace(/^\uFEFF/, ''), { relaxColumnCount: true, skipEmptyLines: true });
    records = parsed;
  }
  const [header, ...lines] = records;
  if (!header) return { ok: false, wallets: [], problems: [`${path} is empty`], file: path };
  const at = (name: string) => header.indexOf(name);
  const col = {
    kind: at('kind'),
    currency: at('currency'),
    wallet: at('walletId'),
    debit: at('debit'),
    refund: at('refund'),
    net: at('net'),
    ties: at('tiesOut'),
    problem: at('problem'),
    reference: at('reference'),
    row: at('row'),
    status: at('status'),
    totalDeductible: at('totalDeductible'),
  };
  const get = (l: string[], i: number) => (i < 0 ? '' : unneutralise((l[i] ?? '').trim()));
  const dec = (t: string) => {
    const v = t.replace(/[,\s]/g, '');
    return /^-?\d+(\.\d+)?$/.test(v) ? new Dec(v) : new Dec(0);
  };
  // As reconcile totals them: the batch's rows and the payouts they replaced; a debit not from this
  // batch is a problem of the whole tie-out, not a movement of the batch.
  const byCurrency = new Map<string, { wallets: Set<string>; debited: Dec; refunded: Dec; net: Dec; expectedNet: Dec }>();
  const problems: string[] = [];
  let linesOk = true;
  for (const l of lines) {
    const kind = get(l, col.kind);
    if (kind === 'other credit') continue;
    if (get(l, col.ties) === 'NO') {
      linesOk = false;
      const row = get(l, col.row);
      const reference = get(l, col.reference);
      problems.push(`${row ? `row ${row}` : kind}${reference ? ` (${reference})` : ''}: ${get(l, col.problem) || 'does not tie out'}`);
    }
    if (kind === 'not from this batch') continue;
    const currency = get(l, col.currency);
    const w = byCurrency.get(currency) ?? {
      wallets: new Set<string>(),
      debited: new Dec(0),
      refunded: new Dec(0),
      net: new Dec(0),
      expectedNet: new Dec(0),
    };
    const wallet = get(l, col.wallet);
    if (wallet) w.wallets.add(wallet);
    w.debited = w.debited.plus(dec(get(l, col.debit)));
    w.refunded = w.refunded.plus(dec(get(l, col.refund)));
    w.net = w.net.plus(dec(get(l, col.net)));
    // a created row that was not refunded should have cost its totalDeductible
    if (kind === 'row' && !['FAILED', 'REJECTED'].includes(get(l, col.status)))
      w.expectedNet = w.expectedNet.minus(dec(get(l, col.totalDeductible)));
    byCurrency.set(currency, w);
  }
  const fmt = (d: Dec, c: string) => (isCurrencyCode(c) ? formatAmount(d, c) : d.toFixed());
  const wallets = [...byCurrency]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, w]) => ({
      currency,
      walletIds: [...w.wallets].sort(),
      debited: fmt(w.debited, currency),
      refunded: fmt(w.refunded, currency),
      net: fmt(w.net, currency),
      expectedNet: fmt(w.expectedNet, currency),
      ok: w.net.equals(w.expectedNet),
    }));
  return { ok: linesOk && wallets.every((w) => w.ok), wallets, problems, file: path };
}

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
 * replaced; a line that does not tie out, or a debit not from this batch, fails its currency.
 * The file has no "expected" total per wallet: that column stays empty here.
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
  };
  const get = (l: string[], i: number) => (i < 0 ? '' : unneutralise((l[i] ?? '').trim()));
  const dec = (t: string) => {
    const v = t.replace(/[,\s]/g, '');
    return /^-?\d+(\.\d+)?$/.test(v) ? new Dec(v) : new Dec(0);
  };
  const byCurrency = new Map<string, { wallets: Set<string>; debited: Dec; refunded: Dec; net: Dec; ok: boolean }>();
  const problems: string[] = [];
  for (const l of lines) {
    const kind = get(l, col.kind);
    if (kind === 'other credit') continue;
    const currency = get(l, col.currency);
    const w = byCurrency.get(currency) ?? {
      wallets: new Set<string>(),
      debited: new Dec(0),
      refunded: new Dec(0),
      net: new Dec(0),
      ok: true,
    };
    const wallet = get(l, col.wallet);
    if (wallet) w.wallets.add(wallet);
    w.debited = w.debited.plus(dec(get(l, col.debit)));
    w.refunded = w.refunded.plus(dec(get(l, col.refund)));
    w.net = w.net.plus(dec(get(l, col.net)));
    if (get(l, col.ties) === 'NO') {
      w.ok = false;
      const row = get(l, col.row);
      problems.push(
        `${row ? `row ${row}` : kind}${get(l, col.reference) ? ` (${get(l, col.reference)})` : ''}: ${get(l, col.problem) || 'does not tie out'}`,
      );
    }
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
      ok: w.ok,
    }));
  return { ok: wallets.every((w) => w.ok), wallets, problems, file: path };
}

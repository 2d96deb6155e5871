// A results file whose header treasury edited by hand (a column deleted, one added): `status`, `reconcile`,
// `attach`, `report` and the pain.002 keep every column they can tell apart, and refuse, naming the file and
// the columns, a header where two columns name a row's reference (or its amount, or currency).
import { readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { batchColumns } from '../../src/results/read.ts';
import { writeStatusReport } from '../../src/results/status-report.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { cleanEnv, paidBatch, runMain, sampleDoc, setStatus, startSb } from './helpers.ts';

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

/** How many of this process's file descriptors are open on `path`. */
const openOn = (path: string): number =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === realpathSync(path);
    } catch {
      return false;
    }
  }).length;

/** The CSV without its column `name`. */
function withoutColumn(text: string, name: string): string {
  const lines = text.split('\r\n');
  const at = lines[0]!
    .replace(/^\uFEFF/, '')
    .split(',')
    .indexOf(name);
  expect(at).toBeGreaterThan(0);
  return lines
    .map((l) =>
      l === ''
        ? l
        : l
            .split(',')
            .filter((_, i) => i !== at)
            .join(','),
    )
    .join('\n');
}

/** A paid batch of 3 rows (row 3 FAILED) whose results file bears an export's names ("Payment Reference", "Amount", "Currency"). */
async function exported(edit: (text: string) => string) {
  sb = await startSb();
  const b = await paidBatch(sb, { rows: 3 });
  await setStatus(sb, b.ids[1]!, 'PROCESSING');
  await setStatus(sb, b.ids[1]!, 'FAILED');
  const text = (await readFile(b.results, 'utf8')).replace('reference,sourceAmount,sourceCurrency,', 'Payment Reference,Amount,Currency,');
  await writeFile(b.results, edit(text));
  // (report is offline: no --base-url)
  const cli = (...args: string[]) =>
    runMain([...args, ...(args[0] === 'report' ? [] : ['--base-url', sb!.url])], { cwd: b.dir, env: cleanEnv() });
  return { ...b, cli };
}

describe('a results file with a required batch column deleted by hand', () => {
  // (mapColumns refused the header for its missing narration, so every command lost every column, the reference included)
  it('keeps each row named by its reference, with its amount and currency, in every command', async () => {
    const b = await exported((t) => withoutColumn(t, 'narration'));
    const pain002 = join(b.dir, 'status.pain002.xml');
    const st = await b.cli('status', b.results, '--status-report', pain002);
    expect(st.code, st.stderr).toBe(1); // row 3 failed
    expect(st.stdout).toContain('row 3 GEN-0002: PENDING -> FAILED');
    expect(st.stdout).toMatch(/row 3 GEN-0002 FAILED/);
    expect(st.stdout).toMatch(/GBP +39\.03 +13\.01 +26\.02/);

    const xml = await readFile(pain002, 'utf8');
    expect([...xml.matchAll(/<OrgnlEndToEndId>([^<]*)</g)].map((m) => m[1])).toEqual(['GEN-0001', 'GEN-0002', 'GEN-0003']);
    expect(xml).toContain('<OrgnlCtrlSum>33.03</OrgnlCtrlSum>');

    const rc = await b.cli('reconcile', b.results, '--json');
    expect(rc.code, rc.stderr).toBe(0);
    const rows = (JSON.parse(rc.stdout) as { rows: { reference?: string }[] }).rows;
    expect(rows.map((r) => r.reference)).toEqual(['GEN-0001', 'GEN-0002', 'GEN-0003']);

    const at = await b.cli('attach', 'GEN-0001', sampleDoc(), '--results', b.results);
    expect(at.code, at.stderr).toBe(0);
    expect(at.stdout).toMatch(/Attached 1 document/);

    const rp = await b.cli('report', b.results);
    expect(rp.code, rp.stderr).toBe(0);
    const html = await readFile(b.results.replace(/\.csv$/, '.html'), 'utf8');
    const shown = [
      ...html.matchAll(
        /data-row="\d+"[^]*?data-field="reference"[^>]*>([^<]*)<[^]*?data-field="amount" data-value="([^"]*)" data-currency="([^"]*)"/g,
      ),
    ];
    expect(shown.slice(-3).map((m) => m.slice(1).join(' '))).toEqual(['GEN-0001 10.00 GBP', 'GEN-0002 11.01 GBP', 'GEN-0003 12.02 GBP']);
  });
});

describe('a results file where a column added by hand names the reference too', () => {
  it('is refused by every command, naming the file and both columns, and left as it was', async () => {
    const b = await exported((t) =>
      t
        .split('\r\n')
        .map((l, i) => (l === '' ? l : `${l},${i === 0 ? 'Ref' : 'note'}`))
        .join('\r\n'),
    );
    const before = await readFile(b.results);
    const refused = new RegExp(
      `^payout-batch: .*${b.results.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ambiguous columns: "Payment Reference" and "Ref" both name reference`,
      'm',
    );
    for (const args of [
      ['status', b.results],
      ['status', b.results, '--status-report', join(b.dir, 'status.pain002.xml')],
      ['reconcile', b.results],
      ['attach', 'GEN-0001', sampleDoc(), '--results', b.results],
      ['report', b.results],
    ]) {
      const r = await b.cli(...args);
      expect([args[0], r.code], r.stdout + r.stderr).toEqual([args[0], 2]);
      expect(r.stderr).toMatch(refused);
      // (the file is closed: a handle left for the garbage collector to close is a warning now, an error in a later Node)
      expect([args[0], openOn(b.results)]).toEqual([args[0], 0]);
    }
    // (the pain.002 alone, as a watch writes it beside its results)
    await expect(writeStatusReport(b.results, join(b.dir, 'alone.xml'))).rejects.toMatchObject({
      name: 'ResultsError',
      message: expect.stringMatching(/"Payment Reference" and "Ref" both name reference/),
    });
    expect((await readFile(b.results)).equals(before)).toBe(true);
  });
});

describe('batchColumns', () => {
  it('maps each field one column names; with the file, refuses a header where the reference, amount or currency is not one column', () => {
    const inputColumns = ['Payment Reference', 'Payee', 'Name', 'Amount', 'Currency'];
    // (two aliases of accountName: left out, the rest kept; no narration, method... : not read here)
    expect(batchColumns({ inputColumns }, 'p.results.csv')).toEqual({
      reference: 'Payment Reference',
      sourceAmount: 'Amount',
      sourceCurrency: 'Currency',
    });
    expect(() => batchColumns({ inputColumns: ['Amount', 'Currency', 'method'] }, 'p.results.csv')).toThrow(
      /^p\.results\.csv: missing required column reference\. /,
    );
    expect(() => batchColumns({ inputColumns: ['reference', 'Amount', 'Net Pay', 'Currency'] }, 'p.results.csv')).toThrow(
      /^p\.results\.csv: ambiguous columns: "Amount" and "Net Pay" both name sourceAmount\./,
    );
    // without the file (listen's rewrite, run's look at a results file it would replace): what can be told apart
    expect(batchColumns({ inputColumns: ['Payment Reference', 'Ref', 'Amount'] })).toEqual({ sourceAmount: 'Amount' });
  });
});

// Issue 41, the output half, with real processes on the sandbox over HTTP (both readings: TEST_SHAPES;
// the status refresh and the reconciliation that follow a run, and the samples' runs, whose messages
// are what counts, by main() in this process):
// a batch carrying a pain.001's ids (MsgId, PmtInfId, InstrId) is run; another payment of the
// business drains the GBP wallet before its last row, which the service refuses INSUFFICIENT_FUNDS.
// `run --status-report` answers with a pain.002 (ACSP, ACSP, RJCT AM04); after one payout settles,
// `status --status-report` says ACSC for it; `reconcile --statement` writes a camt.053 whose entries
// and balances are the sandbox's wallet transactions. Every XML is valid against its schema.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { Dec } from '../../src/money.ts';
import { ISO_STATUS } from '../../src/results/status-report.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { startFront, type Front } from '../engine/front.ts';
import { parse } from 'csv-parse/sync';
import { ROOT, cleanEnv, cliIn, generateCsv, runCli } from '../engine/helpers.ts';
import { KEY, setStatus, startSb, workDir } from '../ops/helpers.ts';
import { schemaErrors, texts } from './validate.ts';

let sb: LocalSandbox | undefined;
let front: Front | undefined;
afterEach(async () => {
  await front?.close();
  await sb?.close();
  front = sb = undefined;
});

const API = '/v1/payout-api/payouts';
const get = async <T>(url: string): Promise<T> => (await (await fetch(url, { headers: { 'x-api-key': KEY } })).json()) as T;
const gbpWallet = async (url: string) =>
  (await get<{ data: { walletId: string; currency: string; balance: number | string }[] }>(url + API + '/wallets')).data.find(
    (w) => w.currency === 'GBP',
  )!;

/** The rows' pain.001 ids, as the pain.001 reader carries them into the results (iso-contract). */
async function erpBatch(dir: string): Promise<void> {
  const [header, ...lines] = generateCsv({ rows: 3, currencies: ['GBP'], prefix: 'ISO', amount: (i) => ['100.10', '250.05', '500.00'][i]! })
    .trim()
    .split('\n');
  const ids = (i: number) => `ERP-MSG-1,pain.001.001.03,PMT-${i < 2 ? 'A' : 'B'},${i === 0 ? 'INSTR-1' : ''},2025-01-31`;
  await writeFile(
    join(dir, 'erp.csv'),
    [`${header},MsgId,MsgNmId,PmtInfId,InstrId,ReqdExctnDt`, ...lines.map((l, i) => `${l},${ids(i)}`)].join('\n') + '\n',
  );
}

/** Before ISO-0003 goes (once the two others are answered), another payment of the business leaves 100 GBP less its fee in the wallet. */
async function drainingFront(url: string): Promise<Front> {
  let answered = 0;
  let drained = false;
  let release!: () => void;
  const othersDone = new Promise<void>((r) => (release = r));
  return startFront(url, async (req, forward) => {
    if (!req.path.endsWith('/initiate')) return forward();
    if (req.headers['idempotency-key'] !== idempotencyKey('ISO-0003', 1)) {
      const a = await forward();
      if (++answered === 2) release();
      return a;
    }
    await othersDone;
    if (drained) return forward();
    drained = true;
    const balance = new Dec(String((await gbpWallet(url)).balance));
    const body = { ...(JSON.parse(req.body) as object), sourceAmount: Number(balance.minus(100).toFixed(2)) };
    const other = await fetch(url + API + '/initiate', {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'idempotency-key': 'another-payment', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(other.status).toBe(201);
    return forward();
  });
}

/** The `<tag>…</tag>` blocks of a document. */
const blocks = (xml: string, tag: string) => [...xml.matchAll(new RegExp(`<${tag}>[^]*?</${tag}>`, 'g'))].map((m) => m[0]);

describe(`ISO 20022 out: pain.002 and camt.053 on the sandbox (${TEST_SHAPES})`, () => {
  it('answers a run, a status refresh and a reconciliation with valid messages matching the sandbox', async () => {
    sb = await startSb();
    const dir = await workDir('pb-iso-out-');
    await erpBatch(dir);
    front = await drainingFront(sb.url);
    const viaFront = cliIn(dir, front.url);
    const direct = cliIn(dir, sb.url);

    const run = await viaFront.cli('run', 'erp.csv', '--yes', '--status-report', 'run.pain002.xml');
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toMatch(/Status report: .*run\.pain002\.xml \(pain\.002\.001\.03\)/);
    const rows = await direct.results('erp.results.csv');
    expect(rows.map((r) => [r.status, r.errorCode])).toEqual([
      ['PENDING', ''],
      ['PENDING', ''],
      ['FAILED_TO_SEND', 'INSUFFICIENT_FUNDS'],
    ]);
    let xml = readFileSync(join(dir, 'run.pain002.xml'), 'utf8');
    expect(await schemaErrors(xml, 'pain.002.001.03')).toEqual([]);
    expect(texts(xml, 'OrgnlMsgId')).toEqual(['ERP-MSG-1']);
    expect(texts(xml, 'OrgnlPmtInfId')).toEqual(['PMT-A', 'PMT-B']);
    expect(texts(xml, 'OrgnlEndToEndId')).toEqual(['ISO-0001', 'ISO-0002', 'ISO-0003']);
    expect(texts(xml, 'OrgnlInstrId')).toEqual(['INSTR-1']);
    expect(texts(xml, 'TxSts')).toEqual(['ACSP', 'ACSP', 'RJCT']);
    expect(texts(xml, 'Cd')).toEqual(['AM04']);
    expect([texts(xml, 'GrpSts'), texts(xml, 'PmtInfSts')]).toEqual([['PART'], ['ACSP', 'RJCT']]);
    // the amounts and references are the sandbox's payouts'
    type Payout = { sourceAmount: number | string; transactionFees: number | string; payoutRef: string };
    const payouts = await Promise.all(
      rows.slice(0, 2).map(async (r) => {
        const p = await get<Payout & { data?: Payout }>(`${sb!.url}${API}/${r.payoutId}`);
        return p.data ?? p; // (the variant reading's envelope)
      }),
    );
    const amounts = texts(xml, 'InstdAmt').slice(0, 2);
    // (the variant reading answers the amount debited, fee included)
    const sent = (p: Payout) => new Dec(String(p.sourceAmount)).minus(sb!.shapes === 'variant' ? String(p.transactionFees) : 0);
    expect(amounts.map((a) => new Dec(a).toFixed())).toEqual(payouts.map((p) => sent(p).toFixed()));
    expect(amounts).toEqual(['100.10', '250.05']); // as the batch wrote them
    expect(texts(xml, 'AcctSvcrRef')).toEqual(payouts.map((p) => p.payoutRef));

    // one payout settles: `status` reports it ACSC, in the version asked for
    await setStatus(sb, rows[0]!.payoutId!, 'PROCESSING');
    await setStatus(sb, rows[0]!.payoutId!, 'SUCCESSFUL');
    const status = await direct.inProcess(
      'status',
      'erp.results.csv',
      '--status-report',
      'status.xml',
      '--status-report-version',
      'pain.002.001.10',
    );
    expect(status.stdout).toMatch(/Status report: .*status\.xml \(pain\.002\.001\.10\)/);
    xml = readFileSync(join(dir, 'status.xml'), 'utf8');
    expect(await schemaErrors(xml, 'pain.002.001.10')).toEqual([]);
    expect(texts(xml, 'TxSts')).toEqual(['ACSC', 'ACSP', 'RJCT']);
    expect(texts(xml, 'PmtInfSts')).toEqual(['ACSP', 'RJCT']);

    // the statement: the GBP wallet's movements of the period, its balances the service's
    const rec = await direct.inProcess('reconcile', 'erp.results.csv', '--statement', 'stmt.xml', '--json');
    expect(JSON.parse(rec.stdout).statement, rec.stderr).toMatchObject({ statements: 1, entries: 3 });
    xml = readFileSync(join(dir, 'stmt.xml'), 'utf8');
    expect(await schemaErrors(xml, 'camt.053.001.02')).toEqual([]);
    const wallet = await gbpWallet(sb.url);
    const txs = (
      await get<{ data: { amount: number | string; reference: string; wallet?: { walletId: string } }[] }>(
        `${sb.url}/api/public/transactions?limit=100`,
      )
    ).data
      .slice(0, 3)
      .reverse(); // the period's three, oldest first
    const entries = blocks(xml, 'Ntry');
    expect(entries.map((e) => texts(e, 'Amt')[0])).toEqual(txs.map((t) => new Dec(String(t.amount)).abs().toFixed()));
    expect(entries.map((e) => texts(e, 'CdtDbtInd')[0])).toEqual(['DBIT', 'DBIT', 'DBIT']);
    expect(entries.map((e) => texts(e, 'EndToEndId'))).toEqual([['ISO-0001'], ['ISO-0002'], []]);
    expect(entries.map((e) => texts(e, 'MsgId'))).toEqual([['ERP-MSG-1'], ['ERP-MSG-1'], []]);
    expect(entries.slice(0, 2).map((e) => texts(e, 'Amt')[1])).toEqual(rows.slice(0, 2).map((r) => new Dec(r.fee!).toFixed()));
    expect(texts(xml, 'Id')[1]).toBe(wallet.walletId.replace(/-/g, ''));
    const [opening, closing] = blocks(xml, 'Bal').map((b) => new Dec(texts(b, 'Amt')[0]!));
    expect(closing!.toFixed()).toBe(new Dec(String(wallet.balance)).toFixed());
    expect(opening!.minus(txs.reduce((a, t) => a.plus(new Dec(String(t.amount)).abs()), new Dec(0))).toFixed()).toBe(closing!.toFixed());
  }, 90_000);
});

describe(`ISO 20022 out: the sample pain.001 answered by a pain.002 of its family (${TEST_SHAPES})`, () => {
  it.each([
    ['payroll-2025-01-pain001-v03.xml', 'pain.002.001.03'],
    ['payroll-2025-01-pain001-v09.xml', 'pain.002.001.10'],
  ])(
    '%s → %s: one transaction status per row, under the ERP ids',
    async (sample, version) => {
      sb = await startSb();
      const dir = await workDir('pb-iso-sample-');
      await copyFile(join(ROOT, 'samples', sample), join(dir, sample));
      const { inProcess, results } = cliIn(dir, sb.url);
      const run = await inProcess(
        'run',
        sample,
        '--yes',
        '--documents',
        join(ROOT, 'samples/documents'),
        '--status-report',
        'erp.pain002.xml',
      );
      expect(run.stdout, run.stderr).toMatch(new RegExp(`Status report: .*erp\\.pain002\\.xml \\(${version.replace(/\./g, '\\.')}\\)`));
      const rows = await results(sample.replace(/\.xml$/, '.results.csv'));
      const xml = readFileSync(join(dir, 'erp.pain002.xml'), 'utf8');
      expect(await schemaErrors(xml, version)).toEqual([]);
      expect(texts(xml, 'OrgnlMsgId')).toEqual([texts(readFileSync(join(dir, sample), 'utf8'), 'MsgId')[0]]);
      expect(texts(xml, 'OrgnlMsgNmId')).toEqual([rows[0]!.MsgNmId]);
      expect(texts(xml, 'OrgnlPmtInfId')).toEqual([...new Set(rows.map((r) => r.PmtInfId))]);
      expect(texts(xml, 'OrgnlEndToEndId')).toEqual(rows.map((r) => r.reference));
      expect(texts(xml, 'TxSts')).toEqual(rows.map((r) => ISO_STATUS[r.status!]));
      expect(rows.filter((r) => r.payoutId).length).toBeGreaterThan(0);
    },
    120_000,
  );
});

describe(`ISO 20022 out: a watch answers a pain.001 with its pain.002 (${TEST_SHAPES})`, () => {
  it('writes <results>.pain002.xml beside the results of a pain.001 dropped in the inbox, and names it in the summary', async () => {
    sb = await startSb();
    const dir = await workDir('pb-iso-watch-');
    const config = { environment: 'sandbox', baseUrl: sb.url, settleSeconds: 1, rate: 200 };
    await writeFile(join(dir, 'payout-batch.json'), JSON.stringify(config));
    await mkdir(join(dir, 'inbox'));
    const sample = 'payroll-2025-01-pain001-v09.xml';
    await copyFile(join(ROOT, 'samples', sample), join(dir, 'inbox', sample));
    await writeFile(join(dir, 'inbox', `${sample}.ready`), '');
    const r = await runCli(['watch', dir, '--once'], {
      cwd: dir,
      env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'usage') }),
      timeoutMs: 60_000,
    });
    const claim = ['done', 'failed'].flatMap((sub) =>
      existsSync(join(dir, sub)) ? readdirSync(join(dir, sub)).map((c) => join(dir, sub, c)) : [],
    );
    expect(claim, r.stdout + r.stderr).toHaveLength(1);
    const summary = JSON.parse(readFileSync(join(claim[0]!, sample.replace(/\.xml$/, '.summary.json')), 'utf8'));
    expect(summary.statusReport).toBe(sample.replace(/\.xml$/, '.results.pain002.xml'));
    const xml = readFileSync(join(claim[0]!, summary.statusReport), 'utf8');
    expect(await schemaErrors(xml, 'pain.002.001.10')).toEqual([]);
    const rows = parse<Record<string, string>>(readFileSync(join(claim[0]!, summary.results), 'utf8'), { columns: true, bom: true });
    expect(texts(xml, 'TxSts')).toEqual(rows.map((x) => ISO_STATUS[x.status!]));
  }, 120_000);
});

// The plan of a resumed batch: every row is validated again, and a row the journal shows created
// is created (never sent again, counted at what the service debited) whatever the file says of it
// now. loadBatch with a journal lookup, then buildPlan and payableTotals, offline.
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { loadBatch, type LoadedBatch } from '../../src/engine/prepare.ts';
import type { JournalLookup } from '../../src/engine/session.ts';
import { buildPlan, feeMargin, payableTotals, requestCost, requestLimitReason } from '../../src/engine/batch-plan.ts';
import type { PreflightResult } from '../../src/engine/preflight.ts';
import { foldJournal, type FoldedJournal, type JournalLine } from '../../src/journal/lines.ts';
import { Dec } from '../../src/money.ts';
import { confirmQuestion } from '../../src/cli/send-batch.ts';
import { logRowDone, type RowOutcome } from '../../src/engine/outcome.ts';
import type { PayoutRow } from '../../src/validation/row-schemas.ts';
import { listView } from '../../src/files/spill.ts';
import { ROOT, batchOf, generateCsv, payoutRow, preflightOf } from './helpers.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const preflight = preflightOf;

/** The journal lines of a row created by an earlier run, as execute writes them (no probable-duplicate key). */
const createdLines = (ref: string, row: number, sourceAmount: number): JournalLine[] => [
  { t: 'initiating', ref, row, attempt: 1, key: `k-${ref}`, body: '{}', at: '2026-01-01T00:00:00Z' },
  {
    t: 'created',
    ref,
    attempt: 1,
    key: `k-${ref}`,
    requestId: 'r',
    at: '2026-01-01T00:00:01Z',
    payout: { id: `p-${ref}`, status: 'PENDING', sourceAmount, sourceCurrency: 'GBP', destinationCurrency: 'GBP', documents: 1 },
  },
];

const lookupOf =
  (folded: FoldedJournal): JournalLookup =>
  async () =>
  (ref) =>
    folded.rows.get(ref);

/** Three GBP rows, the first with a supporting document copied beside the batch, then moved away. */
async function documentMovedAway(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'pb-plan-'));
  dirs.push(dir);
  await cp(join(ROOT, 'samples', 'documents'), join(dir, 'documents'), { recursive: true });
  const csv = generateCsv({ rows: 3, currencies: ['GBP'], documentsEvery: 3 }).replaceAll(join(ROOT, 'samples'), dir);
  await writeFile(join(dir, 'payroll.csv'), csv);
  await rm(join(dir, 'documents'), { recursive: true });
  return join(dir, 'payroll.csv');
}

describe("validate's warnings in the plan, the confirmation and the run's log (issue 43, item 13)", () => {
  it('a row sent without its document: NO_DOCUMENT in the plan, in the question, and logged at warn when it is done', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pb-plan-nodoc-'));
    dirs.push(dir);
    const file = join(dir, 'payroll.csv');
    const [header, ...rows] = generateCsv({ rows: 3, currencies: ['GBP'], prefix: 'NODOC' })
      .trimEnd()
      .split('\n');
    // row 3: not a withdrawal, and no document
    await writeFile(file, [header, rows[0], rows[1]!.replace(/,true$/, ',false'), rows[2], ''].join('\n'));
    const batch = await loadBatch(file);
    expect(batch.rows.at(1)!.problems.map((p) => p.code)).toEqual(['NO_DOCUMENT']);
    const plan = buildPlan(batch, preflight(), foldJournal([]), 'sandbox', { allowPartial: false, mergeDocuments: false });
    expect(plan.warnings).toContain(
      '1 row (row 3) NO_DOCUMENT: no supporting document on a payout that is not a withdrawal: the service will hold it',
    );
    expect(confirmQuestion(plan, 'sandbox')).toContain(
      ', 1 without a supporting document (held by the service until one is attached) from sandbox?',
    );
    const logged: [string, Record<string, unknown>, string][] = [];
    const logger = {
      info: (o: object, m: string) => logged.push(['info', o as Record<string, unknown>, m]),
      warn: (o: object, m: string) => logged.push(['warn', o as Record<string, unknown>, m]),
    };
    const outcome = { status: 'PENDING', documents: [], payout: { id: 'p1', status: 'PENDING' } } as unknown as RowOutcome;
    logRowDone(logger as never, { rowNumber: 3, reference: 'NODOC-0002', outcome, noDocument: true }, {});
    logRowDone(logger as never, { rowNumber: 2, reference: 'NODOC-0001', outcome }, {});
    expect(logged.map(([level, o]) => [level, o.row, o.errorCode])).toEqual([
      ['warn', 3, 'NO_DOCUMENT'],
      ['info', 2, undefined],
    ]);
  });
});

describe("validate's warnings of many rows in the plan", () => {
  it('counts every row of a code and names its first three, each code once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pb-plan-warnings-'));
    dirs.push(dir);
    const file = join(dir, 'payroll.csv');
    const [header, ...rows] = generateCsv({ rows: 5, currencies: ['GBP'], prefix: 'WARN' })
      .trimEnd()
      .split('\n');
    // every row fills alipayId, which its method does not use; row 4 is not a withdrawal and has no document either
    const alipay = header!.split(',').indexOf('alipayId');
    const filled = rows.map((r, i) => {
      const cells = r.split(',');
      cells[alipay] = 'someone';
      return i === 2 ? cells.join(',').replace(/,true$/, ',false') : cells.join(',');
    });
    await writeFile(file, [header, ...filled, ''].join('\n'));
    const plan = buildPlan(await loadBatch(file), preflight(), foldJournal([]), 'sandbox', { allowPartial: false, mergeDocuments: false });
    expect(plan.warnings.filter((w) => / (FIELD_NOT_USED|NO_DOCUMENT): /.test(w)).map((w) => w.slice(0, w.indexOf(':')))).toEqual([
      '5 rows (rows 2, 3, 4 and 2 more) FIELD_NOT_USED',
      '1 row (row 4) NO_DOCUMENT',
    ]);
  });
});

describe('the plan of a resumed batch', () => {
  it('a created row whose document moved away is validated again (its problem kept) and planned as created', async () => {
    const file = await documentMovedAway();
    // the journal has no probable-duplicate key: the row is created all the same
    const folded = foldJournal([...createdLines('GEN-0001', 2, 10)]);
    const batch = await loadBatch(file, {}, lookupOf(folded));
    expect(batch.rows.at(0)!.payout).toBeUndefined();
    expect(batch.rows.at(0)!.problems.map((p) => p.code)).toEqual(['DOCUMENT_NOT_FOUND']);
    const plan = buildPlan(batch, preflight(), folded, 'sandbox', { allowPartial: false, mergeDocuments: false });
    expect(plan).toMatchObject({ valid: 3, invalid: 0, alreadyCreated: 1, toSend: [3, 4] });
    expect(plan.invalidRows.size).toBe(0);
    expect(batch.rows.at(0)!.reference).toBe('GEN-0001');
    expect(plan.created).toEqual([{ rowNumber: 2, debit: expect.objectContaining({ sourceAmount: 10, sourceCurrency: 'GBP' }) }]);
  });

  it('without the journal the same row is invalid', async () => {
    const file = await documentMovedAway();
    const batch = await loadBatch(file);
    expect(batch.rows.at(0)!.reference).toBeUndefined();
    const plan = buildPlan(batch, preflight(), foldJournal([]), 'sandbox', { allowPartial: false, mergeDocuments: false });
    expect(plan).toMatchObject({ valid: 2, invalid: 1, alreadyCreated: 0, toSend: [3, 4] });
    expect(plan.invalidRows.get(2)?.code).toBe('DOCUMENT_NOT_FOUND');
  });

  it('the payable totals count a created row at what the service debited, and a row to send at its amount', async () => {
    const file = await documentMovedAway();
    const folded = foldJournal([...createdLines('GEN-0001', 2, 9.5)]);
    const batch = await loadBatch(file, {}, lookupOf(folded));
    const plan = buildPlan(batch, preflight(), folded, 'sandbox', { allowPartial: false, mergeDocuments: false });
    const payable = payableTotals(batch, plan, (r) => (r.rowNumber === 2 ? 0.5 : undefined));
    // rows 3 and 4 of generateCsv: 11.01 and 12.02
    expect(payable.rows).toBe(3);
    expect(payable.amounts.get('GBP')?.toFixed(2)).toBe('32.53');
    expect(payable.withFees.get('GBP')?.toFixed(2)).toBe('33.03');
  });

  it('a journal line with a field this version does not know (a probable-duplicate key) is folded as without it', () => {
    const [initiating, created] = createdLines('GEN-0001', 2, 10);
    const withKey = foldJournal([{ ...initiating!, dup: 42 } as unknown as JournalLine, created!]);
    expect(withKey.rows.get('GEN-0001')).toEqual(foldJournal([initiating!, created!]).rows.get('GEN-0001'));
  });
});

describe('buildPlan, pure', () => {
  const payout = payoutRow;
  const wallet = (balance: number) => preflight({ wallets: [{ currency: 'GBP', balance } as PreflightResult['wallets'][number]] });
  // (plan --out: a quote per row to send)
  const options = { allowPartial: false, quoteRows: true, mergeDocuments: false };

  it('a shortfall blocks the batch; --allow-partial leaves out the rows that no longer fit, in file order', () => {
    const batch = batchOf([payout(2, '60'), payout(3, '50'), payout(4, '30')]);
    const blocked = buildPlan(batch, wallet(100), foldJournal([]), 'sandbox', options);
    expect(blocked).toMatchObject({ shortfall: true, toSend: [2, 3, 4], corridorBlocked: false });
    expect(blocked.currencies).toEqual([
      {
        currency: 'GBP',
        rows: 3,
        amount: '140.00',
        estimatedFees: '0.00',
        total: '140.00',
        balance: '100.00',
        balanceAfter: '-40.00',
        shortfall: '40.00',
      },
    ]);
    const partial = buildPlan(batch, wallet(100), foldJournal([]), 'sandbox', { ...options, allowPartial: true });
    expect(partial).toMatchObject({ shortfall: false, toSend: [2, 4], corridorBlocked: false });
    expect(partial.notSent.get(3)?.code).toBe('INSUFFICIENT_FUNDS');
    // quote + initiate per row sent (not the one left out), plus preflight's and a payout list page
    expect(partial.requests).toMatchObject({
      estimate: 2 * 2 + 3 + 1,
      preflight: 3,
      quotes: 2,
      initiates: 2,
      listPages: 1,
      uploadUrls: 0,
      patches: 0,
    });
  });

  it('a row whose outcome is unknown goes whatever the balance, with one request (its journalled body again)', () => {
    const batch = batchOf([payout(2, '60'), payout(3, '50')]);
    const folded = foldJournal([{ t: 'initiating', ref: 'R-3', row: 3, attempt: 1, key: 'k', body: '{}', at: '2026-01-01T00:00:00Z' }]);
    const plan = buildPlan(batch, wallet(70), folded, 'sandbox', { ...options, allowPartial: true });
    expect(plan).toMatchObject({ toSend: [2, 3], toSettle: 1 });
    expect(plan.requests.estimate).toBe(2 + 2 + 3 + 1);
  });

  it('a resume after a kill: a row of unknown outcome, its debit maybe in the balance, short-funds no row and asks no swap', () => {
    // 130.00 before; row 2's 60.00 initiated, the service debited it, the answer lost: 70.00 now
    const batch = batchOf([payout(2, '60'), payout(3, '50')]);
    const folded = foldJournal([{ t: 'initiating', ref: 'R-2', row: 2, attempt: 1, key: 'k', body: '{}', at: '2026-01-01T00:00:00Z' }]);
    const plan = buildPlan(batch, wallet(70), folded, 'sandbox', options);
    expect(plan).toMatchObject({ shortfall: false, toSend: [2, 3], toSettle: 1 });
    expect(plan.currencies[0]).toMatchObject({ rows: 2, total: '110.00', balance: '70.00', balanceAfter: '20.00' });
    expect(buildPlan(batch, wallet(70), folded, 'sandbox', { ...options, allowPartial: true })).toMatchObject({ toSend: [2, 3] });
    const pf = preflight({
      wallets: [
        { currency: 'GBP', balance: 70, walletId: 'w-GBP' },
        { currency: 'EUR', balance: 1000, walletId: 'w-EUR' },
      ],
      pairs: [{ baseCurrency: 'GBP', quoteCurrency: 'EUR', rate: 1.15, enabled: true }],
    } as Partial<PreflightResult>);
    expect(buildPlan(batch, pf, folded, 'sandbox', { ...options, fundBySwap: true }).swaps).toEqual([]);
  });

  it('a corridor not enabled holds its rows back (NOT_SENT, corridorBlocked); a prohibited one makes them invalid', () => {
    const batch = batchOf([payout(2, '10'), payout(3, '10', 'EUR'), payout(4, '10')]);
    const pf = preflight({
      wallets: [
        { currency: 'GBP', balance: 100 },
        { currency: 'EUR', balance: 100 },
      ] as PreflightResult['wallets'],
      rowIssues: new Map([
        [3, { status: 'NOT_SENT', code: 'CORRIDOR_NOT_ENABLED', message: 'not enabled' }],
        [4, { status: 'INVALID', code: 'PROHIBITED_DESTINATION', message: 'prohibited' }],
      ]),
    });
    const plan = buildPlan(batch, pf, foldJournal([]), 'sandbox', options);
    expect(plan).toMatchObject({ valid: 2, invalid: 1, toSend: [2], corridorBlocked: true });
    expect(plan.corridorsNotEnabled).toEqual([
      { sourceCurrency: 'EUR', destinationCurrency: 'EUR', destinationCountryCode: 'GBR', pairId: undefined, rows: 1 },
    ]);
    expect(plan.invalidRows.get(4)).toEqual({ code: 'PROHIBITED_DESTINATION', message: 'prohibited' });
  });
});

describe('what a batch costs, by kind', () => {
  const row = (n: number, documents: string[]): { payout: PayoutRow; settling: boolean } => ({
    payout: { rowNumber: n, reference: `R-${n}`, documents } as unknown as PayoutRow,
    settling: false,
  });
  // two copies of one invoice under two names: one content, one upload
  const digests = new Map([
    ['/d/invoice.pdf', 'a'.repeat(64)],
    ['/copy/invoice.pdf', 'a'.repeat(64)],
    ['/d/contract.pdf', 'b'.repeat(64)],
  ]);
  const sha256Of = (path: string) => digests.get(path);
  const five = [
    row(2, ['/d/invoice.pdf']),
    row(3, ['/d/invoice.pdf']),
    row(4, ['/copy/invoice.pdf']),
    row(5, ['/d/contract.pdf']),
    row(6, ['/d/contract.pdf']),
  ];

  it('3 rows naming one document and 2 another: 2 uploads (each content once), 5 initiates, no PATCH, no quote in a run', () => {
    expect(requestCost(five, sha256Of, { preflight: 4, mergeDocuments: false })).toEqual({
      estimate: 4 + 2 + 5 + 1,
      preflight: 4,
      quotes: 0,
      uploadUrls: 2,
      storagePuts: 2,
      initiates: 5,
      patches: 0,
      swapRequests: 0,
      listPages: 1,
    });
  });

  it('plan --out adds a quote per corridor, method and fee band, not per row; a second document adds a PATCH, merged it is one upload of its own', () => {
    const six = [...five, row(7, ['/d/invoice.pdf', '/d/contract.pdf'])];
    const usage = { fingerprint: 'f', month: '2026-11', used: 9_000, quota: 10_000, remaining: 1_000 };
    // rows 2-4 in one group, 5-7 in another: two quotes for six rows
    const quoteGroups = new Map(
      [2, 3, 4, 5, 6, 7].map((n) => [n, n < 5 ? 'GBP>GBP@GBR FASTER_PAYMENTS flat' : 'GBP>EUR@DEU SWIFT tier 1']),
    );
    expect(requestCost(six, sha256Of, { preflight: 4, quoteRows: true, quoteGroups, mergeDocuments: false, usage })).toMatchObject({
      estimate: 4 + 2 + 2 + 6 + 1 + 1,
      quotes: 2,
      uploadUrls: 2,
      patches: 1,
      swapRequests: 0,
      usedThisMonth: 9_000,
      remaining: 1_000,
    });
    expect(requestCost(six, sha256Of, { preflight: 4, mergeDocuments: true })).toMatchObject({ uploadUrls: 3, patches: 0 });
  });

  it('a row being settled resends its initiate alone', () => {
    const settling = { ...row(2, ['/d/invoice.pdf', '/d/contract.pdf']), settling: true };
    expect(requestCost([settling], sha256Of, { preflight: 0, mergeDocuments: false })).toMatchObject({
      estimate: 1 + 1,
      uploadUrls: 0,
      patches: 0,
      swapRequests: 0,
    });
  });

  it('--max-requests: refused above N with the kinds said, not at N', () => {
    const cost = requestCost(five, sha256Of, { preflight: 4, mergeDocuments: false });
    expect(requestLimitReason(cost, 12)).toBeUndefined();
    expect(requestLimitReason(cost, undefined)).toBeUndefined();
    expect(requestLimitReason(cost, 11)).toBe(
      "--max-requests 11, but this batch needs about 12 requests of the key's month (4 preflight, 2 upload-url, 5 initiate, 1 payout list page (an answer lacking the fee read back) (+ 2 storage PUTs, not counted))",
    );
  });
});

describe('fees exact or estimated, and the margin of the balance check', () => {
  const batch = batchOf([payoutRow(2, '100'), payoutRow(3, '100')]);
  const fees = new Map([
    [2, new Dec('2.00')],
    [3, new Dec('2.00')],
  ]);
  const planAt = (balance: string, quotedFees?: Map<number, Dec>) =>
    buildPlan(
      batch,
      preflightOf({ wallets: [{ currency: 'GBP', balance } as PreflightResult['wallets'][number]], estimatedFees: fees }),
      foldJournal([]),
      'sandbox',
      { allowPartial: false, mergeDocuments: false, quotedFees },
    );

  it('the margin is the larger of 2% of the estimated fees and a minor unit per row, rounded up', () => {
    expect(feeMargin(new Dec('4.00'), 2, 'GBP').toFixed()).toBe('0.08');
    expect(feeMargin(new Dec('0.10'), 3, 'GBP').toFixed()).toBe('0.03');
    expect(feeMargin(new Dec('1001'), 1, 'JPY').toFixed()).toBe('21');
    expect(feeMargin(new Dec(0), 0, 'GBP').toFixed()).toBe('0');
  });

  it('estimated fees: said, with their margin; a wallet that covers the estimate but not the margin is a warning, not a refusal', () => {
    const plan = planAt('204.05');
    expect(plan.shortfall).toBe(false);
    expect(plan.currencies[0]).toMatchObject({ total: '204.00', estimatedFees: '4.00', feesEstimated: 2, feeMargin: '0.08' });
    expect(plan.warnings).toEqual([
      expect.stringMatching(
        /^the GBP wallet covers the batch with its estimated fees \(204\.00, balance 204\.05\) but not the margin of 0\.08/,
      ),
    ]);
    expect(planAt('204.08').warnings).toEqual([]);
    expect(planAt('203.99')).toMatchObject({ shortfall: true, currencies: [expect.objectContaining({ shortfall: '0.01' })] });
  });

  it('quoted fees are exact: no margin, no warning at the exact total', () => {
    const plan = planAt('204.00', fees);
    expect(plan.currencies[0]).not.toHaveProperty('feesEstimated');
    expect(plan.currencies[0]).not.toHaveProperty('feeMargin');
    expect(plan).toMatchObject({ shortfall: false, warnings: [] });
  });
});

describe('the memory of a plan (issue 44)', () => {
  it('holds no whole row of the rows to send while it plans: the rows stay in their file', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const heap = () => {
      gc();
      return process.memoryUsage().heapUsed;
    };
    // each row read back afresh, as from the batch's spill file, with a 50 KB narration
    let most = 0;
    const rows = listView(1000, (i) => {
      if (i === 0) most = Math.max(most, heap()); // each pass over the rows starts here
      const payout = { ...payoutRow(i + 2), narration: Buffer.alloc(50_000, 'x').toString() };
      return { rowNumber: i + 2, cells: {}, payout, problems: [] };
    });
    const batch = { ...batchOf([]), rows: rows as unknown as LoadedBatch['rows'] }; // (read as a spill is)
    const before = heap();
    const plan = buildPlan(batch, preflightOf(), foldJournal([]), 'sandbox', { allowPartial: false, mergeDocuments: false });
    expect(plan.toSend).toHaveLength(1000);
    // 1,000 rows of 50 KB: 50 MB for each list of the plan that kept them (candidates, swap references)
    expect((most - before) / 1e6).toBeLessThan(10);
  });
});

// The tie-out of `reconcile`, pure: results rows + wallet transactions + payout states -> report;
// and the I/O step's two ways out without a report (service unreachable, unusable input).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PayoutClient } from '../../src/client/client.ts';
import { earlierPayoutsCell, parseEarlierPayouts } from '../../src/engine/money-totals.ts';
import { Dec } from '../../src/money.ts';
import { writeResults } from '../../src/results/results.ts';
import { reconcile, reconciliationCell, reconciliationLines } from '../../src/follow-up/reconciliation.ts';
import { normaliseTransaction, readPayouts } from '../../src/follow-up/reconcile-fetch.ts';
import { tieOut, type PayoutState, type ReconRow, type ReconTx } from '../../src/follow-up/tie-out.ts';

/** `fn` run with the host in the time zone `zone` (Node reads process.env.TZ again when it is set). */
async function inZone(zone: string, fn: () => Promise<void>): Promise<void> {
  const was = process.env.TZ;
  process.env.TZ = zone;
  try {
    await fn();
  } finally {
    if (was === undefined) delete process.env.TZ;
    else process.env.TZ = was;
  }
}

const row = (n: number, total: string, extra: Partial<ReconRow> = {}): ReconRow => ({
  rowNumber: n + 1,
  reference: `REF-${n}`,
  status: 'PENDING',
  payoutId: `p${n}`,
  payoutRef: `PO-${n}`,
  currency: 'USD',
  totalDeductible: total,
  ...extra,
});
const tx = (id: string, amount: string, reference: string, createdAt: string, extra: Partial<ReconTx> = {}): ReconTx => ({
  id,
  amount: new Dec(amount),
  currency: 'USD',
  walletId: 'w-usd',
  reference,
  createdAt,
  ...extra,
});
const states = (entries: [string, PayoutState][]) => new Map(entries);
const t = (m: number) => `2025-01-31T10:${String(m).padStart(2, '0')}:00.000Z`;

describe('tieOut', () => {
  it('ties out to the cent with exact decimals (0.1 + 0.2 is 0.3 here), per currency', () => {
    const rows = [row(1, '0.1'), row(2, '0.2'), row(3, '1000000000000.07')];
    // newest first, as the listing gives them
    const txs = [tx('t3', '-1000000000000.07', 'PO-3', t(3)), tx('t2', '-0.2', 'PO-2', t(2)), tx('t1', '-0.1', 'PO-1', t(1))];
    const r = tieOut({ rows, transactions: txs, payouts: states([]) });
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.totals).toEqual([
      {
        currency: 'USD',
        walletIds: ['w-usd'],
        debited: '-1000000000000.37',
        refunded: '0.00',
        net: '-1000000000000.37',
        expectedNet: '-1000000000000.37',
        ok: true,
      },
    ]);
    expect(r.rows.map((x) => [x.debit, x.refund, x.net, x.ok])).toEqual([
      ['-0.10', '0.00', '-0.10', true],
      ['-0.20', '0.00', '-0.20', true],
      ['-1000000000000.07', '0.00', '-1000000000000.07', true],
    ]);
    expect(r.counts).toMatchObject({ created: 3, tiedOut: 3 });
    // more decimals than the currency has are shown as they are, never rounded away
    const odd = tieOut({ rows: [row(1, '0.105')], transactions: [tx('t1', '-0.1050', 'PO-1', t(1))], payouts: states([]) });
    expect([odd.ok, odd.rows[0]!.debit]).toEqual([true, '-0.105']);
  });

  it('a FAILED payout ties out with its refund (net 0) and fails without it', () => {
    const rows = [row(1, '105.00'), row(2, '52.50')];
    const debits = [tx('t2', '-52.5', 'PO-2', t(2)), tx('t1', '-105', 'PO-1', t(1))];
    const payouts = states([
      ['p1', { status: 'FAILED' }],
      ['p2', { status: 'SUCCESSFUL' }],
    ]);
    const refunded = tieOut({ rows, transactions: [tx('t3', '105.00', 'PO-1', t(3)), ...debits], payouts });
    expect(refunded.ok).toBe(true);
    expect(refunded.rows[0]).toMatchObject({ status: 'FAILED', debit: '-105.00', refund: '105.00', net: '0.00', ok: true });
    expect(refunded.totals[0]).toMatchObject({ debited: '-157.50', refunded: '105.00', net: '-52.50', expectedNet: '-52.50', ok: true });
    expect(refunded.counts.failedRefunded).toBe(1);

    const notYet = tieOut({ rows, transactions: debits, payouts });
    expect(notYet.ok).toBe(false);
    expect(notYet.problems).toContain('row 2 REF-1: FAILED but no refund in the wallet transactions yet');
    expect(notYet.totals[0]!.ok).toBe(false);

    const partial = tieOut({ rows, transactions: [tx('t3', '100', 'PO-1', t(3)), ...debits], payouts });
    expect(partial.problems).toContain('row 2 REF-1: FAILED: refunded 100.00 of 105.00 debited');
  });

  it("a debit no row explains, up to now or --until, is listed unexplained with its wallet, time, reference and id, apart from the batch's tie-out", () => {
    const rows = [row(1, '10.00'), row(2, '20.00')];
    const txs = [
      tx('t9', '-5', 'PO-LATER', t(9)), // a minute after the batch's last movement: still judged
      tx('t2', '-20', 'PO-2', t(3)),
      tx('tf', '-7.25', 'PO-FOREIGN', t(2)),
      tx('tc', '500', 'TOPUP-1', t(2)), // a top-up: listed, not a failure
      tx('t1', '-10', 'PO-1', t(1)),
      tx('t0', '-3', 'PO-EARLIER', t(0)), // before the batch's first movement
    ];
    const r = tieOut({ rows, transactions: txs, payouts: states([]) });
    expect(r.ok).toBe(true); // not this batch's: another state folder's or ledger's (issue 43 item 5)
    expect(r.unexplained).toEqual([
      { id: 't9', type: 'DEBIT', amount: '-5.00', currency: 'USD', walletId: 'w-usd', reference: 'PO-LATER', createdAt: t(9) },
      { id: 'tf', type: 'DEBIT', amount: '-7.25', currency: 'USD', walletId: 'w-usd', reference: 'PO-FOREIGN', createdAt: t(2) },
    ]);
    expect(r.otherCredits.map((c) => c.reference)).toEqual(['TOPUP-1']);
    expect(r.problems).toEqual([]);
    expect(r.others).toEqual([
      `unexplained debit -5.00 USD in wallet w-usd at ${t(9)} (reference PO-LATER, transaction t9)`,
      `unexplained debit -7.25 USD in wallet w-usd at ${t(2)} (reference PO-FOREIGN, transaction tf)`,
    ]);
    expect(r.totals[0]!.ok).toBe(true); // the batch itself ties out
    expect(r.period).toEqual({ from: t(1), to: undefined, by: 'dates' });

    // --until before the later debit leaves it out; a date alone is the end of that day (UTC)
    const until = (u: string) => tieOut({ rows, transactions: txs, payouts: states([]), until: u }).unexplained.map((f) => f.reference);
    expect(until(t(8))).toEqual(['PO-FOREIGN']);
    expect(until('2025-01-31')).toEqual(['PO-LATER', 'PO-FOREIGN']);
    expect(until('2025-01-30')).toEqual([]);
    expect(tieOut({ rows, transactions: txs, payouts: states([]), until: '2025-01-31' }).period.to).toBe('2025-01-31T23:59:59.999Z');

    // without dates, the listing order (newest first) places a movement above the batch's oldest one in the period
    const undated = tieOut({ rows, transactions: txs.map((x) => ({ ...x, createdAt: undefined })), payouts: states([]) });
    expect(undated.period.by).toBe('listing order');
    expect(undated.unexplained.map((f) => f.reference)).toEqual(['PO-LATER', 'PO-FOREIGN']);
  });

  it("a debit of another batch of the account or a swap's is named, not a failure; nothing else explains one", () => {
    const rows = [row(1, '10.00')];
    const txs = [
      tx('ts2', '8.10', 'SW-1', t(6), { currency: 'EUR', walletId: 'w-eur' }), // the swap's credit leg
      tx('ts1', '-9', 'SW-1', t(6)), // the swap's debit
      tx('tm', '-4', 'other text', t(5), { payoutId: 'q2' }), // another batch's payout, by metadata.payoutId
      tx('tb', '-30', 'PO-MARCH-1', t(4)), // another batch's payout, by reference
      tx('tr', '30', 'PO-MARCH-1', t(4)), // ... and a refund of it: another credit
      tx('tx', '-2', 'PO-STRAY', t(3)),
      tx('t1', '-10', 'PO-1', t(1)),
    ];
    const march = { name: 'batch 0123456789abcdef (/data/march.csv)', payoutRefs: ['PO-MARCH-1'], payoutIds: ['q1', 'q2'] };
    const r = tieOut({ rows, transactions: txs, payouts: states([]), ledgerBatches: [march] });
    expect(r.explained.map((f) => [f.id, f.explainedBy])).toEqual([
      ['ts1', 'swap to the EUR wallet w-eur'],
      ['tm', march.name],
      ['tb', march.name],
    ]);
    expect(r.unexplained.map((f) => f.id)).toEqual(['tx']);
    expect(r.problems).toEqual([]);
    expect(r.others).toEqual([`unexplained debit -2.00 USD in wallet w-usd at ${t(3)} (reference PO-STRAY, transaction tx)`]);
    expect(r.otherCredits.map((f) => f.id)).toEqual(['ts2', 'tr']);
    // without the ledger, another batch's debits are unexplained
    const alone = tieOut({ rows, transactions: txs, payouts: states([]) });
    expect(alone.unexplained.map((f) => f.id)).toEqual(['tm', 'tb', 'tx']);
    expect(alone.others).toHaveLength(3);
    expect(alone.ok).toBe(true);
    // the file: unexplained first, then those explained elsewhere, with who explains them
    expect(
      reconciliationLines(r)
        .slice(1)
        .map((l) => [l.kind, l.transactionIds, l.tiesOut, l.explainedBy ?? '']),
    ).toEqual([
      ['unexplained debit', 'tx', 'NO', ''],
      ['debit explained elsewhere', 'ts1', '', 'swap to the EUR wallet w-eur'],
      ['debit explained elsewhere', 'tm', '', march.name],
      ['debit explained elsewhere', 'tb', '', march.name],
      ['other credit', 'ts2', '', ''],
      ['other credit', 'tr', '', ''],
    ]);
  });

  it('a created row without its debit, or with another amount, does not tie out', () => {
    const rows = [row(1, '10.00'), row(2, '20.00'), row(3, '', { payoutId: undefined, payoutRef: undefined, status: 'INVALID' })];
    const r = tieOut({ rows, transactions: [tx('t1', '-10.01', 'PO-1', t(1))], payouts: states([]) });
    expect(r.ok).toBe(false);
    expect(r.problems).toEqual([
      'row 2 REF-1: debited 10.01, the results say 10.00 (totalDeductible)',
      'row 3 REF-2: no debit for this payout in the wallet transactions',
      'USD: net movement -10.01, the results say -30.00',
    ]);
    expect(r.rows[2]).toMatchObject({ created: false, ok: true, debit: '0.00' });
    expect(r.counts).toMatchObject({ rows: 3, created: 2, tiedOut: 0 });
  });

  it('ties by metadata.payoutId when the reference differs; the sign comes from type when given', () => {
    const read = normaliseTransaction({
      id: 'x',
      type: 'DEBIT',
      amount: '12.30',
      currency: 'EUR',
      reference: 'something else',
      metadata: { payoutId: 'p1' },
      walletId: 'w-eur',
    } as never);
    expect(read).toMatchObject({ amount: new Dec('-12.3'), payoutId: 'p1', walletId: 'w-eur', currency: 'EUR' });
    const r = tieOut({ rows: [row(1, '12.3', { currency: 'EUR' })], transactions: [read], payouts: states([]) });
    expect(r.ok).toBe(true);
  });

  it('ties a debit and refund whose reference is the payout id, as status finds a refund (engine/refund.ts)', () => {
    const transactions = [tx('t2', '12.30', 'p1', t(2)), tx('t1', '-12.30', 'p1', t(1))];
    const r = tieOut({ rows: [row(1, '12.30', { status: 'FAILED' })], transactions, payouts: states([]) });
    expect(r.problems).toEqual([]);
    expect(r.rows[0]).toMatchObject({ debit: '-12.30', refund: '12.30', ok: true });
    expect(r.unexplained).toEqual([]);
  });

  it('ties a refund that names the payoutRef in its metadata only, as status finds a refund (engine/refund.ts)', () => {
    const credit = {
      id: 't2',
      type: 'CREDIT',
      amount: 12.3,
      currency: 'USD',
      reference: '',
      metadata: { payoutRef: 'PO-1' },
      createdAt: t(2),
    };
    const transactions = [normaliseTransaction(credit as never), tx('t1', '-12.30', 'PO-1', t(1))];
    const r = tieOut({ rows: [row(1, '12.30', { status: 'FAILED' })], transactions, payouts: states([]) });
    expect(r.problems).toEqual([]);
    expect(r.rows[0]).toMatchObject({ refund: '12.30', ok: true });
  });

  it("a row sent again after a refund ties its earlier payout's debit and refund to itself", () => {
    // row 2 (REF-1): PO-1 FAILED, refunded, sent again as PO-1b (the earlierPayouts cell, as run/retry write it)
    const cell = earlierPayoutsCell([
      {
        id: 'p1',
        payoutRef: 'PO-1',
        status: 'FAILED',
        sourceAmount: '100.10',
        sourceCurrency: 'USD',
        transactionFees: '1.5',
        destinationCurrency: 'NGN',
        documents: 0,
        refunded: '101.60',
      },
    ]);
    const earlier = parseEarlierPayouts(cell).payouts;
    expect(earlier).toEqual([
      { payoutId: 'p1', payoutRef: 'PO-1', status: 'FAILED', currency: 'USD', amount: '100.10', fee: '1.50', refunded: '101.60' },
    ]);
    const rows = [row(1, '101.60', { payoutId: 'p1b', payoutRef: 'PO-1b', earlier }), row(2, '20.00')];
    const payouts = states([
      ['p1b', { status: 'SUCCESSFUL' }],
      ['p2', { status: 'SUCCESSFUL' }],
    ]);
    const txs = [
      tx('t4', '-101.60', 'PO-1b', t(4)),
      tx('t3', '101.60', 'PO-1', t(3)),
      tx('t2', '-20', 'PO-2', t(2)),
      tx('t1', '-101.6', 'PO-1', t(1)),
    ];
    const r = tieOut({ rows, transactions: txs, payouts });
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.unexplained).toEqual([]);
    expect(r.rows[0]).toMatchObject({
      status: 'SUCCESSFUL',
      debit: '-101.60',
      refund: '0.00',
      net: '-101.60',
      transactionIds: ['t4'],
      ok: true,
    });
    expect(r.rows[0]!.earlier).toEqual([
      {
        payoutId: 'p1',
        payoutRef: 'PO-1',
        status: 'FAILED',
        expected: '101.60',
        debit: '-101.60',
        refund: '101.60',
        net: '0.00',
        transactionIds: ['t3', 't1'],
        ok: true,
        problems: [],
      },
    ]);
    expect(r.totals[0]).toMatchObject({ debited: '-223.20', refunded: '101.60', net: '-121.60', expectedNet: '-121.60', ok: true });
    expect(r.counts).toMatchObject({ created: 2, tiedOut: 2, earlierRefunded: 1 });
    expect(r.period.from).toBe(t(1)); // the earlier debit opens the batch's period
    // the file: the earlier payout on its own line after its row, so the money columns add up to the totals
    expect(reconciliationLines(r).map((l) => [l.kind, l.row, l.payoutRef, l.debit, l.refund, l.net, l.tiesOut])).toEqual([
      ['row', '2', 'PO-1b', '-101.60', '0.00', '-101.60', 'yes'],
      ['earlier payout (sent again)', '2', 'PO-1', '-101.60', '101.60', '0.00', 'yes'],
      ['row', '3', 'PO-2', '-20.00', '0.00', '-20.00', 'yes'],
    ]);

    // the earlier payout's refund missing: that row does not tie out, and says why
    const noRefund = tieOut({ rows, transactions: txs.filter((x) => x.id !== 't3'), payouts });
    expect(noRefund.ok).toBe(false);
    expect(noRefund.problems).toContain('row 2 REF-1: earlier payout PO-1 (FAILED, sent again): no refund in the wallet transactions');
    expect(noRefund.rows[0]!.ok).toBe(false);
  });

  it('the file lines: each row with debit, refund and net, then the unexplained debits', () => {
    const r = tieOut({
      rows: [row(1, '10')],
      transactions: [tx('t2', '-10', 'PO-1', t(3)), tx('tf', '-1', '=HYPERLINK("x")', t(2)), tx('t1', '-10', 'PO-X', t(1))],
      payouts: states([['p1', { status: 'PENDING' }]]),
      since: t(0),
    });
    const lines = reconciliationLines(r);
    expect(lines[0]).toMatchObject({ kind: 'row', row: '2', debit: '-10.00', refund: '0.00', net: '-10.00', tiesOut: 'yes' });
    expect(lines.slice(1).map((l) => [l.kind, l.reference, l.debit])).toEqual([
      ['unexplained debit', '=HYPERLINK("x")', '-1.00'],
      ['unexplained debit', 'PO-X', '-10.00'],
    ]);
  });

  it('ties out a batch of 70,000 created rows (more dates than a call takes arguments)', () => {
    const n = 70_000;
    const at = (i: number) => new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString();
    const rows = Array.from({ length: n }, (_, i) => row(i, '1.00'));
    const txs = rows.map((r, i) => tx(`t${i}`, '-1.00', r.payoutRef!, at(i))).reverse();
    const payouts = states(rows.map((r, i) => [r.payoutId!, { status: 'PENDING', createdAt: at(i) }]));
    const r = tieOut({ rows, transactions: txs, payouts });
    expect([r.ok, r.counts.tiedOut, r.period.from]).toEqual([true, n, at(0)]);
  });

  it('XLSX cells: amounts are numbers in a money format, text is neutralised', () => {
    expect(reconciliationCell('debit', '-1234.50')).toEqual({ t: 'n', v: -1234.5, z: '#,##0.00' });
    expect(reconciliationCell('net', '1500')).toEqual({ t: 'n', v: 1500, z: '#,##0' });
    expect(reconciliationCell('reference', '=HYPERLINK("x")')).toEqual({ t: 's', v: `'=HYPERLINK("x")` });
    expect(reconciliationCell('debit', '')).toBeUndefined();
  });
});

describe('reconcile (the I/O step)', () => {
  it('a service that cannot be reached is exit 4 with nothing written; a date that is not one is unusable input', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pb-reconcile-'));
    try {
      const results = join(dir, 'b.results.csv');
      await writeResults(results, {
        format: 'csv',
        inputColumns: ['reference', 'sourceAmount', 'sourceCurrency'],
        rows: [
          {
            rowNumber: 2,
            cells: { reference: 'R1', sourceAmount: '10.00', sourceCurrency: 'GBP' },
            result: { status: 'PENDING', payoutId: 'p1', payoutRef: 'PO-1', idempotencyKey: 'k1', totalDeductible: '12.00' },
          },
        ],
      });
      const client = new PayoutClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'sk_sandbox_x', retry: { maxAttempts: 1 } });
      const r = await reconcile({ client, resultsFile: results });
      expect(r.kind).toBe('halted');
      expect(r.report).toBeUndefined();
      expect(r.requests.payoutPages).toBe(1);
      await expect(reconcile({ client, resultsFile: results, since: 'last tuesday' })).rejects.toThrow(/--since last tuesday: not a date/);
      // a time without its zone would be read in the host's: Los Angeles and Kiritimati would judge periods a day apart
      for (const zone of ['America/Los_Angeles', 'Pacific/Kiritimati'])
        await inZone(zone, () =>
          expect(reconcile({ client, resultsFile: results, until: '2025-01-31T12:00:00' })).rejects.toThrow(
            /^--until 2025-01-31T12:00:00: not a date .*e\.g\. 2025-01-31 or 2025-01-31T23:59:59Z/,
          ),
        );
      // a period that ends before it starts holds nothing: refused, not a statement of nothing (a date alone ends at its day's end)
      await expect(reconcile({ client, resultsFile: results, since: '2025-02-01', until: '2025-01-31T23:00:00Z' })).rejects.toThrow(
        /^--since 2025-02-01 is after --until 2025-01-31T23:00:00Z: .*give a --since before the --until/,
      );
      expect((await reconcile({ client, resultsFile: results, since: '2025-01-31T23:00:00Z', until: '2025-01-31' })).kind).toBe('halted');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('the list refused and the service failing: the first failed get stops the gets not yet started', async () => {
    let gets = 0;
    const fetch: typeof globalThis.fetch = async (input) => {
      const list = /\/payouts\?/.test(input instanceof Request ? input.url : String(input));
      if (!list) gets++;
      const [status, error] = list ? [400, 'VALIDATION_ERROR'] : [503, 'SERVICE_UNAVAILABLE'];
      return new Response(JSON.stringify({ statusCode: status, message: 'no', error }), { status });
    };
    const client = new PayoutClient({
      baseUrl: 'http://127.0.0.1:1',
      apiKey: 'sk_sandbox_x',
      requestsPerSecond: 1000,
      retry: { maxAttempts: 1 },
      fetch,
    });
    const ids = Array.from({ length: 50 }, (_, i) => `p${i}`);
    const r = await readPayouts(ids, { client }, { payoutPages: 0, getPayout: 0, transactionPages: 0, total: 0 });
    expect(r.halted?.status).toBe(503);
    // (at most the gets already in flight when the first failed: the client's 8 at once)
    expect(gets).toBeLessThanOrEqual(8);
  });
});

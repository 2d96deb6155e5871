// The camt.053 statement of `reconcile --statement` (issue 41), from a results table and wallet
// transactions: a payout's debit with its fee, its refund, a swap's legs and another's movement,
// each wallet's balances from the service's balanceAfter, valid against the camt.053.001.02 schema.
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { writeStatement } from '../../src/follow-up/statement.ts';
import type { ReconTx } from '../../src/follow-up/tie-out.ts';
import { Dec } from '../../src/money.ts';
import type { ResultsTable } from '../../src/results/types.ts';
import { tempDir } from '../results/helpers.ts';
import { schemaErrors, texts } from './validate.ts';

const tmp = tempDir('pb-camt053-');
afterAll(() => tmp.cleanup());

const EUR = '6f9c1a52-0b7e-4c1e-9d2a-1f0e5b7c9a11';
const USD = '0d4e2b61-7a3c-4f8e-8b1d-2c9f6e4a7b22';
const table: ResultsTable = {
  format: 'csv',
  inputColumns: ['reference', 'MsgId', 'PmtInfId', 'InstrId'],
  rows: [
    {
      rowNumber: 2,
      cells: { reference: 'E2E-1', MsgId: 'ERP-1', PmtInfId: 'PMT-A', InstrId: 'I-1' },
      result: { payoutRef: 'PR-1', fee: '5.00', status: 'PENDING' },
    },
    {
      rowNumber: 3,
      cells: { reference: 'E2E-2', MsgId: 'ERP-1', PmtInfId: 'PMT-A', InstrId: '' },
      result: { payoutRef: 'PR-2', fee: '5.00', status: 'FAILED' },
    },
  ],
};
// newest first, as the listing gives them
const tx = (id: string, walletId: string, currency: string, amount: string, after: string, reference: string, at: string): ReconTx => ({
  id,
  walletId,
  currency,
  amount: new Dec(amount),
  balanceAfter: new Dec(after),
  reference,
  createdAt: `2025-01-31T10:0${at}:00Z`,
});
const transactions = [
  tx('t6', EUR, 'EUR', '-20.00', '720.00', 'OTHER-BATCH', '6'),
  tx('t5', EUR, 'EUR', '105.00', '740.00', 'PR-2', '5'),
  tx('t4', EUR, 'EUR', '-105.00', '635.00', 'PR-2', '4'),
  tx('t3', EUR, 'EUR', '-205.00', '740.00', 'PR-1', '3'),
  tx('t2', EUR, 'EUR', '500.00', '945.00', 'SWAP-1', '2'),
  tx('t1', USD, 'USD', '-550.00', '450.00', 'SWAP-1', '1'),
];
const swaps = [{ currency: 'EUR', reference: 'SWAP-1' }];

describe('camt.053 statement', () => {
  it('gives each wallet the batch moved its balances and one entry per movement, the batch’s carrying its ids', async () => {
    const path = tmp.path('stmt.xml');
    expect(await writeStatement(path, { table, transactions, swaps, period: { by: 'dates' } })).toEqual({ statements: 2, entries: 6 });
    const xml = readFileSync(path, 'utf8');
    expect(await schemaErrors(xml, 'camt.053.001.02')).toEqual([]);
    const [eur, usd] = xml.split('<Stmt>').slice(1);
    expect(texts(eur!, 'Ccy')).toEqual(['EUR']);
    expect(texts(eur!, 'Id')[1]).toBe(EUR.replace(/-/g, ''));
    // opening: before the swap's credit (945 - 500); closing: after the last movement
    expect(texts(eur!, 'Cd').slice(0, 2)).toEqual(['OPBD', 'CLBD']);
    expect(texts(eur!, 'Amt').slice(0, 2)).toEqual(['445', '720']);
    const entries = eur!.split('<Ntry>').slice(1);
    expect(entries.map((e) => [texts(e, 'Amt')[0], texts(e, 'CdtDbtInd')[0], [...texts(e, 'Cd'), ...texts(e, 'SubFmlyCd')]])).toEqual([
      ['500', 'CRDT', ['SWAP']],
      ['205', 'DBIT', ['PMNT', 'ICDT', 'PAYOUT', 'XBCT']],
      ['105', 'DBIT', ['PMNT', 'ICDT', 'PAYOUT', 'XBCT']],
      ['105', 'CRDT', ['PMNT', 'ICDT', 'REFUND', 'RRTN']],
      ['20', 'DBIT', ['OTHER']],
    ]);
    expect(entries.map((e) => texts(e, 'EndToEndId'))).toEqual([['SWAP-1'], ['E2E-1'], ['E2E-2'], ['E2E-2'], []]);
    expect(entries.map((e) => texts(e, 'InstrId'))).toEqual([[], ['I-1'], [], [], []]);
    expect(entries.map((e) => texts(e, 'PmtInfId'))).toEqual([[], ['PMT-A'], ['PMT-A'], ['PMT-A'], []]);
    expect(texts(entries[1]!, 'Amt')[1]).toBe('5'); // the fee, in the debit
    expect(texts(usd!, 'Amt')).toEqual(['1000', '450', '550']);
  });

  it("names a pain.001's payment by its EndToEndId as sent, not by a reference edited for a retry", async () => {
    const path = tmp.path('edited.xml');
    const [one, two] = table.rows;
    const edited: ResultsTable = {
      ...table,
      inputColumns: [...table.inputColumns, 'EndToEndId'],
      rows: [{ ...one!, cells: { ...one!.cells, reference: 'E2E-1-RETRY', EndToEndId: 'E2E-1' } }, two!],
    };
    await writeStatement(path, { table: edited, transactions, swaps, period: { by: 'dates' } });
    const xml = readFileSync(path, 'utf8');
    expect(await schemaErrors(xml, 'camt.053.001.02')).toEqual([]);
    expect(texts(xml, 'EndToEndId')).toEqual(['SWAP-1', 'E2E-1', 'E2E-2', 'E2E-2', 'SWAP-1']);
  });

  it("never names another batch's payout of a row's reference (ALREADY_PAID) as this message's payment", async () => {
    const path = tmp.path('already-paid.xml');
    const paid = {
      rowNumber: 4,
      cells: { reference: 'E2E-3', MsgId: 'ERP-1', PmtInfId: 'PMT-A', InstrId: 'I-3' },
      result: { payoutId: 'p-other', payoutRef: 'OTHER-BATCH', fee: '1.00', status: 'ALREADY_PAID', errorCode: 'ALREADY_PAID' },
    };
    await writeStatement(path, { table: { ...table, rows: [...table.rows, paid] }, transactions, swaps, period: { by: 'dates' } });
    const xml = readFileSync(path, 'utf8');
    expect(await schemaErrors(xml, 'camt.053.001.02')).toEqual([]);
    const other = xml
      .split('<Ntry>')
      .slice(1)
      .map((e) => e.split('</Ntry>')[0]!)
      .find((e) => texts(e, 'AcctSvcrRef').includes('OTHER-BATCH'))!;
    expect([texts(other, 'Cd'), texts(other, 'MsgId'), texts(other, 'EndToEndId'), texts(other, 'Amt')]).toEqual([
      ['OTHER'],
      [],
      [],
      ['20'],
    ]);
  });

  it('never cuts a reference longer than EndToEndId holds (two would read as one): left out, written whole in RmtInf', async () => {
    const path = tmp.path('long.xml');
    const [a, b] = ['A', 'B'].map((x) => `INVOICE-2025-01-SUPPLIER-ACME-00001-${x}`) as [string, string]; // (37 characters, the same first 35)
    const [one, two] = table.rows;
    const long: ResultsTable = {
      ...table,
      rows: [
        { ...one!, cells: { ...one!.cells, reference: a } },
        { ...two!, cells: { ...two!.cells, reference: b } },
      ],
    };
    await writeStatement(path, { table: long, transactions, swaps, period: { by: 'dates' } });
    const xml = readFileSync(path, 'utf8');
    expect(await schemaErrors(xml, 'camt.053.001.02')).toEqual([]);
    expect(texts(xml, 'EndToEndId')).toEqual(['SWAP-1', 'SWAP-1']);
    expect(texts(xml, 'Ustrd')).toEqual([a, b, b]);
  });

  it('writes no statement when the service gives no balance', async () => {
    const path = tmp.path('none.xml');
    const bare = transactions.map(({ balanceAfter: _, ...t }) => t);
    const refused = writeStatement(path, { table, transactions: bare, swaps, period: { by: 'dates' } });
    // the file named once: "<path>: no statement written: ...", not wrapped again as "<path>: cannot write the camt.053..."
    await expect(refused).rejects.toThrow(
      new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: no statement written: the transactions .* carry no balance`),
    );
  });
});

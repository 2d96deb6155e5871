// How retry and status find a results row's state in the ledger (engine/retry-batch.ts ledgerStates):
// by key, else payout id (now or replaced), else reference; never by line number.
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ledgerStates, resultsHere } from '../../src/engine/retry-batch.ts';
import { FileLedger } from '../../src/ledger/file.ts';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { foldJournal, type FoldedJournal, type JournalLine, type PayoutSnapshot } from '../../src/journal/lines.ts';
import type { ResultRow } from '../../src/results/types.ts';

const at = '2026-01-01T00:00:00.000Z';
const payout = (id: string, status = 'PENDING'): PayoutSnapshot => ({
  id,
  status,
  sourceAmount: 10,
  sourceCurrency: 'GBP',
  destinationCurrency: 'GBP',
  documents: 0,
});
const created = (ref: string, row: number, id: string, attempt = 1): JournalLine[] => [
  { t: 'initiating', ref, row, attempt, key: `k-${ref}-${attempt}`, body: '{}', at },
  { t: 'created', ref, attempt, key: `k-${ref}-${attempt}`, requestId: 'r', payout: payout(id), at },
];
const row = (reference: string | undefined, result: ResultRow['result'] = {}, rowNumber = 9): ResultRow => ({
  rowNumber,
  cells: reference === undefined ? {} : { reference },
  result,
});
/** The payout id (else the ref, else '-') each row is matched to. */
const match = (folds: FoldedJournal[], rows: ResultRow[]) => {
  const m = ledgerStates(folds, rows, (r) => r.cells.reference);
  return rows.map((_, i) => m.get(i)?.payout?.id ?? m.get(i)?.ref ?? '-');
};

describe('ledgerStates', () => {
  const folded = foldJournal([
    ...created('A', 2, 'pA'),
    ...created('B', 4, 'pB-old'),
    { t: 'status', ref: 'B', payoutId: 'pB-old', status: 'FAILED', source: 'get', at },
    { t: 'refund', ref: 'B', payoutId: 'pB-old', amount: '12.00', at },
    { t: 'resend', ref: 'B', payoutId: 'pB-old', at },
    ...created('B', 4, 'pB-new', 2),
    { t: 'quote', ref: 'C', attempt: 1, destinationAmount: 1 },
  ]);

  it('finds a row by its key, its payout id (now or replaced) or its reference', () => {
    expect(match([folded], [row(undefined, { idempotencyKey: 'k-A-1' })])).toEqual(['pA']);
    expect(match([folded], [row(undefined, { payoutId: 'pB-old', idempotencyKey: 'k-B-1' })])).toEqual(['pB-new']);
    expect(match([folded], [row('B')])).toEqual(['pB-new']);
  });

  it("an older copy's key of an earlier attempt finds the payment, its reference edited since", () => {
    // (key 1 refused and proven spent, paid under key 2; the results file of the first run still names key 1)
    const [k1, k2] = [idempotencyKey('R', 1), idempotencyKey('R', 2)];
    const spent = foldJournal([
      { t: 'initiating', ref: 'R', row: 3, attempt: 1, key: k1, body: '{}', at },
      { t: 'rejected', ref: 'R', attempt: 1, key: k1, error: { status: 400, code: 'X', message: 'refused' }, at },
      { t: 'initiating', ref: 'R', row: 3, attempt: 2, key: k2, body: '{}', at },
      { t: 'created', ref: 'R', attempt: 2, key: k2, requestId: 'r', payout: payout('pR'), at },
    ]);
    expect(match([spent], [row('R-edited', { idempotencyKey: k1 })])).toEqual(['pR']);
  });

  it('never by its line number, nor a reference the journal never sent', () => {
    expect(match([folded], [row('C', {}, 4), row(undefined, {}, 2)])).toEqual(['-', '-']); // rows 2 and 4 are A's and B's in the journal
  });

  it("a row repeating another's reference never takes its payout, wherever it stands", () => {
    expect(match([folded], [row('A'), row('A', { idempotencyKey: 'k-A-1' })])).toEqual(['-', 'pA']);
    expect(match([folded], [row('A'), row('A')])).toEqual(['pA', '-']);
  });

  it("a copied row keeping its original's key and payout id never takes them from the row naming the reference", () => {
    const copy = row('A-copy', { idempotencyKey: 'k-A-1', payoutId: 'pA' });
    expect(match([folded], [copy, row('A', { idempotencyKey: 'k-A-1', payoutId: 'pA' })])).toEqual(['-', 'pA']);
  });

  it('a reference two journals name is found only through its key or payout id', () => {
    const other = foldJournal(created('A', 2, 'pA-2'));
    expect(match([folded, other], [row('A')])).toEqual(['-']);
    expect(match([folded, other], [row('A', { payoutId: 'pA-2' })])).toEqual(['pA-2']);
  });
});

describe('retry of a batch named by its id, its results file not on this host', () => {
  const id = 'ab'.repeat(32);
  const [file, results] = ['/data/pay.csv', '/data/pay.results.csv'];
  const header = { t: 'batch', v: 1, batchId: id, batchIdSource: 'content', env: 'local', file, fileSha256: 'f', results, createdAt: at };
  const journal = (...lines: object[]) => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-here-'));
    const ledger = new FileLedger('http://127.0.0.1:1', join(dir, 'ledger'));
    mkdirSync(ledger.dir);
    const sent = { t: 'initiating', ref: 'R', row: 2, attempt: 1, key: 'k', body: '{}', at };
    writeFileSync(ledger.journalOf(id), [header, ...lines, sent].map((l) => JSON.stringify(l)).join('\n') + '\n');
    mkdirSync(join(dir, 'here'));
    return { ledger, here: join(dir, 'here') };
  };

  it('refuses to send from results rebuilt without beneficiary cells, naming what to run instead, and writes nothing', async () => {
    const killed = journal({ t: 'run', at, command: 'run', pid: 1 });
    await expect(resultsHere([killed.ledger], id.slice(0, 16), killed.here, { sending: true })).rejects.toThrow(
      /its run did not end .*: run its file again to resume it, each row once: payout-batch run \/data\/pay\.csv/,
    );
    expect(readdirSync(killed.here)).toEqual([]);
    const ended = journal({ t: 'run', at, command: 'run', pid: 1 }, { t: 'run-end', at, kind: 'ok' });
    await expect(resultsHere([ended.ledger], id.slice(0, 16), ended.here, { sending: true })).rejects.toThrow(
      /its results file \/data\/pay\.results\.csv is not on this host/,
    );
    // status, report and reconcile still work from the rebuilt file
    expect(await resultsHere([ended.ledger], id.slice(0, 16), ended.here)).toMatchObject({ made: 'ledger' });
    // and once rebuilt (by a status), a retry by the batch id is still told where its results are, not sent from the rebuilt file
    await expect(resultsHere([ended.ledger], id.slice(0, 16), ended.here, { sending: true })).rejects.toThrow(/is not on this host/);
  });
});

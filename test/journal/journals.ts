// Journals for the tests of the fold.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { JournalWriter } from '../../src/journal/journal.ts';
import { tempDirs } from '../engine/helpers.ts';

const dirs = tempDirs('pb-fold-file-');
/** A new temporary folder, removed by removeDirs. */
export const dir = dirs.make;
export const removeDirs = dirs.remove;
export const snap = (id: string) => ({
  id,
  payoutRef: `PO-${id}`,
  status: 'PENDING',
  sourceAmount: 10,
  sourceCurrency: 'USD',
  destinationAmount: 10,
  destinationCurrency: 'USD',
  transactionFees: 5,
  exchangeRate: 1,
  updatedAt: '2026-01-01T00:00:00Z',
  documents: 0,
});
export const body = (ref: string) =>
  JSON.stringify({
    sourceAmount: 12.5,
    sourceCurrency: 'USD',
    beneficiary: { accountName: `Zoë "${ref}" Ölund\\ 東京` },
    narration: 'a\nb',
  });

/** A journal with every kind of line, a torn line repaired mid-file and a torn tail. */
export async function mixedJournal(): Promise<string> {
  const path = join(await dir(), 'j.jsonl');
  const w = JournalWriter.open(path);
  w.append({
    t: 'batch',
    v: 1,
    batchId: 'b'.repeat(64),
    batchIdSource: 'content',
    env: 'local',
    file: '/x.csv',
    fileSha256: 'b'.repeat(64),
    createdAt: 'now',
  });
  w.append({ t: 'run', at: 'now', command: 'run', pid: 1 });
  for (const ref of ['C1', 'C2', 'U1', 'I1', 'J1', 'K1']) {
    w.append({ t: 'quote', ref, attempt: 1, rate: 1.25, fee: 1.5, totalDeductible: 14, destinationAmount: 15.63 });
    w.append({ t: 'initiating', ref, row: 2, attempt: 1, key: `k-${ref}-1`, body: body(ref), at: 'now' });
  }
  w.append({ t: 'doc', sha256: 'd'.repeat(64), url: 'http://u/2' });
  w.append({ t: 'attach', ref: 'C2', attempt: 1, supportingDocument: 'http://u/2', documents: [], at: 'now' });
  w.append({ t: 'created', ref: 'C1', attempt: 1, key: 'k-C1-1', requestId: 'q1', payout: snap('p1'), at: 'now' });
  w.append({ t: 'unknown', ref: 'U1', attempt: 1, key: 'k-U1-1', error: { status: 503, message: 'down' }, at: 'now' });
  w.append({
    t: 'rejected',
    ref: 'J1',
    attempt: 1,
    key: 'k-J1-1',
    error: { status: 400, code: 'INVALID_ACCOUNT', message: 'no', requestId: 'r-j' },
    at: 'now',
  });
  w.append({
    t: 'conflict',
    ref: 'K1',
    attempt: 1,
    key: 'k-K1-1',
    error: { status: 409, code: 'IDEMPOTENCY_KEY_CONFLICT', message: 'other body' },
    at: 'now',
  });
  w.close();
  appendFileSync(path, '{"t":"created","ref":"U1","attempt":1,"ke'); // killed mid-write: the next open repairs the line
  const w2 = JournalWriter.open(path);
  w2.append({ t: 'run', at: 'later', command: 'run', pid: 2 });
  w2.append({ t: 'created', ref: 'C2', attempt: 1, key: 'k-C2-1', requestId: 'q2', payout: snap('p2'), at: 'later' });
  w2.append({
    t: 'status',
    ref: 'C2',
    payoutId: 'p2',
    status: 'PROCESSING',
    changedAt: '2026-01-02T00:00:00Z',
    source: 'webhook',
    at: 'later',
  });
  w2.append({ t: 'status', ref: 'C2', payoutId: 'p2', status: 'PENDING', changedAt: '2026-01-01T12:00:00Z', source: 'get', at: 'later' });
  w2.append({ t: 'initiating', ref: 'J1', row: 6, attempt: 2, key: 'k-J1-2', body: body('J1-2'), at: 'later' });
  w2.append({ t: 'patch-failed', ref: 'C1', payoutId: 'p1', error: { message: 'later' }, at: 'later' });
  w2.append({ t: 'initiating', ref: 'C1', row: 2, attempt: 2, key: 'k-C1-2', body: body('C1-again'), at: 'later' }); // ignored: created
  w2.close();
  appendFileSync(path, '\n   \n42\n"text"\n{"no-type":1}\n{"t":"run-end","at":"x","exitCode":0}\n{"t":"unknown","ref":"I1","attem');
  return path;
}

// foldJournalFile folds while it reads (no array of events): it must give the states the fold of
// the whole event list gives, line for line, except that a created row no longer holds the body
// of its initiate (never sent again); a row still unsettled keeps its body byte for byte.
import { appendFileSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JournalWriter, readJournal } from '../../src/journal/journal.ts';
import { foldJournal, foldJournalFile, rowState, type FoldedJournal, type JournalLine } from '../../src/journal/rows.ts';
import { inspectJournal } from '../../src/engine/session.ts';

const dir = () => mkdtemp(join(tmpdir(), 'pb-fold-file-'));
const snap = (id: string) => ({
  id, payoutRef: `PO-${id}`, status: 'PENDING', sourceAmount: 10, sourceCurrency: 'USD', destinationAmount: 10, destinationCurrency: 'USD',
  transactionFees: 5, exchangeRate: 1, updatedAt: '2026-01-01T00:00:00Z', documents: 0,
});
const body = (ref: string) => JSON.stringify({ sourceAmount: 12.5, sourceCurrency: 'USD', beneficiary: { accountName: `Zoë "${ref}" Ölund\\ 東京` }, narration: 'a\nb' });

/** A journal with every kind of line, a torn line repaired mid-file and a torn tail. */
async function mixedJournal(): Promise<string> {
  const path = join(await dir(), 'j.jsonl');
  const w = JournalWriter.open(path);
  w.append({ t: 'batch', v: 1, batchId: 'b'.repeat(64), batchIdSource: 'content', env: 'local', file: '/x.csv', fileSha256: 'b'.repeat(64), createdAt: 'now' });
  w.append({ t: 'run', at: 'now', command: 'run', pid: 1 });
  for (const ref of ['C1', 'C2', 'U1', 'I1', 'J1', 'K1']) {
    w.append({ t: 'quote', ref, attempt: 1, rate: 1.25, fee: 1.5, totalDeductible: 14, destinationAmount: 15.63 });
    w.append({ t: 'initiating', ref, row: 2, attempt: 1, key: `k-${ref}-1`, body: body(ref), at: 'now' });
  }
  w.append({ t: 'doc', ref: 'C1', doc: '/a.pdf', url: 'http://u/1' });
  w.append({ t: 'created', ref: 'C1', attempt: 1, key: 'k-C1-1', requestId: 'q1', payout: snap('p1'), at: 'now' });
  w.append({ t: 'unknown', ref: 'U1', attempt: 1, key: 'k-U1-1', error: { status: 503, message: 'down' }, at: 'now' });
  w.append({ t: 'rejected', ref: 'J1', attempt: 1, key: 'k-J1-1', error: { status: 400, code: 'INVALID_ACCOUNT', message: 'no', requestId: 'r-j' }, at: 'now' });
  w.append({ t: 'conflict', ref: 'K1', attempt: 1, key: 'k-K1-1', error: { status: 409, code: 'IDEMPOTENCY_KEY_CONFLICT', message: 'other body' }, at: 'now' });
  w.close();
  appendFileSync(path, '{"t":"created","ref":"U1","attempt":1,"ke'); // killed mid-write: the next open repairs the line
  const w2 = JournalWriter.open(path);
  w2.append({ t: 'run', at: 'later', command: 'run', pid: 2 });
  w2.append({ t: 'created', ref: 'C2', attempt: 1, key: 'k-C2-1', requestId: 'q2', payout: snap('p2'), at: 'later' });
  w2.append({ t: 'status', ref: 'C2', payoutId: 'p2', status: 'PROCESSING', changedAt: '2026-01-02T00:00:00Z', source: 'webhook', at: 'later' });
  w2.append({ t: 'status', ref: 'C2', payoutId: 'p2', status: 'PENDING', changedAt: '2026-01-01T12:00:00Z', source: 'get', at: 'later' });
  w2.append({ t: 'initiating', ref: 'J1', row: 6, attempt: 2, key: 'k-J1-2', body: body('J1-2'), at: 'later' });
  w2.append({ t: 'patch-failed', ref: 'C1', payoutId: 'p1', error: { message: 'later' }, at: 'later' });
  w2.append({ t: 'initiating', ref: 'C1', row: 2, attempt: 2, key: 'k-C1-2', body: body('C1-again'), at: 'later' }); // ignored: created
  w2.close();
  appendFileSync(path, '\n   \n42\n"text"\n{"no-type":1}\n{"t":"run-end","at":"x","exitCode":0}\n{"t":"unknown","ref":"I1","attem');
  return path;
}

/** What foldJournalFile is expected to keep: the old fold, minus created rows' bodies. */
function withoutCreatedBodies(f: FoldedJournal): FoldedJournal {
  for (const s of f.rows.values()) if (s.phase === 'created') s.body = undefined;
  return f;
}

describe('foldJournalFile: fold while reading', () => {
  it('gives the same states as folding the whole event list, torn lines, statuses and all', async () => {
    const path = await mixedJournal();
    const old = readJournal<JournalLine>(path);
    const expected = withoutCreatedBodies(foldJournal(old.events));
    const r = foldJournalFile(path);
    expect(r.folded).toEqual(expected);
    expect([...r.folded.rows.keys()]).toEqual([...expected.rows.keys()]); // same order: results and reports follow it
    expect(r.events).toBe(old.events.length);
    expect(r.skipped).toBe(old.skipped);
    expect(r.skipped).toBe(5); // the repaired line, 42, "text", {"no-type"}, the torn tail; blank lines are not counted
    expect(r.tornTail).toBe(true);
    expect(r.folded.runs).toBe(2);
    expect(r.folded.interrupted).toBe(false);
    expect(rowState(r.folded, 'C2').payout?.status).toBe('PROCESSING');
  });

  it('keeps the exact body of every row still to settle, and drops it once a row is created', async () => {
    const path = await mixedJournal();
    const { folded } = foldJournalFile(path);
    // unsettled: resent with the journalled key and these very bytes
    expect(rowState(folded, 'U1')).toMatchObject({ phase: 'unknown', key: 'k-U1-1', body: body('U1') });
    expect(rowState(folded, 'I1')).toMatchObject({ phase: 'initiating', key: 'k-I1-1', body: body('I1') });
    expect(rowState(folded, 'J1')).toMatchObject({ phase: 'initiating', attempt: 2, key: 'k-J1-2', body: body('J1-2') });
    expect(rowState(folded, 'K1')).toMatchObject({ phase: 'conflict', body: body('K1') });
    // created: never sent again, whatever follows, and no body held
    for (const ref of ['C1', 'C2']) {
      const s = rowState(folded, ref);
      expect(s.phase).toBe('created');
      expect(s.body).toBeUndefined();
      expect(s.key).toBe(`k-${ref}-1`);
    }
  });

  it('a missing journal folds to nothing; inspectJournal counts events without an array', async () => {
    const d = await dir();
    const none = foldJournalFile(join(d, 'none.jsonl'));
    expect(none).toMatchObject({ events: 0, skipped: 0, tornTail: false });
    expect(none.folded.rows.size).toBe(0);
    expect(inspectJournal(join(d, 'none.jsonl')).exists).toBe(false);
    const torn = join(d, 'torn.jsonl');
    writeFileSync(torn, '{"t":"run","at"');
    expect(inspectJournal(torn)).toMatchObject({ exists: true, skipped: 1 });
    expect(inspectJournal(await mixedJournal()).exists).toBe(true);
  });
});

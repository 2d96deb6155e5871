// readAppended: what other processes appended to a journal while a run holds it open. Only complete
// lines are taken; a line still being written is left for the next call, never lost or torn.
import { appendFileSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAppended } from './read-journal.ts';
import { catchUpStatuses, openSession } from '../../src/engine/session.ts';
import { foldBatch } from '../../src/ledger/account-ledger.ts';
import { FileLedger } from '../../src/ledger/file.ts';
import { scanJournal } from '../../src/journal/journal.ts';

describe('readAppended', () => {
  it('returns the complete lines after an offset and where to go on; a line without its newline waits', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'pb-appended-')), 'j.jsonl');
    writeFileSync(path, '{"t":"batch"}\n');
    const start = Buffer.byteLength('{"t":"batch"}\n');
    expect(readAppended(path, start)).toEqual({ events: [], next: start, skipped: 0 });

    appendFileSync(path, '{"t":"status","ref":"Zoë-1","status":"PROCESSING"}\nnot json\n{"t":"status","ref":"R-2"');
    const first = readAppended(path, start);
    expect(first.events).toEqual([{ t: 'status', ref: 'Zoë-1', status: 'PROCESSING' }]);
    // The damaged line is passed over and counted; the unfinished one is not consumed.
    expect(first.skipped).toBe(1);
    expect(first.next).toBe(start + Buffer.byteLength('{"t":"status","ref":"Zoë-1","status":"PROCESSING"}\nnot json\n'));

    appendFileSync(path, ',"status":"SUCCESSFUL"}\n');
    const second = readAppended(path, first.next);
    expect(second.events).toEqual([{ t: 'status', ref: 'R-2', status: 'SUCCESSFUL' }]);
    expect(readAppended(path, second.next)).toEqual({ events: [], next: second.next, skipped: 0 });
  });

  it('a missing journal has nothing appended', () => {
    expect(readAppended(join(tmpdir(), 'pb-no-such-journal.jsonl'), 10)).toEqual({ events: [], next: 10, skipped: 0 });
  });

  // (reserve reads what another run of the batch appended since its first read: read as nothing, its rows were sent again)
  it('one that cannot be opened otherwise (ENOTDIR here; EACCES, EIO alike) throws, never read as empty', async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'pb-appended-')), 'ledger');
    writeFileSync(file, '');
    const path = join(file, 'j.jsonl');
    expect(() => readAppended(path, 10)).toThrow(`ENOTDIR: not a directory, open '${path}'`);
    expect(() => scanJournal(path, () => undefined)).toThrow('ENOTDIR');
  });
});

// run reads its journal as soon as the batch's identity is known (to leave created rows
// unvalidated) and opens the session only after the rows are read: a status line that `listen`
// appends in between is read again by the first catch-up, not skipped.
describe('a journal read before its session opens', () => {
  it('a status line appended between foldBatch and openSession is caught up', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'pb-read-then-open-'));
    const identity = { batchId: 'c'.repeat(64), source: 'content' as const, fileSha256: 'c'.repeat(64) };
    const file = join(stateDir, 'payroll.csv');
    const path = join(stateDir, 'cccccccccccccccc.journal.jsonl');
    const payout = {
      id: 'p-1',
      payoutRef: 'PO-1',
      status: 'PENDING',
      sourceAmount: 10,
      sourceCurrency: 'USD',
      destinationAmount: 10,
      destinationCurrency: 'USD',
      transactionFees: 1,
      exchangeRate: 1,
      updatedAt: '2026-11-22T10:00:00Z',
      documents: 0,
    };
    const ledger = new FileLedger('local', stateDir);
    const first = await openSession({ identity, env: 'local', file, ledger, command: 'run' });
    first.writer.append({ t: 'run', at: 'now', command: 'run', pid: 1 });
    first.writer.append({ t: 'created', ref: 'R-1', attempt: 1, key: 'k-1', requestId: 'q-1', payout, at: '2026-11-22T10:00:00Z' });
    first.writer.append({ t: 'run-end', at: 'now', exitCode: 0 });
    first.writer.close();

    const read = await foldBatch(ledger, identity.batchId);
    expect(read.folded.rows.get('R-1')?.payout?.status).toBe('PENDING');
    // listen, meanwhile
    appendFileSync(
      path,
      JSON.stringify({ t: 'status', ref: 'R-1', payoutId: 'p-1', status: 'PROCESSING', source: 'webhook', at: '2026-11-22T10:05:00Z' }) +
        '\n',
    );

    const session = await openSession({ identity, env: 'local', file, ledger, command: 'run', read });
    expect(session.folded.rows.get('R-1')?.payout?.status).toBe('PENDING');
    expect(await catchUpStatuses(session)).toBe(1);
    expect(session.folded.rows.get('R-1')?.payout?.status).toBe('PROCESSING');
    session.writer.close();
  });
});

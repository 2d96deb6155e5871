import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JournalWriter } from '../../src/journal/journal.ts';
import { readJournal } from './read-journal.ts';
import { foldJournal, rowState, type JournalLine } from '../../src/journal/lines.ts';

const dir = () => mkdtemp(join(tmpdir(), 'pb-journal-'));
const snap = (id: string) => ({
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

describe('journal: append-only JSON lines', () => {
  it('appends events and folds them back into row states', async () => {
    const path = join(await dir(), 'j.jsonl');
    const w = JournalWriter.open(path);
    w.append(
      {
        t: 'batch',
        v: 1,
        batchId: 'a'.repeat(64),
        batchIdSource: 'content',
        env: 'local',
        file: '/x.csv',
        fileSha256: 'a'.repeat(64),
        createdAt: 'now',
      },
      { sync: true },
    );
    w.append({ t: 'run', at: 'now', command: 'run', pid: 1 });
    w.append({ t: 'doc', sha256: 'd'.repeat(64), url: 'http://u/1' });
    w.append({ t: 'attach', ref: 'R1', attempt: 1, supportingDocument: 'http://u/1', documents: [], at: 'now' });
    w.append({ t: 'initiating', ref: 'R1', row: 2, attempt: 1, key: 'k1', body: '{"a":1}', at: 'now' }, { sync: true });
    w.append({ t: 'created', ref: 'R1', attempt: 1, key: 'k1', requestId: 'q', payout: snap('p1'), at: 'now' }, { sync: true });
    w.append({ t: 'initiating', ref: 'R2', row: 3, attempt: 1, key: 'k2', body: '{"b":2}', at: 'now' }, { sync: true });
    w.append({
      t: 'rejected',
      ref: 'R3',
      attempt: 1,
      key: 'k3',
      error: { status: 400, code: 'INSUFFICIENT_FUNDS', message: 'no' },
      at: 'now',
    });
    w.close();
    const r = readJournal<JournalLine>(path);
    expect(r.skipped).toBe(0);
    const f = foldJournal(r.events);
    expect(f.header?.batchId).toBe('a'.repeat(64));
    expect(f.interrupted).toBe(true);
    expect(rowState(f, 'R1')).toMatchObject({ phase: 'created', attempt: 1, key: 'k1', documents: ['http://u/1'] });
    expect(f.uploads).toEqual(new Map([['d'.repeat(64), 'http://u/1']]));
    expect(rowState(f, 'R2')).toMatchObject({ phase: 'initiating', key: 'k2', body: '{"b":2}' });
    expect(rowState(f, 'R3')).toMatchObject({ phase: 'rejected', error: { code: 'INSUFFICIENT_FUNDS' } });
    expect(rowState(f, 'R9').phase).toBe('none');
    // Each append added exactly one line: the file is never rewritten.
    expect(readFileSync(path, 'utf8').split('\n').filter(Boolean)).toHaveLength(8);
  });

  it('ignores a torn last line, and the next append starts on a fresh line', async () => {
    const path = join(await dir(), 'j.jsonl');
    const w = JournalWriter.open(path);
    w.append({ t: 'initiating', ref: 'R1', row: 2, attempt: 1, key: 'k1', body: '{}', at: 'now' });
    w.close();
    appendFileSync(path, '{"t":"created","ref":"R1","attem'); // kill -9 in the middle of a write
    let r = readJournal<JournalLine>(path);
    expect(r.tornTail).toBe(true);
    expect(r.skipped).toBe(1);
    expect(rowState(foldJournal(r.events), 'R1').phase).toBe('initiating');

    const w2 = JournalWriter.open(path);
    w2.append({ t: 'unknown', ref: 'R1', attempt: 1, key: 'k1', error: { message: 'dropped' }, at: 'now' });
    w2.close();
    r = readJournal<JournalLine>(path);
    expect(r.tornTail).toBe(false);
    expect(r.skipped).toBe(1);
    expect(rowState(foldJournal(r.events), 'R1').phase).toBe('unknown');
  });

  it('a created row never goes back to unsent, whatever lines follow', () => {
    const f = foldJournal([
      { t: 'initiating', ref: 'R', row: 2, attempt: 1, key: 'k', body: '{}', at: 'x' },
      { t: 'created', ref: 'R', attempt: 1, key: 'k', requestId: 'q', payout: snap('p'), at: 'x' },
      { t: 'unknown', ref: 'R', attempt: 1, key: 'k', error: { message: 'late' }, at: 'x' },
      { t: 'initiating', ref: 'R', row: 2, attempt: 2, key: 'k2', body: '{}', at: 'x' },
    ]);
    expect(rowState(f, 'R')).toMatchObject({ phase: 'created', key: 'k', payout: { id: 'p' } });
  });

  it("a doc line is the batch's: every row that sends the same bytes gets its documentUrl", () => {
    const h = (c: string) => c.repeat(64);
    const f = foldJournal([
      { t: 'doc', sha256: h('a'), url: 'https://s/a' },
      { t: 'attach', ref: 'R1', attempt: 1, supportingDocument: 'https://s/a', documents: [], at: 'x' },
      { t: 'doc', sha256: h('b'), url: 'https://s/b' },
      { t: 'attach', ref: 'R2', attempt: 1, supportingDocument: 'https://s/a', documents: ['https://s/b'], at: 'x' },
    ]);
    expect(f.uploads).toEqual(
      new Map([
        [h('a'), 'https://s/a'],
        [h('b'), 'https://s/b'],
      ]),
    );
    expect(rowState(f, 'R1').documents).toEqual(['https://s/a']);
    expect(rowState(f, 'R2').documents).toEqual(['https://s/a', 'https://s/b']);
    expect(f.rows.size).toBe(2); // no row named by a doc line
  });

  it('a missing journal is empty, and 100,000 lines fold', async () => {
    const d = await dir();
    expect(readJournal(join(d, 'none.jsonl')).events).toEqual([]);
    const path = join(d, 'big.jsonl');
    const lines: string[] = [];
    for (let i = 0; i < 50_000; i++) {
      lines.push(
        JSON.stringify({ t: 'initiating', ref: `R${i}`, row: i + 2, attempt: 1, key: `k${i}`, body: '{"sourceAmount":1}', at: 'x' }),
      );
      lines.push(JSON.stringify({ t: 'created', ref: `R${i}`, attempt: 1, key: `k${i}`, requestId: 'q', payout: snap(`p${i}`), at: 'x' }));
    }
    writeFileSync(path, lines.join('\n') + '\n');
    const r = readJournal<JournalLine>(path);
    expect(r.events).toHaveLength(100_000);
    const f = foldJournal(r.events);
    expect(f.rows.size).toBe(50_000);
    expect([...f.rows.values()].every((s) => s.phase === 'created')).toBe(true);
  });
});

describe('journal: later statuses of a created payout', () => {
  const created = (): JournalLine[] => [
    { t: 'initiating', ref: 'R1', row: 2, attempt: 1, key: 'k1', body: '{}', at: 'now' },
    { t: 'created', ref: 'R1', attempt: 1, key: 'k1', requestId: 'q', payout: snap('p1'), at: 'now' },
  ];
  const status = (s: string, changedAt: string, extra: Partial<Extract<JournalLine, { t: 'status' }>> = {}): JournalLine => ({
    t: 'status',
    ref: 'R1',
    payoutId: 'p1',
    status: s,
    changedAt,
    source: 'webhook',
    at: changedAt,
    ...extra,
  });

  it('folds forward only: a late or replayed older status never moves the row back', () => {
    const f = foldJournal([
      ...created(),
      status('PROCESSING', '2026-01-02T00:00:00Z'),
      status('PENDING', '2026-01-01T12:00:00Z'), // late GET answer
      status('SUCCESSFUL', '2026-01-03T00:00:00Z'),
      status('PROCESSING', '2026-01-02T00:00:00Z'), // replayed delivery
    ]);
    expect(rowState(f, 'R1').payout).toMatchObject({ status: 'SUCCESSFUL', updatedAt: '2026-01-03T00:00:00Z' });
  });

  it("a status without the service's time (a payout list's item) carries none: never the time it was journalled", () => {
    const listed: JournalLine = { t: 'status', ref: 'R1', payoutId: 'p1', status: 'PROCESSING', source: 'get', at: '2026-01-05T09:00:00Z' };
    const p = rowState(foldJournal([...created(), listed]), 'R1').payout!;
    expect(p.status).toBe('PROCESSING');
    expect(p.updatedAt).toBeUndefined();
  });

  it('keeps statusDetail and the information requests while they apply', () => {
    const asked = JSON.stringify([{ title: 'Invoice', type: 'FILE' }]);
    let f = foldJournal([...created(), status('ADDITIONAL_INFO_REQUIRED', '2026-01-02T00:00:00Z', { informationRequests: asked })]);
    expect(rowState(f, 'R1').payout).toMatchObject({ status: 'ADDITIONAL_INFO_REQUIRED', informationRequests: asked });
    f = foldJournal([
      ...created(),
      status('ADDITIONAL_INFO_REQUIRED', '2026-01-02T00:00:00Z', { informationRequests: asked }),
      status('PENDING', '2026-01-03T00:00:00Z', { statusDetail: 'ADDITIONAL_INFO_UNDER_REVIEW' }),
    ]);
    const p = rowState(f, 'R1').payout!;
    expect(p).toMatchObject({ status: 'PENDING', statusDetail: 'ADDITIONAL_INFO_UNDER_REVIEW' });
    expect(p.informationRequests).toBeUndefined();
  });

  it('ignores a status for another payout or for a row that was never created', () => {
    const f = foldJournal([
      ...created(),
      { ...status('SUCCESSFUL', '2026-01-03T00:00:00Z'), payoutId: 'someone-else' } as JournalLine,
      { ...status('SUCCESSFUL', '2026-01-03T00:00:00Z'), ref: 'R2' } as JournalLine,
    ]);
    expect(rowState(f, 'R1').payout?.status).toBe('PENDING');
    expect(rowState(f, 'R2').phase).toBe('none');
  });
});

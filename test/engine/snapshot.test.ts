// A run leaves a snapshot of its journal's fold (journal/snapshot.ts) when the journal grew enough,
// and the next run folds from it. What the run snapshots is its own states, so they must be
// exactly the fold of the journal's lines, whoever wrote them: the run's own and the status lines
// other processes (listen, status) append. The engine against the sandbox over real HTTP.
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBatch, type RunOptions } from '../../src/engine/run.ts';
import { readJournal } from '../../src/engine/session.ts';
import { JournalWriter } from '../../src/journal/journal.ts';
import { foldJournalFile } from '../../src/journal/rows.ts';
import { loadSnapshot, snapshotPathFor } from '../../src/journal/snapshot.ts';
import { readResults } from '../../src/results/read.ts';
import type { LocalSandbox } from '../../src/sandbox/index.ts';
import { UNATTENDED, connectionTo, startSb, writeBatch } from '../ops/helpers.ts';
import { initiates, ledgerJournals, tempDirs } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-snapshot-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

/** The one journal of the test's batch (run keeps it in the account's ledger of the state folder). */
const readJournalPathOf = (_file: string): string => ledgerJournals()[0]!;

const options = (sandbox: LocalSandbox, file: string): RunOptions => ({
  file,
  conn: connectionTo(sandbox),
  ...UNATTENDED,
  settleDelayMs: 10,
  checkpointMs: 60_000,
});

describe('journal snapshots left by runs', () => {
  it('the snapshot a run leaves is the fold of its journal; the next run reads from it and a status line from another process is in the next one', async () => {
    sb = await startSb();
    const file = await writeBatch(await dirs.make(), 'batch.csv', { rows: 4, currencies: ['GBP'] });
    const o = { ...options(sb, file), snapshotMinBytes: 0 };

    const first = await runBatch(o);
    expect(first.exitCode).toBe(0);
    const journal = first.journalPath;
    const s1 = loadSnapshot(journal)!;
    expect(s1.bytes).toBe(statSync(journal).size); // every line, the run's end included
    expect(s1.folded).toEqual(foldJournalFile(journal, { snapshot: false }).folded);
    expect([...s1.folded.rows.values()].map((s) => s.phase)).toEqual(['created', 'created', 'created', 'created']);
    expect(s1.folded).toMatchObject({ runs: 1, interrupted: false });

    // `listen` in another process learns that a payout moved on
    const [row] = s1.folded.rows.values();
    JournalWriter.open(journal).append({
      t: 'status',
      ref: row!.ref,
      payoutId: row!.payout!.id,
      status: 'PROCESSING',
      changedAt: '2099-01-01T00:00:00.000Z',
      source: 'webhook',
      at: new Date().toISOString(),
    });
    expect(readJournal(journal).scan.snapshotBytes).toBe(s1.bytes);

    const sent = initiates(sb).length;
    const second = await runBatch(o);
    expect(second.exitCode).toBe(0);
    expect(initiates(sb).length).toBe(sent);
    const results = await readResults(second.resultsPath);
    expect(results.rows.map((r) => r.result.status)).toEqual(['PROCESSING', 'PENDING', 'PENDING', 'PENDING']);
    const s2 = loadSnapshot(journal)!;
    expect(s2.bytes).toBe(statSync(journal).size);
    expect(s2.folded).toEqual(foldJournalFile(journal, { snapshot: false }).folded);
    expect(s2.folded.rows.get(row!.ref)?.payout?.status).toBe('PROCESSING');
    expect(s2.folded).toMatchObject({ runs: 2, interrupted: false });

    // below SNAPSHOT_MIN_BYTES of new lines, no new snapshot: the next run reads from this one
    const before = readFileSync(second.resultsPath);
    const third = await runBatch({ ...o, snapshotMinBytes: undefined });
    expect(third.exitCode).toBe(0);
    expect(loadSnapshot(journal)!.bytes).toBe(s2.bytes);
    expect(readFileSync(third.resultsPath)).toEqual(before);
    expect(foldJournalFile(journal).folded).toEqual(foldJournalFile(journal, { snapshot: false }).folded);
  });

  it('a status line another process appends while the run goes on is in its snapshot', async () => {
    sb = await startSb();
    const file = await writeBatch(await dirs.make(), 'batch.csv', { rows: 3, currencies: ['GBP'] });
    let appended: { ref: string; id: string } | undefined;
    let journal = '';
    const r = await runBatch({
      ...options(sb, file),
      snapshotMinBytes: 0,
      concurrency: 1,
      onEvent: (e) => {
        if (appended || e.type !== 'row-done' || !e.payoutId) return;
        appended = { ref: e.reference, id: e.payoutId };
        journal = readJournalPathOf(file);
        JournalWriter.open(journal).append({
          t: 'status',
          ref: e.reference,
          payoutId: e.payoutId,
          status: 'PROCESSING',
          changedAt: '2099-01-01T00:00:00.000Z',
          source: 'webhook',
          at: 'now',
        });
      },
    });
    expect(r.exitCode).toBe(0);
    expect(r.journalPath).toBe(journal);
    const s = loadSnapshot(journal)!;
    expect(s.bytes).toBe(statSync(journal).size);
    expect(s.folded).toEqual(foldJournalFile(journal, { snapshot: false }).folded);
    expect(s.folded.rows.get(appended!.ref)?.payout).toMatchObject({ id: appended!.id, status: 'PROCESSING' });
  });

  it('a snapshot that cannot be written fails nothing: the run ends as it would, the next one folds every line', async () => {
    sb = await startSb();
    const file = await writeBatch(await dirs.make(), 'batch.csv', { rows: 2, currencies: ['GBP'] });
    const first = await runBatch({ ...options(sb, file), snapshotMinBytes: Number.MAX_SAFE_INTEGER });
    expect(first.exitCode).toBe(0);
    // a folder (not empty) where the snapshot goes: the rename over it fails
    mkdirSync(join(snapshotPathFor(first.journalPath), 'x'), { recursive: true });
    const second = await runBatch({ ...options(sb, file), snapshotMinBytes: 0 });
    expect(second.exitCode).toBe(0);
    expect(loadSnapshot(first.journalPath)).toBeUndefined();
    const r = foldJournalFile(first.journalPath);
    expect(r.snapshotBytes).toBe(0);
    expect([...r.folded.rows.values()].map((s) => s.phase)).toEqual(['created', 'created']);
  });

  it('a journal smaller than SNAPSHOT_MIN_BYTES gets no snapshot', async () => {
    sb = await startSb();
    const file = await writeBatch(await dirs.make(), 'batch.csv', { rows: 2, currencies: ['GBP'] });
    const r = await runBatch(options(sb, file));
    expect(r.exitCode).toBe(0);
    expect(existsSync(snapshotPathFor(r.journalPath))).toBe(false);
  });
});

// foldJournalFile folds while it reads (no array of events): it must give the states the fold of
// the whole event list gives, line for line, except that a created row no longer holds the body
// of its initiate (never sent again); a row still unsettled keeps its body byte for byte.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { foldJournal, rowState, type FoldedJournal, type JournalLine } from '../../src/journal/lines.ts';
import { foldJournalFile, readJournal } from './read-journal.ts';
import { body, dir, mixedJournal, removeDirs } from './journals.ts';

afterAll(removeDirs);

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

  it('a missing journal folds to nothing; a torn one counts its skipped line', async () => {
    const d = await dir();
    const none = foldJournalFile(join(d, 'none.jsonl'));
    expect(none).toMatchObject({ events: 0, skipped: 0, tornTail: false });
    expect(none.folded.rows.size).toBe(0);
    const torn = join(d, 'torn.jsonl');
    writeFileSync(torn, '{"t":"run","at"');
    expect(foldJournalFile(torn)).toMatchObject({ tornTail: true, skipped: 1 });
    expect(foldJournalFile(await mixedJournal()).events).toBeGreaterThan(0);
  });
});

// Reading a journal file whole, for tests: the commands read it through their ledger (ledger/file.ts), folding while reading.
import { scanAppended, scanJournal, type JournalEvent, type JournalScan } from '../../src/journal/journal.ts';
import { applyEvent, emptyFold, type FoldedJournal, type JournalLine } from '../../src/journal/lines.ts';

/** Every complete event of a journal file, in order, into an array. A missing file is an empty journal. */
export function readJournal<E extends JournalEvent = JournalEvent>(path: string): Omit<JournalScan, 'events'> & { events: E[] } {
  const events: E[] = [];
  return { ...scanJournal<E>(path, (e) => events.push(e)), events };
}

/** Folds a journal file in one pass, as FileLedger.read with foldBatch does: no array of events, only the row states. */
export function foldJournalFile(path: string): JournalScan & { folded: FoldedJournal } {
  const folded = emptyFold();
  const scan = scanJournal<JournalLine>(path, (e) => applyEvent(folded, e));
  return { folded, ...scan };
}

/** The events of the complete lines appended after byte `from`, into an array, and where to read next (FileLedger.read from a position). */
export function readAppended<E extends JournalEvent = JournalEvent>(
  path: string,
  from: number,
): { events: E[]; next: number; skipped: number } {
  const events: E[] = [];
  const { next, skipped } = scanAppended<E>(path, from, (e) => events.push(e));
  return { events, next, skipped };
}

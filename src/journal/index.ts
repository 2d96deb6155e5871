// The append-only per-batch journal (journal.ts) and its fold into row states (rows.ts).
export { JournalWriter, readAppended, readJournal, scanJournal, type JournalEvent, type JournalScan, type ReadJournal } from './journal.ts';
export {
  JOURNAL_VERSION,
  applyEvent,
  emptyFold,
  foldJournal,
  foldJournalFile,
  rowState,
  type BatchHeader,
  type ErrorSnapshot,
  type FoldedJournal,
  type FoldedJournalFile,
  type JournalLine,
  type PayoutSnapshot,
  type RowEvent,
  type RowPhase,
  type RowState,
} from './rows.ts';

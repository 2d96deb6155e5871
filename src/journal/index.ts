// The append-only per-batch journal (journal.ts), its fold into row states (rows.ts), and the
// snapshot of a fold that spares reading a big journal whole again (snapshot.ts).
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
export {
  SNAPSHOT_MIN_BYTES,
  SNAPSHOT_VERSION,
  encodeSnapshot,
  loadSnapshot,
  prefixSha256,
  snapshotPathFor,
  type LoadedSnapshot,
  type SnapshotCovers,
} from './snapshot.ts';

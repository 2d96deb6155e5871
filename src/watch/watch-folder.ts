// `watch DIR`: unattended runs of the files dropped into DIR/inbox (src/follow-up/README.md says what
// each folder holds and every rule). config.ts the configuration; inbox.ts which entries are taken
// and when; claims.ts claim folders and their owners (with a team ledger, the claims of contents
// are src/ledger/pg-claims.ts); checks.ts what is refused before sending; watcher.ts the steps
// (FolderWatch). Nothing here prints or exits: the CLI does.
export { CONFIG_FILE, WatchConfig, WatchConfigError, readWatchConfig } from './config.ts';
export { companionsOf, completeIn, inboxCandidates, layout } from './inbox.ts';
export { judgeRun, watchFolder, worstKind, type FileOutcome, type WatchOptions, type WatchResult } from './watcher.ts';

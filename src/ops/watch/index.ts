// `watch DIR`: unattended runs of the files dropped into DIR/inbox.
//
//   DIR/payout-batch.json   the configuration (zod, below): environment, guards, timings
//   DIR/inbox/              files are dropped here (dotfiles and *.tmp are ignored)
//   DIR/processing/<claim>/ a claimed file, its results and claim.json (owner, sha256)
//   DIR/done/<claim>/       every row created: the file, <name>.results.<ext>, <name>.summary.json
//   DIR/failed/<claim>/     refused, unusable, some rows not created, or already processed
//   DIR/.state/             the engine's journals: the account's ledger (engine/ledger.ts) of
//                            "stateDir" in the configuration, by default DIR/.state, whoever runs
//                            the watch (a person's `run` keeps its own ledger: the service's
//                            idempotency keys, from the references, guard between the two)
//   DIR/.watch.lock         held for a few milliseconds around every move (pid, host, start time)
//
// A file is taken when complete: a marker "<name>.ready" beside it, or (unless requireReady) its
// size and mtime unchanged for settleSeconds. Its size and mtime are recorded at the claim: a file
// that changes afterwards (a writer still at work) is refused before anything is sent, or, when it
// changes once rows are under way, reported in failed/ (the rows added were not processed).
// Nothing is ever read through a symbolic link: a link in the inbox is refused (moved to failed/
// unread), and the documents a file names must lie in DIR/documents with no link on the way
// (unless allowDocumentsOutside). It is claimed by an atomic rename into a claim
// folder of its own under processing/ (a rename succeeds for one process only; a second file of
// the same name gets another claim folder and cannot overwrite the first). The claim folder
// keeps the file's name, so the engine's journal (in the ledger, named by the file's content) makes
// a claim killed mid-file resumable: on start, claims whose owner is dead (pid gone on this host,
// or no heartbeat for claimStaleSeconds from another host) are taken over and resumed first,
// before new files. A claim whose owner is alive on this host is never taken over, however old
// its heartbeat (a blocked or stopped process still holds it).
//
// A new file whose content was already sent (a journal of that content in the ledger has sent rows),
// or is being processed under another claim, goes to failed/ with the reason: it is never paid
// again. Nothing here prints or exits: the CLI does.
//
// With "requireApprovals" (four eyes), a file runs only with its plan and approvals dropped beside
// it (<stem>.plan.json, <stem>.plan.json.approvals.json), claimed with it and checked by
// src/approvals before anything is sent; it then runs exactly that plan.
//
// config.ts the configuration; inbox.ts which entries are taken and when; claims.ts claim folders
// and their owners; checks.ts what is refused before sending; watcher.ts the steps (FolderWatch).
export { CONFIG_FILE, WatchConfig, WatchConfigError, readWatchConfig } from './config.ts';
export { companionsOf, completeIn, inboxCandidates } from './inbox.ts';
export { judgeRun, watchFolder, worstExit, type FileOutcome, type WatchOptions, type WatchResult } from './watcher.ts';

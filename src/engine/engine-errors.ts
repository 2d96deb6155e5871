// The errors of the engine's boundary, each with what the user can do about it; the CLI maps each
// to an exit code (cli/render.ts handleEngineError), the core never does.

/** An option or file the command cannot use (exit 2), found before any request: nothing was sent. */
export class BatchUnusable extends Error {
  override readonly name = 'BatchUnusable';
  constructor(
    readonly code: 'BATCH_ID' | 'MONEY_FLAG' | 'PLAN_FILE' | 'PREPARED_BY' | 'NO_BATCH_FILE' | 'SANCTIONS_LIST',
    message: string,
  ) {
    super(message);
  }
}

/** A refusal before anything is sent (exit 3), with a message for the user: the ledger's (it refuses references). */
export { BatchRefused } from '../ledger/account-ledger.ts';

/**
 * A failure once rows may have been sent (exit 4): whatever went out is journalled, so running the
 * same command again is safe (a payout is never sent twice: keys and bodies come from the journal).
 */
export class FailedAfterSending extends Error {
  override readonly name = 'FailedAfterSending';
  constructor(
    readonly journalPath: string,
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

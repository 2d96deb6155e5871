// The engine boundary's errors, each saying what the user can do; only the CLI maps them to exit codes.

/** An option or file the command cannot use (exit 2), found before any request: nothing was sent. */
export class BatchUnusable extends Error {
  override readonly name = 'BatchUnusable';
  constructor(
    readonly code: 'BATCH_ID' | 'MONEY_FLAG' | 'PLAN_FILE' | 'PREPARED_BY' | 'NO_BATCH_FILE' | 'SANCTIONS_LIST' | 'CLEARANCE',
    message: string,
  ) {
    super(message);
  }
}

/** A refusal before anything is sent (exit 3): the ledger's, which refuses references. */
export { BatchRefused } from '../ledger/account-ledger.ts';

/** A failure once rows may have been sent (exit 4): whatever went out is journalled, so rerunning is safe. */
export class FailedAfterSending extends Error {
  override readonly name = 'FailedAfterSending';
  constructor(
    readonly journalPath: string,
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

// Exit codes, one table for every command (README "Exit codes"). Stable: cron jobs act on them.
// The core never decides one: it returns how a run ended (`RunKind`), mapped here.
import type { RunKind } from '../engine/pipeline.ts';

export const ExitCode = {
  /** Everything asked for was done. */
  OK: 0,
  /** Done, but some rows failed or are invalid: see the results or the report. */
  ROWS_FAILED: 1,
  /** Unusable input or usage: nothing was sent. */
  UNUSABLE_INPUT: 2,
  /** Refused before sending: preflight, guards, confirmation declined, insufficient funds. */
  REFUSED: 3,
  /**
   * The service could not be reached or refused the key, or a failure came after sending began:
   * part may have been sent, and resume is safe.
   */
  SERVICE_UNAVAILABLE: 4,
  /**
   * `status`: nothing failed and nothing waits for us, but some payouts are still in progress
   * (PENDING, PROCESSING): the batch is not finished, poll again later. `run`, `retry`: the only rows
   * not sent are dated later (NOT_DUE, a pain.001's ReqdExctnDt): run the same file again on their day.
   */
  NOT_FINISHED: 5,
  /**
   * `run`, `retry`: stopped by Ctrl-C (SIGINT) or SIGTERM, 128 + SIGINT's number as shells report
   * it. No payout was started after the signal; the requests in flight were answered and
   * journalled, rows not started are NOT_SENT, and running the same command again resumes (safe).
   */
  INTERRUPTED: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

const OF_KIND: Record<RunKind, ExitCode> = {
  ok: ExitCode.OK,
  'not-finished': ExitCode.NOT_FINISHED,
  'rows-failed': ExitCode.ROWS_FAILED,
  unusable: ExitCode.UNUSABLE_INPUT,
  refused: ExitCode.REFUSED,
  halted: ExitCode.SERVICE_UNAVAILABLE,
};

/** The exit code of a run, from how it ended; a run stopped on request (Ctrl-C) exits 130 however it ended. */
export const exitCodeOf = (r: { kind: RunKind; stopped?: boolean }): ExitCode => (r.stopped ? ExitCode.INTERRUPTED : OF_KIND[r.kind]);

// Exit codes, one table for every command (README "Exit codes"), stable: cron jobs act on them. A run's `RunKind` is mapped here.
import type { RunKind } from '../engine/pipeline.ts';

export const ExitCode = {
  OK: 0,
  /** Done, but some rows failed or are invalid: see the results or the report. */
  ROWS_FAILED: 1,
  /** Unusable input or usage: nothing was sent. */
  UNUSABLE_INPUT: 2,
  /** Refused before sending: preflight, guards, confirmation declined, insufficient funds. */
  REFUSED: 3,
  /** Service unreachable or key refused, or a failure after sending began (resume is safe). */
  SERVICE_UNAVAILABLE: 4,
  /** `status`: some payouts still in progress, nothing else wrong; `run`, `retry`, `status`: the only rows not sent are NOT_DUE. */
  NOT_FINISHED: 5,
  /** `run`, `retry`, `watch --once` with a file left in processing/: stopped by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it); resume is safe. */
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

/** A run stopped on request exits 130 however it ended. */
export const exitCodeOf = (r: { kind: RunKind; stopped?: boolean }): ExitCode => (r.stopped ? ExitCode.INTERRUPTED : OF_KIND[r.kind]);

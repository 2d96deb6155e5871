// The shape of one CLI command: a yargs builder plus a run function that returns an exit code
// (its usage line and description are in commands/index.ts, read without loading the module).
// Commands print through `io` and never call process.exit: only the entry point sets the code.
// Also the few text helpers every command's output uses.
import type { Argv } from 'yargs';
import type { ExitCode } from './exit-codes.ts';
import type { PayoutApiError } from '../client/errors.ts';
import type { Outcome } from '../signals/signals.ts';

export interface CliIO {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Resolves when the user asks to stop (SIGINT/SIGTERM); long-running commands await it. */
  stopSignal: Promise<void>;
  /** What the command's signals report at its end (--ping-url, --metrics-file, --notify-url: options.ts withSignals). */
  note?: (o: Partial<Outcome>) => void;
  /** The same signals around each tick of a watch left running (without --once). */
  tick?: { start: () => Promise<void>; end: (exitCode: ExitCode, o: Partial<Outcome>) => Promise<void> };
}

/** A command with the arguments its builder parses: `run` is typed by what `builder` declares. */
export interface CliCommand<A> {
  builder: (y: Argv) => Argv<A>;
  run: (args: A, io: CliIO) => Promise<ExitCode>;
}

/**
 * A command as the table of commands (commands/index.ts) holds it, its arguments' type erased:
 * main.ts hands `run` what yargs parsed with this same command's builder (the one place the type
 * is taken on trust).
 */
export const defineCommand = <A>(c: CliCommand<A>) => c as unknown as CliCommand<unknown>;

/** The --json output of every command: one object, indented, on stdout. */
export function printJson(io: CliIO, value: unknown): void {
  io.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

/** 3 -> "3 rows", 1 -> "1 row". */
export { plural } from '../text.ts';

/** The service's answer, plainly: its code (or HTTP status), its message, the request id to quote. */
export const serviceAnswer = (e: PayoutApiError) => `${e.code ?? `HTTP ${e.status ?? '?'}`}: ${e.message} (request id ${e.requestId})`;

/** An AbortSignal that aborts when the user asks to stop (io.stopSignal). */
export function abortOn(stopSignal: Promise<void>): AbortSignal {
  const stop = new AbortController();
  void stopSignal.then(() => stop.abort());
  return stop.signal;
}

/** A message for the user that ends the command with a code: no stack trace is shown. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = 2,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * A command that cannot go on for a cause other than how it was called (a key, an environment, a
 * ledger, a configuration, a folder): one line and its exit code, without the pointer to --help.
 */
export class CommandError extends UsageError {}

/** A boolean flag, false unless given: the most common shape of a yargs option here. */
export const flag = (describe: string) => ({ type: 'boolean', default: false, describe }) as const;

// The shape of one CLI command (a yargs builder, a run returning an exit code), its IO, errors and shared helpers.
import type { Argv } from 'yargs';
import { ExitCode } from './exit-codes.ts';
import type { PayoutApiError } from '../client/errors.ts';
import type { Outcome } from '../signals/signals.ts';
import type { SandboxShapes } from '../sandbox/contract.ts';
import { parseDuration } from '../text.ts';

export interface CliIO {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Resolves when the user asks to stop (SIGINT/SIGTERM). */
  stopSignal: Promise<void>;
  /** What the command's signals report at its end (options.ts signalled). */
  note?: (o: Partial<Outcome>) => void;
  /** The same signals around each tick of a watch left running (without --once). */
  tick?: { start: () => Promise<void>; end: (exitCode: ExitCode, o: Partial<Outcome>) => Promise<void> };
}

export type ArgsOf<B extends (y: Argv) => Argv<unknown>> = ReturnType<B> extends Argv<infer A> ? A : never;

export interface CliCommand<A> {
  builder: (y: Argv) => Argv<A>;
  run: (args: A, io: CliIO) => Promise<ExitCode>;
}

/** A command, its arguments' type inferred from its builder, then erased: main.ts hands `run` what its own builder parsed (the type taken on trust). */
export const defineCommand = <A>(builder: (y: Argv) => Argv<A>, run: CliCommand<A>['run']) =>
  ({
    builder,
    // a password in --ledger refused by every command, whether it opens the ledger or not: `ps` shows it to every user
    run: async (args: A & { ledger?: string }, io: CliIO) => {
      // (loaded here, not at the top: main.ts imports this file, and `--version` should not load the ledger's code)
      if (args.ledger && (await import('../ledger/pg-db.ts')).hasPassword(args.ledger))
        throw new UsageError(
          '--ledger takes no password (other users see it in ps): use PGPASSWORD, ~/.pgpass or $PAYOUT_BATCH_LEDGER_URL',
        );
      return run(args, io);
    },
  }) as unknown as CliCommand<unknown>;

export function printJson(io: CliIO, value: unknown): void {
  io.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

/** The --json document of a command that ended on an error: why it was refused (exit 3), else the error. */
export const failureJson = (exitCode: ExitCode, said: string) => ({
  exitCode,
  ...(exitCode === ExitCode.REFUSED ? { refused: [said] } : { error: said }),
});

/** With --json, an error thrown up to main (a file not there, a key file not read, a ledger not reached) is the document too. */
export const jsonOnThrow = (c: CliCommand<unknown>): CliCommand<unknown> => ({
  ...c,
  run: (args, io) =>
    c.run(args, io).catch((e: unknown) => {
      const exitCode = e instanceof UsageError ? e.exitCode : ExitCode.UNUSABLE_INPUT;
      if ((args as { json?: boolean }).json) printJson(io, failureJson(exitCode, (e as Error).message));
      throw e;
    }),
});

export function said(io: CliIO, message: string, code: ExitCode): ExitCode {
  io.stderr.write(`payout-batch: ${message}\n`);
  return code;
}

/** A failure `said`, its `why` noted for the signals and, with --json, the one document on stdout. */
export function saidFailed(io: CliIO, json: boolean | undefined, message: string, code: ExitCode, why = message): ExitCode {
  said(io, message, code);
  io.note?.({ reasons: [why] });
  if (json) printJson(io, failureJson(code, why));
  return code;
}

export { plural } from '../text.ts';

export const serviceAnswer = (e: PayoutApiError) => `${e.code ?? `HTTP ${e.status ?? '?'}`}: ${e.message} (request id ${e.requestId})`;

export function abortOn(stopSignal: Promise<void>): AbortSignal {
  const stop = new AbortController();
  void stopSignal.then(() => stop.abort());
  return stop.signal;
}

/** `--api-key` in any form: refused, its value never quoted back (main.ts, options.ts). */
export const API_KEY_REFUSED =
  'the API key is never taken from the command line (other users see it in ps): set PAYOUT_API_KEY or use --key-file';

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

/** A failure not of how the command was called (key, environment, ledger, folder): no pointer to --help. */
export class CommandError extends UsageError {}

/** f's value (or promise); an error of class `kind` it throws is said `as` a message for the user (by default, its own). */
export function saying<T, E extends Error>(
  f: () => T,
  kind: abstract new (...a: never[]) => E,
  as: (e: E) => UsageError = (e) => new CommandError(e.message),
): T {
  const said = (e: unknown): never => {
    throw e instanceof kind ? as(e) : e;
  };
  try {
    const value = f();
    return (value instanceof Promise ? value.catch(said) : value) as T;
  } catch (e) {
    return said(e);
  }
}

/** The shapes of most yargs options here: a boolean flag false unless given, a string, strings (repeatable), a number. */
export const flag = (describe: string) => ({ type: 'boolean', default: false, describe }) as const;
export const str = (describe: string) => ({ type: 'string', requiresArg: true, describe }) as const;
export const strs = (describe: string) => ({ type: 'string', array: true, requiresArg: true, describe }) as const;
export const num = (describe: string) => ({ type: 'number', describe }) as const;

/** --FLAG TEXT, a duration (7d, 12h, 90m), in milliseconds. */
export const durationFlag = (flag: string, text: string): number =>
  saying(
    () => parseDuration(text),
    RangeError,
    (e) => new UsageError(`--${flag} ${e.message}`),
  );

export const SHAPES_VARIABLE = 'PAYOUT_SANDBOX_SHAPES';

/** The reading of the spec a local sandbox answers in (`sandbox --shapes`, $PAYOUT_SANDBOX_SHAPES); undefined when not given. */
export function parseShapes(value: string | undefined, source: string): SandboxShapes | undefined {
  const v = value?.trim().toLowerCase();
  if (!v) return undefined;
  if (v === 'strict' || v === 'variant') return v;
  throw new UsageError(`${source} is strict or variant (got "${value}")`);
}

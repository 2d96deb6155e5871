// The entry point: parses flags with yargs, runs one command, turns its outcome into an exit code.
// Nothing below src/cli reads process.argv, prints or exits.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yargs from 'yargs';
import { packageRoot } from '../package-root.ts';
import { commands } from './commands/index.ts';
import { UsageError, type CliIO } from './command.ts';
import { ExitCode } from './exit-codes.ts';

export function processIO(): CliIO {
  // The handlers stay installed (not `once`): proper-lockfile's signal-exit re-raises a signal that
  // no other listener handles, which would kill the process before it stops cleanly. A second
  // signal still ends it at once, as a second Ctrl-C is expected to.
  let signals = 0;
  const stopSignal = new Promise<void>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      if (signals++ > 0) process.exit(signal === 'SIGINT' ? 130 : 143);
      resolve();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd(), stopSignal };
}

/** Ours: yargs would guess from the current folder ("unknown" there). */
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

export async function main(argv: string[], io: CliIO = processIO()): Promise<number> {
  let code: number = ExitCode.OK;
  let parser = yargs(argv)
    .scriptName('payout-batch')
    .version(packageVersion())
    .usage('$0 <command> [options]\n\nBatch payouts from a CSV or Excel file, with a local sandbox of the payout service.')
    .strict()
    .demandCommand(1, 'Name a command; see the list above.')
    .recommendCommands()
    // yargs renders a command's help before running it, shown or not: wrapping it to the terminal
    // costs a tenth of a second's startup, so only a help that is asked for is wrapped.
    .wrap(argv.includes('--help') || argv.includes('-h') ? Math.min(110, process.stdout.columns ?? 110) : null)
    .epilogue(
      'Exit codes: 0 done, 1 some rows failed or invalid, 2 unusable input or usage, 3 refused before sending, 4 service unreachable, key refused or a failure after sending began (resume is safe).',
    )
    .fail((msg, err) => {
      throw err ?? new UsageError(msg);
    });
  try {
    // Only the command named on the line is loaded; the others are listed by name (help, typos).
    const named = commands.find((c) => c.command.split(' ')[0] === argv.find((a) => !a.startsWith('-')));
    for (const c of commands) {
      const full = c === named ? (await c.load()).default : undefined;
      parser = parser.command({
        command: c.command,
        describe: c.describe,
        builder: full ? full.builder : {},
        handler: async (args) => {
          if (full) code = await full.run(args, io);
        },
      });
    }
    await parser.parseAsync();
    return code;
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`payout-batch: ${err.message}\nRun "payout-batch --help" for usage.\n`);
      return err.exitCode;
    }
    // An unexpected failure is still a message, not a stack trace; PAYOUT_BATCH_DEBUG shows it.
    const message = err instanceof Error ? err.message : String(err);
    io.stderr.write(`payout-batch: unexpected error: ${message}\n`);
    if (io.env.PAYOUT_BATCH_DEBUG && err instanceof Error) io.stderr.write(`${err.stack}\n`);
    return ExitCode.UNUSABLE_INPUT;
  }
}

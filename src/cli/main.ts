// The entry point: parses flags with yargs, runs one command, turns its outcome into an exit code.
import { isAbsolute } from 'node:path';
import yargs from 'yargs';
import { looksLikeSecret } from '../client/api-key.ts';
import { packageJson } from '../package-root.ts';
import { commands } from './commands/commands.ts';
import { API_KEY_REFUSED, CommandError, UsageError, jsonOnThrow, type CliIO } from './command.ts';
import { ExitCode } from './exit-codes.ts';

function processIO(): CliIO {
  // The first SIGINT or SIGTERM asks the command to stop cleanly; a second finds no handler and ends
  // the process at once (safe: the journal holds every request sent).
  const stopSignal = new Promise<void>((resolve) => {
    const signals = ['SIGINT', 'SIGTERM'] as const;
    const first = () => {
      for (const s of signals) process.off(s, first);
      resolve();
    };
    for (const s of signals) process.on(s, first);
  });
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd(), stopSignal };
}

/** The option names a yargs parser knows, aliases included (getOptions: not in yargs' typings). */
function knownOptions(y: unknown): Set<string> {
  const o = (y as { getOptions: () => { key: Record<string, unknown>; alias: Record<string, string[]> } }).getOptions();
  return new Set([...Object.keys(o.key), ...Object.entries(o.alias).flatMap(([k, v]) => [k, ...v])]);
}

const commandNamed = (word: string | undefined) => commands.find((c) => c.word === word);

/** The flags on the line the command does not know, each once, as typed. */
function unknownFlags(argv: string[], known: Set<string>): string[] {
  const out = new Set<string>();
  for (const a of argv) {
    if (a === '--') break;
    if (a.startsWith('--')) {
      const name = a.slice(2).split('=')[0]!;
      if (!known.has(name) && !(name.startsWith('no-') && known.has(name.slice(3)))) out.add(`--${name}`);
    } else if (/^-[^-\d]/.test(a)) {
      for (const c of a.slice(1).split('=')[0]!) if (!known.has(c)) out.add(`-${c}`);
    }
  }
  return [...out];
}

/**
 * yargs' usage messages, reworded: an unknown flag named once (yargs repeats it in camelCase, or
 * names the file it took as its value), an unknown command said so, a missing argument's usage line.
 */
function usageMessage(msg: string, argv: string[], known: Set<string>): string {
  // (`--api-key= KEY`: the key would be quoted as a stray argument)
  if (argv.some((a) => /^--api-key(=|$)/.test(a))) return API_KEY_REFUSED;
  const text = reworded(msg, argv, known);
  // (`--key-file= KEY`, `--secret-file= whsec_...`, `--env=KEY`: the stray word or value is quoted back)
  const secret = argv.flatMap((a) => a.replace(/^-+/, '').split('=')).some((w) => looksLikeSecret(w) && text.includes(w));
  return secret
    ? `an argument was not expected${/^Unknown arg/.test(msg) ? '' : ' or is not valid'} (not shown: it looks like a secret)`
    : text;
}

function reworded(msg: string, argv: string[], known: Set<string>): string {
  const unknown = unknownFlags(argv, known);
  if (unknown.length) return `unknown flag${unknown.length === 1 ? '' : 's'}: ${unknown.join(', ')}`;
  const word = argv.find((a) => !a.startsWith('-'));
  const entry = commandNamed(word);
  if (/^Did you mean /.test(msg)) return `unknown command "${word}": ${msg.replace(/^Did/, 'did')}`;
  if (/^Unknown arguments?: /.test(msg) && word && !entry) return `unknown command "${word}"`;
  if (/^Not enough non-option arguments/.test(msg) && entry) return `missing an argument: payout-batch ${entry.command}`;
  const flag = /^Not enough arguments following: (\S+)$/.exec(msg)?.[1];
  return flag ? `--${flag} needs a value` : msg;
}

/** yargs renders a command's help as its handler starts, kept to show should it fail; `.fail` here says one line instead: 0.07 s of `plan`'s CPU saved. */
function skipHelpCache(y: unknown): void {
  // (yargs' internals, absent from its types: a yargs without them renders the help as before)
  const usage = (y as { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage: () => void } } })
    .getInternalMethods?.()
    .getUsageInstance?.();
  if (usage) usage.cacheHelpMessage = () => undefined;
}

// A flag given an empty value (`--plan=`, `--plan "$UNSET"`): refused, never read as not given; then a flag of one value given
// twice: yargs makes it a list, which the command would read as one value.
function wrongFlag(args: Record<string, unknown>, y: unknown): string | undefined {
  const flags = Object.entries(args).filter(([k]) => k !== '_' && k !== '$0');
  const empty = flags.find(([, v]) => v === '' || (Array.isArray(v) && v.includes('')));
  if (empty) return `--${empty[0]} needs a value: it was given empty`;
  const lists = new Set((y as { getOptions: () => { array: string[] } }).getOptions().array);
  const twice = flags.find(([k, v]) => Array.isArray(v) && !lists.has(k));
  return twice && `--${twice[0]} was given more than once: give it once`;
}

export async function main(argv: string[], io: CliIO = processIO()): Promise<number> {
  let code: number = ExitCode.OK;
  // Bare `payout-batch` prints the help on stdout and exits 0, as `gh` does.
  const bare = argv.length === 0;
  // The named command's parser once its builder ran: its flags, for the messages.
  let commandParser: unknown;
  let parser = yargs(argv)
    .scriptName('payout-batch')
    .locale('en') // (not LANG's: the messages are reworded, and secrets found, in English)
    .version(packageJson().version)
    .alias('h', 'help')
    .usage('$0 <command> [options]\n\nBatch payouts from a CSV or Excel file, with a local sandbox of the payout service.')
    .strict()
    // no camelCase copies of the flags, which yargs would also name in its messages
    .parserConfiguration({ 'camel-case-expansion': false })
    .demandCommand(1, 'name a command ("payout-batch" alone lists them)')
    .recommendCommands()
    // yargs renders a command's help even unshown: wrapping it costs 0.1 s of startup, so only when asked
    .wrap(bare || argv.includes('--help') || argv.includes('-h') ? Math.min(110, process.stdout.columns ?? 110) : null)
    .epilogue(
      'Exit codes: 0 done, 1 some rows failed or invalid, 2 unusable input or usage, 3 refused before sending, 4 service unreachable, key refused or a failure after sending began (resume is safe), 5 not finished: status with payouts still in progress, or run, retry or status whose only rows not sent are dated later, 130 run/retry/watch --once stopped by Ctrl-C (resume is safe).',
    )
    .fail((msg, err) => {
      // (yargs' own: a flag without its value)
      if (err && err.name !== 'YError') throw err;
      throw new UsageError(usageMessage(msg ?? err?.message ?? '', argv, knownOptions(commandParser ?? parser)));
    });
  try {
    // Only the named command is loaded; the others are listed by name (help, typos).
    const named = commandNamed(argv.find((a) => !a.startsWith('-')));
    for (const c of commands) {
      const full = c === named ? (await c.load()).default : undefined;
      parser = parser.command({
        command: c.command,
        describe: c.describe,
        builder: full ? (y) => (commandParser = full.builder(y)) : {},
        handler: async (args) => {
          const wrong = wrongFlag(args, commandParser);
          if (wrong) throw new UsageError(wrong);
          const state = io.env.PAYOUT_BATCH_STATE_DIR;
          // (from each folder a command runs in, a relative one would name another state folder, and another ledger)
          if (state && !isAbsolute(state))
            throw new CommandError(`$PAYOUT_BATCH_STATE_DIR ${state} is not an absolute path: name the folder from /`);
          if (full) code = await jsonOnThrow(full).run(args, io);
        },
      });
    }
    if (bare) {
      io.stdout.write(`${await parser.getHelp()}\n`);
      return ExitCode.OK;
    }
    skipHelpCache(parser);
    // (with a callback yargs neither prints --help and --version nor exits: both go to io.stdout)
    let shown = '';
    await parser.parseAsync(argv, {}, (_err, _args, output) => void (shown = output));
    if (shown) io.stdout.write(`${shown}\n`);
    return code;
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`payout-batch: ${err.message}\n${err instanceof CommandError ? '' : 'Run "payout-batch --help" for usage.\n'}`);
      return err.exitCode;
    }
    // a message, not a stack trace (PAYOUT_BATCH_DEBUG shows it)
    const message = err instanceof Error ? err.message : String(err);
    io.stderr.write(`payout-batch: unexpected error: ${message}\n`);
    if (io.env.PAYOUT_BATCH_DEBUG && err instanceof Error) io.stderr.write(`${err.stack}\n`);
    return ExitCode.UNUSABLE_INPUT;
  }
}

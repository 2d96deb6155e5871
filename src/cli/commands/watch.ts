// `payout-batch watch DIR`: unattended runs of the files dropped into DIR/inbox (src/watch/).
import { attempt } from '../../files/attempt.ts';
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import {
  abortOn,
  CommandError,
  defineCommand,
  flag,
  plural,
  printJson,
  saidFailed,
  saying,
  str,
  UsageError,
  type CliIO,
} from '../command.ts';
import { ExitCode, exitCodeOf } from '../exit-codes.ts';
import { LockBusy } from '../../files/lock.ts';
import { addUp } from '../../signals/signals.ts';
import { readWatchConfig, WatchConfigError, CONFIG_FILE, type WatchConfig } from '../../watch/config.ts';
import { layout } from '../../watch/inbox.ts';
import { watchFolder, type WatchResult } from '../../watch/watcher.ts';
import { connectionOptions, makeLogger, openConnection, signalled } from '../options.ts';

const builder = (y: Argv) =>
  connectionOptions(y)
    .positional('dir', { ...str(`The watch folder (holds ${CONFIG_FILE}, inbox/, processing/, done/, failed/)`), demandOption: true })
    .option('once', flag('Process what is there, then exit with a code cron can act on'))
    .option('json', flag('Print a machine-readable summary on stdout at the end'))
    .option('verbose', flag('Also say when there was nothing to process'))
    .option('quiet', { ...flag('Print only the files that need attention (failed, or left in processing/), not those done'), alias: 'q' });

const command = defineCommand(builder, async (args, io: CliIO) => {
  const dir = resolve(io.cwd, args.dir);
  const config = saying(() => readWatchConfig(dir), WatchConfigError);
  if (args.env && args.env !== config.environment) {
    throw new UsageError(`--env ${args.env} but ${CONFIG_FILE} says "environment": "${config.environment}"`);
  }
  if (config.environment === 'production' && args.env !== 'production') {
    throw new CommandError(
      `${CONFIG_FILE} names production: name it on the command line too (--env production) to pay for real`,
      ExitCode.REFUSED,
    );
  }
  const logger = makeLogger(args, io, 'watch').child({ watchDir: dir });
  // one connection for every file and tick: the key's pace is kept by one limiter
  const flags = {
    ...args,
    env: config.environment,
    'base-url': args['base-url'] ?? config.baseUrl,
    ledger: args.ledger ?? config.ledger,
    'gateway-host': args['gateway-host'] ?? config.gatewayHost,
    'key-file': args['key-file'] ?? (config.keyFile ? resolve(dir, config.keyFile) : undefined),
    rate: args.rate ?? config.rate,
  };
  const conn = await openConnection(flags, io, logger, { stateRoot: layout(dir, config).state });
  if (!args.once && !args.json) io.stderr.write(startLine(dir, config));
  try {
    const noteOf = (r: WatchResult) => ({
      conn,
      ...addUp(r.files.flatMap((f) => f.summary ?? [])),
      reasons: r.files.filter((f) => f.outcome !== 'done').map((f) => `${f.name}: ${f.outcome}: ${f.reason}`),
    });
    const r = await watchFolder({
      dir,
      config,
      conn,
      once: args.once,
      envFlag: args.env,
      logger,
      stop: abortOn(io.stopSignal),
      onTick: async (t) => (t ? io.tick?.end(exitCodeOf(t), noteOf(t)) : io.tick?.start()),
      onFile: (f) => {
        // -q: a cron job run with it mails only when a file needs someone.
        if (args.json || (args.quiet && f.outcome === 'done')) return;
        io.stdout.write(`${f.name}: ${f.outcome}${f.resumed ? ' (resumed)' : ''}${f.reason ? `: ${f.reason}` : ''}\n`);
      },
    });
    const files = r.files.map((f) => ({ ...f, summary: undefined, exitCode: exitCodeOf(f) }));
    io.note?.(noteOf(r));
    if (args.json) printJson(io, { exitCode: exitCodeOf(r), files, notComplete: r.notComplete });
    // cron mails whatever a job prints: an empty tick prints nothing unless asked
    else if (!r.files.length && args.verbose && !args.quiet)
      io.stdout.write(`Nothing to process${r.notComplete.length ? ` (${plural(r.notComplete.length, 'file')} not complete yet)` : ''}.\n`);
    return exitCodeOf(r);
  } catch (e) {
    if (e instanceof WatchConfigError) throw new CommandError(e.message, ExitCode.REFUSED);
    if (e instanceof LockBusy) return saidFailed(io, args.json, e.message, ExitCode.SERVICE_UNAVAILABLE);
    throw e;
  } finally {
    await conn.close().catch(() => undefined);
  }
});
function startLine(dir: string, c: WatchConfig): string {
  const taken = c.requireReady ? 'once its .ready marker is there' : `once unchanged for ${c.settleSeconds} s (or marked .ready)`;
  const gates = [
    c.requireApprovals && `with ${plural(c.requireApprovals, 'approval')}`,
    c.sanctionsLists.length && 'after screening',
    c.allowPartial ? 'its valid rows' : 'whole or not at all',
  ].filter(Boolean);
  return (
    `Watching ${layout(dir, c).inbox} every ${c.pollSeconds} s (${c.environment}): a file is taken ${taken}, ` +
    `paid ${gates.join(', ')}, then moved to done/ or failed/ with its results.\n` +
    `Ctrl-C stops; a file under way is resumed on the next start.\n`
  );
}

/** The signals' targets: the flags, else the configuration's keys. */
export default signalled('watch', command, (args, io) => {
  const dir = resolve(io.cwd, args.dir ?? '.');
  const c = attempt(() => readWatchConfig(dir));
  const file = args['metrics-file'] ?? (c?.metricsFile && resolve(dir, c.metricsFile));
  return { pingUrl: args['ping-url'] ?? c?.pingUrl, metricsFile: file, notifyUrl: args['notify-url'] ?? c?.notifyUrl };
});

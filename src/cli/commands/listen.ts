// `payout-batch listen`: the webhook receiver (follow-up/webhook-receiver.ts) until Ctrl-C.
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { CommandError, defineCommand, saying, serviceAnswer, str, strs, UsageError, type CliIO } from '../command.ts';
import { ExitCode } from '../exit-codes.ts';
import { PayoutApiError } from '../../client/errors.ts';
import { defaultStateDir } from '../../client/quota.ts';
import { registerSubscription, startListener } from '../../follow-up/webhook-receiver.ts';
import { LockBusy } from '../../files/lock.ts';
import { connectionOptions, makeLogger, openConnection, openTeamLedger, refuseUnsafeStateFolder, wholeNumber } from '../options.ts';
import type { PgLedgers } from '../../ledger/postgres.ts';
import { readBytes } from '../../approvals/payload.ts';
import { attempt } from '../../files/attempt.ts';
import { readWatchConfig, WatchConfigError, type WatchConfig } from '../../watch/config.ts';
import { layout } from '../../watch/inbox.ts';
import { redactUrl } from '../../ledger/open.ts';
import { ResultsError, streamResults } from '../../results/results.ts';
import { maskUrl, namesNoFile } from '../../mask.ts';

function readSecretFile(path: string, warn: (m: string) => void): string {
  // (a name that is no file may be the secret itself, given where its file's path goes: never quoted)
  const unread = (why: string) =>
    namesNoFile(why)
      ? `--secret-file names no file (${why}): give the file that holds the webhook secret, not the secret`
      : `--secret-file ${path}: cannot read it (${why})`;
  const text = readBytes(path, (why) => new UsageError(unread(why))).toString('utf8');
  if (attempt(() => statSync(path).mode & 0o077)) warn(`${path} can be read by other users: chmod 600 it`);
  const secret = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .find((l) => l && !l.startsWith('#'));
  if (!secret) throw new UsageError(`--secret-file ${path}: the file holds no secret`);
  return secret;
}

/** The team ledger the watches' runs journal in, as `watch` chooses it: --ledger, the configuration's, $PAYOUT_BATCH_LEDGER_URL. */
function watchLedger(configs: WatchConfig[], flag: string | undefined, io: CliIO): string | undefined {
  const named = [...new Set(configs.flatMap((c) => flag ?? c.ledger ?? io.env.PAYOUT_BATCH_LEDGER_URL ?? []).map(redactUrl))];
  if (named.length > 1)
    throw new UsageError(`the watch folders' runs are in two team ledgers (${named.join(', ')}): run a listener for each`);
  return flag ?? named[0]; // (without its password: openTeamLedger takes the variable's for its ledger)
}

const builder = (y: Argv) =>
  connectionOptions(y)
    .option('port', { type: 'number', demandOption: true, describe: 'Port to listen on (0: any free one, printed)' })
    .option('host', { type: 'string', default: '127.0.0.1', describe: 'Address to listen on (put a TLS proxy in front for the service)' })
    .option('secret-file', { ...str('File holding the webhook secret given at registration'), demandOption: true })
    .option('register', str("Create or update the business's one subscription to this URL, with the secret"))
    .option('results', strs('A results file to keep up to date (repeatable)'))
    .option('watch-dir', strs('A watch folder: its done/, failed/ and processing/ results (repeatable)'))
    .option('state-dir', str('Inbox journal and delivery ids (default: <watch-dir>/.state/listen, else $PAYOUT_BATCH_STATE_DIR/listen)'));

export default defineCommand(builder, async (args, io: CliIO) => {
  const logger = makeLogger(args, io, 'listen');
  const secret = readSecretFile(resolve(io.cwd, args['secret-file']), (m) => logger.warn(m));
  wholeNumber(args.port, '--port must be a port number (0 to 65535)', 0, 65535);
  const watchDirs = (args['watch-dir'] ?? []).map((d) => resolve(io.cwd, String(d)));
  const configs = watchDirs.map((d) => saying(() => readWatchConfig(d), WatchConfigError));
  const results = (args.results ?? []).map((f) => resolve(io.cwd, String(f)));
  // (one there is read up to its first row: a batch file, or one broken, said now, not at the first delivery; one not yet written may come)
  const firstRow = async (f: string) => {
    for await (const _row of (await streamResults(f)).rows) return;
  };
  for (const f of results) if (existsSync(f)) await saying(() => firstRow(f), ResultsError);
  if (!watchDirs.length && !results.length)
    logger.warn('no --results or --watch-dir: deliveries are verified and recorded, but applied to no file');
  const stateDir = args['state-dir']
    ? resolve(io.cwd, args['state-dir'])
    : watchDirs[0]
      ? join(watchDirs[0], '.state', 'listen')
      : join(defaultStateDir(io.env), 'listen');
  // (its inbox's deliveries are applied on a start without their signature checked again)
  refuseUnsafeStateFolder(stateDir);
  let listener;
  let team: PgLedgers | undefined;
  try {
    team = await openTeamLedger({ ...args, ledger: watchLedger(configs, args.ledger, io) }, io, logger);
    listener = await startListener({
      port: args.port,
      host: args.host,
      secret,
      stateDir,
      // the journals that record what is applied: the per-user state folder's, --state-dir's, a team ledger's
      stateRoots: [defaultStateDir(io.env), ...(args['state-dir'] ? [stateDir] : [])],
      results,
      watchDirs: watchDirs.map((dir, i) => ({ dir, state: layout(dir, configs[i]!).state })),
      logger,
      shared: team,
    });
  } catch (e) {
    await team?.close();
    if (e instanceof LockBusy) throw new CommandError(`another listener uses ${stateDir}: ${e.message}`);
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES') throw new CommandError(`cannot listen on ${args.host}:${args.port} (${code})`);
    throw e;
  }
  io.stdout.write(`Listening on ${listener.url} (inbox ${join(stateDir, 'inbox.jsonl')}).\n`);
  try {
    if (args.register) {
      // its requests counted in the listener's ledger, the team's quota and pace; left open when the connection closes
      const shared = team && Object.assign(Object.create(team) as PgLedgers, { close: async () => {} });
      const conn = await openConnection(args, io, logger, { shared });
      try {
        const r = await registerSubscription(conn.client, args.register, secret);
        // (its password or query may be the token that lets the service in: never printed)
        io.stdout.write(`Subscription ${r.action}: ${maskUrl(r.url)} (id ${r.id}).\n`);
        logger.info({ subscription: r.id, url: maskUrl(r.url), action: r.action }, 'webhook subscription');
      } catch (e) {
        if (e instanceof PayoutApiError) {
          io.stderr.write(`payout-batch: registering the webhook failed: ${serviceAnswer(e)}\n`);
          // a definitive answer is ours to fix (2), not the service's trouble (4)
          return e.outcome === 'definitive' && e.status !== undefined && !e.serviceTrouble
            ? ExitCode.UNUSABLE_INPUT
            : ExitCode.SERVICE_UNAVAILABLE;
        }
        throw e;
      } finally {
        await conn.close().catch(() => undefined);
      }
    }
    // a team ledger lost is never reconnected, nor listen.lock retaken: stopped, what is restarted applies the deliveries kept (exit 4)
    let lockLost = false;
    const lockGone = listener.lockLost.then(() => void (lockLost = true));
    await Promise.race([io.stopSignal, lockGone, new Promise((lost) => (team?.db.lost ? lost(0) : team?.db.onLost(lost)))]);
    return team?.db.lost || lockLost ? ExitCode.SERVICE_UNAVAILABLE : ExitCode.OK;
  } finally {
    await listener.close();
    await team?.close();
    const s = listener.stats();
    io.stdout.write(`Stopped: ${s.accepted} accepted, ${s.duplicates} replays dropped, ${s.rejected} refused, ${s.applied} applied.\n`);
  }
});

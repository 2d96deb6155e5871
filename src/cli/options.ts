// The flags several commands share, and the connection, logger and state folder they give (README.md).
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Argv } from 'yargs';
import type { DestinationStream, Logger } from 'pino';
import { createLogger, LOG_FORMATS, LOG_LEVELS, type LogFormat } from '../log.ts';
import { maskUrl } from '../mask.ts';
import {
  API_KEY_REFUSED,
  CommandError,
  flag,
  num,
  parseShapes,
  saidFailed,
  SHAPES_VARIABLE,
  str,
  strs,
  UsageError,
  type ArgsOf,
  type CliCommand,
  type CliIO,
} from './command.ts';
import { ExitCode } from './exit-codes.ts';
import { environmentText, handleEngineError } from './render.ts';
import { PayoutApiError } from '../client/errors.ts';
import { parsePlanFile } from '../engine/plan-file.ts';
import { ClientConfigError } from '../client/api-key.ts';
import { LEDGER_TIMEOUT_S, redactUrl, TeamDb, TeamLedgerError } from '../ledger/pg-db.ts';
import { PgLedgers } from '../ledger/postgres.ts';
import { resultsHere } from '../engine/retry-batch.ts';
import { accountOf, type Ledger } from '../ledger/account-ledger.ts';
import { ledgerOf } from '../ledger/open.ts';
import { unsafeStateFolder } from '../ledger/file.ts';
import { connect, sandboxSeedKey, type Connection, type SharedStore } from '../client/connect.ts';
import { ENVIRONMENTS, resolveEnvironment, type EnvironmentOptions } from '../client/environment.ts';
import { defaultStateDir } from '../client/quota.ts';
import type { ClientEvent } from '../client/http.ts';
import { parseMoneyFlag, type MoneyFlag } from '../engine/guards.ts';
import type { DuplicateOptions } from '../engine/prepare.ts';
import { durationMs } from '../text.ts';
import { screeningFor } from '../approvals/clearance.ts';
import { Dec, isCurrencyCode, type Dec as DecT } from '../money.ts';
import { ResultsError } from '../results/results-errors.ts';
import { writeStatusReport } from '../results/status-report.ts';
import { PAIN002_VERSIONS } from '../spec/iso20022.ts';
import { insecureSignalUrl, signalsFor, type Outcome, type SignalTargets } from '../signals/signals.ts';

import { attempt } from '../files/attempt.ts';

export const STATE_DIR_HELP =
  'State folder holding the ledger of each service account (default $PAYOUT_BATCH_STATE_DIR, else ~/.local/state/payout-batch)';

/** Which service and ledger, and the logs: `ledger` takes these alone. */
export function serviceOptions<T>(y: Argv<T>) {
  return y
    .option('env', {
      type: 'string',
      choices: ENVIRONMENTS,
      describe: 'local (the embedded sandbox), sandbox or production (default $PAYOUT_ENV, else sandbox); production must be named here',
    })
    .option('base-url', str('Talk to this server instead ($PAYOUT_BASE_URL)'))
    .option('ledger', str('Team ledger, postgres://user@host/db ($PAYOUT_BATCH_LEDGER_URL; password from PGPASSWORD or ~/.pgpass)'))
    .option('gateway-host', str('Production gateway host, e.g. gateway.example.com ($PAYOUT_GATEWAY_HOST)'))
    .option('log-level', str('Log level on stderr ($PAYOUT_BATCH_LOG_LEVEL; default info when not a terminal)'))
    .option('log-format', {
      choices: LOG_FORMATS,
      describe: 'Logs as JSON lines or human lines (default human on a terminal, else json)',
    });
}

export function connectionOptions<T>(y: Argv<T>) {
  return (
    serviceOptions(y)
      .option('key-file', str('Read the API key from this file ($PAYOUT_API_KEY_FILE); else $PAYOUT_API_KEY'))
      .option('rate', num("Advanced: request starts a second for the key (default $PAYOUT_BATCH_RATE, else the spec's 5)"))
      .option('safety-margin', num('Advanced: ms added to the rolling second against jitter (default 50; 25 on 127.0.0.1)'))
      // Present only to refuse it without echoing its value: a key on the command line shows in `ps`.
      .option('api-key', { hidden: true })
  );
}
export type ConnectionArgs = Partial<ArgsOf<typeof connectionOptions>>;

type EnvironmentFlags = { env?: string; 'base-url'?: string };

/**
 * `run --plan`: the run talks to the plan's service whatever $PAYOUT_ENV or $PAYOUT_BASE_URL say; a
 * flag naming another is refused (exit 3): a plan is approved for one account. A `local` plan's base
 * URL names no account (its port changes). Production must still be named on the command line.
 */
export function withPlanEnvironment<A extends EnvironmentFlags & { plan?: string }>(args: A, io: CliIO): [A, CliIO] {
  const path = args.plan && resolve(io.cwd, args.plan);
  // (a plan that cannot be read: the engine says why, exit 2)
  const plan = path ? attempt(() => parsePlanFile(readFileSync(path, 'utf8'), path)) : undefined;
  if (!plan) return [args, io];
  const planUrl = plan.env === 'local' ? undefined : plan.baseUrl;
  const refuse = (given: string) =>
    new CommandError(
      `${given}, but the plan was made for ${environmentText(plan.env, planUrl)}: ` +
        'run it without the flag, or make a plan for that service (payout-batch plan FILE --out PLAN). Nothing was sent',
      ExitCode.REFUSED,
    );
  const planEnv = plan.env === 'custom' ? undefined : plan.env;
  if (args.env !== undefined && args.env !== planEnv) throw refuse(`--env ${args.env}`);
  if (planEnv === 'production' && args.env === undefined)
    throw new CommandError(
      'the plan pays in production: name it on the command line (--env production). Nothing was sent',
      ExitCode.REFUSED,
    );
  const given = args['base-url'];
  if (given !== undefined && (!planUrl || !attempt(() => accountOf(given) === accountOf(planUrl))))
    throw refuse(`--base-url ${maskUrl(given)}`);
  return [
    { ...args, env: planEnv, 'base-url': planUrl },
    { ...io, env: { ...io.env, PAYOUT_ENV: undefined, PAYOUT_BASE_URL: undefined } },
  ];
}

/** The connection flags given, to repeat in a command printed (`status RESULTS`, `retry`), so it works as printed. */
export function connectionHint(args: EnvironmentFlags): string {
  const url = args['base-url'];
  return `${args.env ? ` --env ${args.env}` : ''}${url ? ` --base-url ${url}` : ''}`;
}

/** status and reconcile: the connection, the results file, the state folders of its journal. */
export const resultsFileOptions = (y: Argv, describe: string, stateDirs: string) =>
  connectionOptions(y)
    .positional('results', { type: 'string', demandOption: true, describe })
    .option('state-dir', strs(`${stateDirs} (default: the per-user one)`));

/** The ledgers of --state-dir (status, reconcile, attach) and of the per-user state folder. */
export function stateLedgers(args: { 'state-dir'?: (string | number)[] }, io: CliIO, conn: Connection) {
  const stateDirs = (args['state-dir'] ?? []).map((d) => resolve(io.cwd, String(d)));
  stateDirs.forEach(refuseUnsafeStateFolder);
  return { stateDirs, ledgers: [...stateDirs, defaultStateDir(io.env)].map((root) => ledgerOf(conn, { root })) };
}

export async function resultsAndLedgers(args: { results: string; 'state-dir'?: (string | number)[] }, io: CliIO, conn: Connection) {
  const { stateDirs, ledgers } = stateLedgers(args, io, conn);
  return { stateDirs, ledgers, results: (await resultsNamed(ledgers, args.results, io)) ?? resolve(io.cwd, args.results) };
}

/** The results file of a batch named by its id (engine/retry-batch.ts resultsHere); undefined for a file name. */
export async function resultsNamed(ledgers: Ledger[], arg: string, io: CliIO): Promise<string | undefined> {
  const r = await resultsHere(ledgers, arg, io.cwd);
  const how = { copy: "a copy of the run's results file", ledger: "rebuilt from the ledger: the run's results file is not on this host" };
  if (r?.made) io.stderr.write(`payout-batch: batch ${arg}: working on ${r.path}, ${how[r.made]}\n`);
  return r?.path;
}

/** plan, run and retry: the connection, the state folder, screening, duplicates, the report, what a batch may leave out. */
export function planningOptions<T>(y: Argv<T>) {
  return screeningOptions(reportOption(connectionOptions(y)))
    .option('allow-duplicate', strs('Send the row of this reference though it repeats a recent payout of another (repeatable)'))
    .option('duplicate-window', { ...str('Refuse a row repeating a payout to its payee this recent (30m, 24h, 7d)'), default: '24h' })
    .option('state-dir', str(STATE_DIR_HELP))
    .option('allow-partial', flag('Pay (plan) the rows that fit when a wallet falls short or a corridor is not enabled'))
    .option('enable-pairs', flag('Enable the currency pairs of corridors that are not enabled'))
    .option('max-requests', num("Refuse the batch (exit 3) when it needs more than N requests of the key's month"))
    .option('merge-documents', flag("Merge a row's documents into one PDF before upload"))
    .option('json', flag('Print one JSON document on stdout (money as decimal strings)'));
}

/** run and retry: the planning options, the confirmation, the control totals and how rows are sent. */
export function sendOptions<T>(y: Argv<T>) {
  return statusReportOptions(planningOptions(y))
    .option('yes', { ...flag('Unattended: no confirmation (combine with control totals)'), alias: 'y' })
    .option('expect-rows', num('Control total: the number of rows the batch pays, or nothing is sent'))
    .option('expect-total', strs('Control total CUR:AMOUNT before fees, repeatable: must match or nothing is sent (others are reported)'))
    .option('strict-totals', flag('--expect-total must name every currency the batch pays, or nothing is sent'))
    .option('max-total', strs('Cap CUR:AMOUNT on amounts plus estimated fees, repeatable'))
    .option('concurrency', num('Rows in flight at once (default max(8, --rate), at most 64; the client throttles requests)'))
    .option('quiet', { ...flag('No plan, progress or summary: only errors (stderr), --json and the results file'), alias: 'q' });
}

/** A number flag that counts (undefined when not given); else a usage error, before any request. */
export function wholeNumber(n: number | undefined, what: string, min = 0, max = Infinity): number | undefined {
  if (n !== undefined && !(Number.isInteger(n) && n >= min && n <= max)) throw new UsageError(what);
  return n;
}

/** run --results, retry --out: a folder that is not there would be found only once the payouts went (exit 4). */
export function outputFolderChecked(flag: string, path: string | undefined, io: CliIO): void {
  const dir = path && dirname(resolve(io.cwd, path));
  if (dir && !existsSync(dir)) throw new UsageError(`${flag} ${path}: the folder ${dir} does not exist; make it or name another`);
}

/** planningOptions' flags as the engine names them, --max-requests checked. */
export function planningFlags(args: ArgsOf<typeof planningOptions>) {
  const maxRequests = wholeNumber(args['max-requests'], '--max-requests takes a whole number of requests');
  return { allowPartial: args['allow-partial'], enablePairs: args['enable-pairs'], maxRequests };
}

/** screen, plan, run, retry (engine/screen-batch.ts). */
export function screeningOptions<T>(y: Argv<T>) {
  return y
    .option('sanctions-list', strs('Screen payees first against this list, repeatable: OFAC sdn.csv, UN XML, OpenSanctions or names CSV'))
    .option('clearances-dir', { ...str('The folder of approved clearances of false positives (`screen --clear`)'), default: 'clearances' });
}

export function screeningOf(
  args: ArgsOf<typeof screeningOptions> & { approvers?: string },
  io: CliIO,
  policy?: Parameters<typeof screeningFor>[2],
) {
  const approvers = args.approvers ?? io.env.PAYOUT_BATCH_APPROVERS;
  return screeningFor(io.cwd, { lists: args['sanctions-list'] ?? [], clearances: args['clearances-dir'], approvers }, policy);
}

/** A job nobody watches (src/signals): run, retry, status and watch. */
function signalOptions<T>(y: Argv<T>) {
  return y
    .option('ping-url', str("Dead man's switch: POST URL/start at start, URL on success, URL/<exit code> on failure"))
    .option('metrics-file', str("Write the run's metrics to this file (Prometheus text, for node_exporter's textfile collector)"))
    .option('notify-url', str('POST a JSON alert (its `text` for a chat) here when the command fails or needs someone'));
}

/** A command run between its signals (src/signals): the end ones say what it noted (io.note) and its exit code, also on a throw. */
export function signalled<A>(command: string, c: CliCommand<A>, targetsOf?: (args: SignalArgs, io: CliIO) => SignalTargets): CliCommand<A> {
  return {
    builder: (y) => signalOptions(c.builder(y)),
    run: async (parsed, io) => {
      const args = parsed as SignalArgs;
      const targets = targetsOf?.(args, io) ?? {
        pingUrl: args['ping-url'],
        metricsFile: args['metrics-file'],
        notifyUrl: args['notify-url'],
      };
      // (before any run or ping: a URL's credentials never cross the network in clear)
      for (const key of ['pingUrl', 'notifyUrl'] as const) {
        const flag = key === 'pingUrl' ? 'ping-url' : 'notify-url';
        const named = args[flag] !== undefined ? `--${flag}` : `${key} of the watch configuration (payout-batch.json)`;
        const why = targets[key] && insecureSignalUrl(targets[key]);
        if (why) throw new CommandError(`${named} ${why}`);
      }
      if (!targets.pingUrl && !targets.metricsFile && !targets.notifyUrl) return c.run(parsed, io);
      const metricsFile = targets.metricsFile && resolve(io.cwd, targets.metricsFile);
      const signals = signalsFor({ ...targets, metricsFile }, command, makeLogger(args, io, command));
      let noted: Partial<Outcome> = { subject: args.file ?? args.results ?? args.dir };
      const end = (exitCode: ExitCode, o: Partial<Outcome> = {}) =>
        signals.end({ ...noted, ...o, exitCode, failed: exitCode !== ExitCode.OK && exitCode !== ExitCode.NOT_FINISHED });
      await signals.start();
      try {
        const code = await c.run(parsed, { ...io, tick: { start: () => signals.start(), end }, note: (o) => (noted = { ...noted, ...o }) });
        await end(code);
        return code;
      } catch (e) {
        noted.reasons ??= [(e as Error).message];
        await end(e instanceof UsageError ? e.exitCode : ExitCode.UNUSABLE_INPUT);
        throw e;
      }
    },
  };
}
type SignalArgs = ArgsOf<typeof signalOptions> & Parameters<typeof makeLogger>[0] & { file?: string; results?: string; dir?: string };

export function reportOption<T>(y: Argv<T>) {
  return y.option('report', { type: 'boolean', default: true, describe: 'Write the HTML report beside the output (--no-report: skip it)' });
}

export function statusReportOptions<T>(y: Argv<T>) {
  return y
    .option('status-report', str('Also write the ISO 20022 pain.002 status report of the results to FILE, for the ERP that sent the batch'))
    .option('status-report-version', { choices: PAIN002_VERSIONS, describe: "Its version (default: the input's family, .03 or .10)" });
}

/** The --status-report of `results`: its path and version, or undefined (a failure said on stderr). */
export async function statusReportOf(
  args: ArgsOf<typeof statusReportOptions>,
  io: CliIO,
  results: string,
  batchId?: () => Promise<string | undefined>,
): Promise<{ path: string; version: string } | undefined> {
  const out = args['status-report'];
  if (!out) return undefined;
  const path = resolve(io.cwd, out);
  return reportOrNote(
    io,
    async () => ({
      path,
      version: await writeStatusReport(results, path, { version: args['status-report-version'], batchId: await batchId?.() }),
    }),
    'the status report',
  );
}

/** A status report written, as the text and the --json document name it (the path alone, the version apart). */
export const statusReportText = (r: { path: string; version: string }) => `${r.path} (${r.version})`;
export const statusReportJson = (r: { path: string; version: string } | undefined) =>
  r ? { statusReport: r.path, statusReportVersion: r.version } : {};

export const controlTotalFlags = (args: ArgsOf<typeof sendOptions>) => ({
  expectRows: wholeNumber(args['expect-rows'], '--expect-rows takes a whole number of rows'),
  expectTotals: moneyFlags(args['expect-total'], '--expect-total'),
  maxTotals: moneyFlags(args['max-total'], '--max-total'),
  strictTotals: args['strict-totals'],
});

/** engine/duplicates.ts: plan, run, retry. */
export function duplicateFlags(args: Pick<ArgsOf<typeof planningOptions>, 'allow-duplicate' | 'duplicate-window'>): DuplicateOptions {
  const text = args['duplicate-window'];
  const duplicateWindowMs = durationMs(text);
  if (duplicateWindowMs === undefined)
    throw new UsageError(`--duplicate-window takes minutes, hours or days: 30m, 24h, 7d (got "${text}")`);
  return { allowDuplicates: args['allow-duplicate'] ?? [], duplicateWindowMs };
}

export function moneyFlags(values: (string | number)[] | undefined, flag: string): MoneyFlag[] {
  try {
    return (values ?? []).map((v) => parseMoneyFlag(String(v), flag));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** The swap that funds a short wallet (spec §4.7): `plan` proposes it, `run` sends it (engine/REFERENCE.md "Funding by a swap"). */
export function swapOptions<T>(y: Argv<T>) {
  return y
    .option('swap-from', str('Fund a short wallet by a swap from this currency (default: one with an enabled pair, most to spare)'))
    .option('max-swap', strs('Refuse (exit 3) a swap crediting more than CUR:AMOUNT to that wallet, repeatable'));
}

export function swapFlags(args: { 'swap-from'?: string; 'max-swap'?: (string | number)[] }): { swapFrom?: string; maxSwaps: MoneyFlag[] } {
  const from = args['swap-from']?.trim().toUpperCase();
  if (from !== undefined && !isCurrencyCode(from)) throw new UsageError(`--swap-from ${args['swap-from']}: name a currency, e.g. EUR`);
  return { ...(from !== undefined ? { swapFrom: from } : {}), maxSwaps: moneyFlags(args['max-swap'], '--max-swap') };
}

/** --swap-rate-tolerance PCT ("1", "0.5%") as a fraction (0.01); default 1%. */
export function swapRateTolerance(text: string | number | undefined): DecT {
  if (text === undefined) return new Dec('0.01');
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*%?\s*$/.exec(String(text));
  if (!m || new Dec(m[1]!).greaterThan(100))
    throw new UsageError(`--swap-rate-tolerance ${text}: a percentage from 0 to 100, e.g. 1 or 0.5%`);
  return new Dec(m[1]!).dividedBy(100);
}

/** The service the connection flags name (none: the embedded sandbox); no request. */
export const serviceOf = (args: ConnectionArgs, io: CliIO): string | undefined =>
  resolveEnvironment({ env: args.env, baseUrl: args['base-url'], gatewayHost: args['gateway-host'], vars: io.env }).baseUrl;

export function isInteractive(io: CliIO): boolean {
  return !!io.stdin.isTTY && !!io.stderr.isTTY;
}

/** Logs on stderr: warn on a terminal or under --quiet, else info; human lines on a terminal, else JSON. */
export function makeLogger(args: { 'log-level'?: string; 'log-format'?: LogFormat; quiet?: boolean }, io: CliIO, command: string): Logger {
  const level = args['log-level'] ?? io.env.PAYOUT_BATCH_LOG_LEVEL ?? (io.stderr.isTTY || args.quiet ? 'warn' : 'info');
  if (!LOG_LEVELS.includes(level))
    throw new UsageError(
      `${args['log-level'] !== undefined ? '--log-level' : '$PAYOUT_BATCH_LOG_LEVEL'} ${level}: one of ${LOG_LEVELS.join(', ')}`,
    );
  const format = args['log-format'] ?? (io.stderr.isTTY ? 'human' : 'json');
  // io.stderr, not process.stderr: a test that runs main() with its own streams gets them too.
  return createLogger({ level, format, bindings: { command }, destination: io.stderr as unknown as DestinationStream });
}

/** --state-dir, else the per-user one ($PAYOUT_BATCH_STATE_DIR, $XDG_STATE_HOME/payout-batch, ~/.local/state/payout-batch). */
export function stateRootOf(args: { 'state-dir'?: string }, io: CliIO): string {
  return args['state-dir'] ? resolve(io.cwd, args['state-dir']) : defaultStateDir(io.env);
}

/** A state folder that is a file (exit 2), or another user could change (exit 3): refused alike by every command. */
export function refuseUnsafeStateFolder(root: string): void {
  if (statSync(root, { throwIfNoEntry: false })?.isDirectory() === false)
    throw new CommandError(`the state folder ${root} is a file: name a folder with --state-dir or $PAYOUT_BATCH_STATE_DIR`);
  const why = unsafeStateFolder(root);
  if (why) throw new CommandError(`refused: ${why}. Nothing was sent`, ExitCode.REFUSED);
}

/** Where a connection keeps its state (default: the per-user folder), who hears its requests, the team ledger opened already. */
type ConnectionUse = { stateRoot?: string; onEvent?: (e: ClientEvent) => void; shared?: SharedStore };

/** The connection options checked, then connect(); a configuration error exits 2 (3 when refused). */
export async function openConnection(args: ConnectionArgs, io: CliIO, logger: Logger, o: ConnectionUse = {}): Promise<Connection> {
  const { stateRoot = defaultStateDir(io.env), onEvent } = o;
  if (args['api-key'] !== undefined) throw new UsageError(API_KEY_REFUSED);
  const envRate = io.env.PAYOUT_BATCH_RATE?.trim();
  const rate = args.rate ?? (envRate ? Number(envRate) : undefined);
  if (rate !== undefined && !(rate > 0 && rate <= 1000))
    throw new UsageError(`${args.rate === undefined ? '$PAYOUT_BATCH_RATE' : '--rate'} must be a number of requests per second above 0`);
  const margin = args['safety-margin'];
  if (margin !== undefined && !(margin >= 0 && margin <= 5000))
    throw new UsageError('--safety-margin must be a number of milliseconds from 0 to 5000');
  refuseUnsafeStateFolder(stateRoot);
  // checked whatever the environment: a mistyped value is reported now, not the day it runs locally
  const shapes = parseShapes(io.env[SHAPES_VARIABLE], SHAPES_VARIABLE);
  const environment: EnvironmentOptions = { env: args.env, baseUrl: args['base-url'], gatewayHost: args['gateway-host'], vars: io.env };
  try {
    // No address (local): the embedded sandbox, its first seed key used when none is configured. A
    // literal dynamic import, so esbuild makes the simulator a chunk loaded only by --env local.
    const local = resolveEnvironment(environment).baseUrl === undefined;
    const sandbox = local
      ? await (await import('./local-sandbox.ts')).startLocalSandbox(stateRoot, { shapes, rate, vars: io.env })
      : undefined;
    // (connect closes the sandbox when it fails; a ledger that does not open would leave it serving, and the process running)
    const team =
      o.shared ??
      (await openTeamLedger(args, io, logger).catch(async (e: unknown) => {
        await sandbox?.close();
        throw e;
      }));
    return await connect({
      ...environment,
      ...(team ? { shared: team } : {}),
      keyFile: args['key-file'],
      cwd: io.cwd,
      stateDir: keyStateDir(stateRoot, io.env),
      logger,
      sandbox,
      fallbackKey: sandbox && sandboxSeedKey(sandbox.keys[0]!.key),
      client: {
        ...(rate ? { requestsPerSecond: rate } : {}),
        ...(margin !== undefined ? { safetyMarginMs: margin } : {}),
        concurrency: inFlightFor(rate),
        ...(onEvent ? { onEvent } : {}),
      },
    });
  } catch (e) {
    if (e instanceof ClientConfigError)
      throw new CommandError(e.message, e.reason === 'refused' ? ExitCode.REFUSED : ExitCode.UNUSABLE_INPUT);
    throw e;
  }
}

/** The key's pace and month: the per-user folder, whatever folder holds the ledger (a watch's, --state-dir); the ledger's when this user has none to write. */
function keyStateDir(stateRoot: string, env: NodeJS.ProcessEnv): string {
  const perUser = defaultStateDir(env);
  if (unsafeStateFolder(perUser)) return stateRoot;
  return attempt(() => (mkdirSync(perUser, { recursive: true, mode: 0o700 }), perUser)) ?? stateRoot;
}

/** The team ledger of --ledger or $PAYOUT_BATCH_LEDGER_URL: unreachable exits 4, not initialised 2 (`init` opens it as it is). */
export async function openTeamLedger(
  args: ConnectionArgs,
  io: CliIO,
  logger: Logger,
  o: { init?: boolean } = {},
): Promise<PgLedgers | undefined> {
  const env = io.env.PAYOUT_BATCH_LEDGER_URL;
  // (the variable's, password and all, also for a --ledger naming its ledger: as a printed `retry --ledger URL` does)
  const url = env && (!args.ledger || redactUrl(args.ledger) === redactUrl(env)) ? env : args.ledger;
  if (!url) return undefined;
  const seconds = io.env.PAYOUT_BATCH_LEDGER_TIMEOUT || undefined;
  const timeout = seconds === undefined ? undefined : Number(seconds);
  if (timeout !== undefined && !(timeout > 0))
    throw new UsageError(`$PAYOUT_BATCH_LEDGER_TIMEOUT ${seconds}: a number of seconds above 0 (default ${LEDGER_TIMEOUT_S})`);
  try {
    const command = String((args as { _?: (string | number)[] })._?.[0] ?? '');
    return new PgLedgers(await TeamDb.open(url, { ...o, command, timeout, onLost: (e) => logger.error(e.message) }));
  } catch (e) {
    if (!(e instanceof TeamLedgerError)) throw e;
    const unreachable = e.code === 'LEDGER_UNREACHABLE' || e.code === 'LEDGER_LOST';
    throw new CommandError(e.message, unreachable ? ExitCode.SERVICE_UNAVAILABLE : ExitCode.UNUSABLE_INPUT);
  }
}

/** A connection for the time of `use`, closed after it; the engine's errors and a failed request said, as an exit code. */
export async function withConnection(
  args: ConnectionArgs & Parameters<typeof makeLogger>[0],
  io: CliIO,
  command: string,
  use: (conn: Connection, logger: Logger) => Promise<ExitCode>,
  o: ConnectionUse & { logger?: Logger } = {},
): Promise<ExitCode> {
  const logger = o.logger ?? makeLogger(args, io, command);
  const conn = await openConnection(args, io, logger, o);
  try {
    return await use(conn, logger);
  } catch (e) {
    const json = (args as { json?: boolean }).json;
    if (!(e instanceof PayoutApiError)) return handleEngineError(e, io, json);
    logger.error({ err: e.toJSON() }, `${command}: request failed`);
    return saidFailed(io, json, e.message, ExitCode.SERVICE_UNAVAILABLE);
  } finally {
    await conn.close().catch(() => undefined);
  }
}

/** A report written beside the output: a failure is said on stderr and never changes the exit code. */
export async function reportOrNote<T>(io: CliIO, write: () => Promise<T>, what = 'the HTML report'): Promise<T | undefined> {
  try {
    return await write();
  } catch (e) {
    // (a run refused before reading the batch wrote no results file: nothing to say)
    if (!(e instanceof ResultsError && e.code === 'FILE_NOT_FOUND'))
      io.stderr.write(`payout-batch: ${what} was not written: ${(e as Error).message}\n`);
    return undefined;
  }
}

/**
 * Rows in flight: enough for `rate` starts a second while each waits up to a second (8 at 5/s). At
 * most 64: more held a socket each and their answers timed out on a busy host.
 */
export const inFlightFor = (rate: number | undefined): number => Math.min(64, Math.max(8, Math.ceil(rate ?? 5)));

export async function askYesNo(io: CliIO, question: string): Promise<boolean> {
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: true });
  try {
    const answer = await new Promise<string>((resolve) => {
      rl.question(question, resolve);
      // Ctrl-C at the question (the terminal is in raw mode: no SIGINT) answers no.
      rl.once('SIGINT', () => {
        io.stderr.write('^C\n');
        resolve('');
      });
      rl.once('close', () => resolve('')); // (Ctrl-D, the end of input: no)
    });
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

// `payout-batch run FILE`: preflight, approval, then every valid row (quote -> documents ->
// initiate -> PATCH), journalled so that a run killed at any instant continues where it stopped
// when started again with the same command. A thin layer: flags -> engine -> output -> exit code.
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import cliProgress from 'cli-progress';
import type { Argv } from 'yargs';
import type { Logger } from 'pino';
import { createLogger } from '../../log.ts';
import type { DestinationStream } from 'pino';
import { defineCommand, UsageError, type CliIO } from '../command.ts';
import { embeddedSandboxOptions } from '../sandbox-shapes.ts';
import { ExitCode } from '../exit-codes.ts';
import { ClientConfigError } from '../../client/api-key.ts';
import { connect, type Connection } from '../../client/connect.ts';
import { ENVIRONMENTS } from '../../client/environment.ts';
import { defaultStateDir } from '../../client/quota.ts';
import type { ClientEvent } from '../../client/http.ts';
import { InputError } from '../../input/errors.ts';
import { ResultsError } from '../../results/errors.ts';
import { parseMoneyFlag, type MoneyFlag } from '../../engine/approval.ts';
import type { EngineEvent } from '../../engine/execute.ts';
import type { BatchPlan } from '../../engine/plan.ts';
import type { PipelineResult } from '../../engine/pipeline.ts';
import { ENGINE_STATUSES, isCreatedStatus, outcomeOf } from '../../engine/outcome.ts';
import { runBatch } from '../../engine/run.ts';
import { BatchRefused, FailedAfterSending, type ResumeReport } from '../../engine/session.ts';

export interface ConnectionArgs {
  env?: string;
  'base-url'?: string;
  'gateway-host'?: string;
  'key-file'?: string;
  rate?: number;
  'safety-margin'?: number;
  'log-level'?: string;
  'api-key'?: unknown;
}

export interface GuardArgs {
  yes: boolean;
  'allow-partial': boolean;
  'enable-pairs': boolean;
  'expect-rows'?: number;
  'expect-total'?: string[];
  'max-total'?: string[];
}

export interface RunArgs extends ConnectionArgs, GuardArgs {
  file?: string;
  plan?: string;
  'batch-id'?: string;
  'state-dir'?: string;
  results?: string;
  quote: boolean;
  'merge-documents': boolean;
  concurrency?: number;
  json: boolean;
  encoding?: string;
  sheet?: string;
  'allow-duplicate-rows': boolean;
}

export const STATE_DIR_HELP =
  'State folder holding the ledger of each service account and the quota count (default $PAYOUT_BATCH_STATE_DIR, else ~/.local/state/payout-batch)';

export function connectionOptions(y: Argv): Argv {
  return y
    .option('env', {
      type: 'string',
      choices: ENVIRONMENTS as unknown as string[],
      describe: 'local (embedded sandbox), sandbox or production; default $PAYOUT_ENV, else sandbox. Production must be named here.',
    })
    .option('base-url', { type: 'string', describe: 'Talk to this server instead ($PAYOUT_BASE_URL)' })
    .option('gateway-host', { type: 'string', describe: 'Production gateway host, e.g. gateway.example.com ($PAYOUT_GATEWAY_HOST)' })
    .option('key-file', { type: 'string', describe: 'Read the API key from this file ($PAYOUT_API_KEY_FILE); else $PAYOUT_API_KEY' })
    .option('rate', { type: 'number', describe: 'Advanced: request starts per rolling second for the key (the spec allows 5; default 5)' })
    .option('safety-margin', {
      type: 'number',
      describe: 'Advanced: ms added to the rolling second against network jitter (default 50; 25 for a service on 127.0.0.1)',
    })
    .option('log-level', {
      type: 'string',
      describe: 'JSON log level on stderr ($PAYOUT_BATCH_LOG_LEVEL; default info when not a terminal)',
    })
    .option('api-key', { hidden: true });
}

export function guardOptions(y: Argv): Argv {
  return y
    .option('yes', { type: 'boolean', default: false, describe: 'Unattended: no confirmation (combine with control totals)' })
    .option('allow-partial', {
      type: 'boolean',
      default: false,
      describe: 'Send the rows that fit when a wallet falls short or a corridor is not enabled',
    })
    .option('enable-pairs', { type: 'boolean', default: false, describe: 'Enable the currency pairs of corridors that are not enabled' })
    .option('expect-rows', { type: 'number', describe: 'Control total: the number of rows the batch pays, or nothing is sent' })
    .option('expect-total', {
      type: 'string',
      array: true,
      describe: 'Control total CUR:AMOUNT of the amounts (before fees), repeatable; must match or nothing is sent',
    })
    .option('max-total', { type: 'string', array: true, describe: 'Cap CUR:AMOUNT on amounts plus estimated fees, repeatable' });
}

export function refuseKeyFlag(args: ConnectionArgs): void {
  if (args['api-key'] !== undefined) {
    throw new UsageError(
      'the API key is never taken from the command line (other users see it in ps): set PAYOUT_API_KEY or use --key-file',
    );
  }
}

export function moneyFlags(values: string[] | undefined, flag: string): MoneyFlag[] {
  try {
    return (values ?? []).map((v) => parseMoneyFlag(String(v), flag));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

export function isInteractive(io: CliIO): boolean {
  return !!io.stdin.isTTY && !!io.stderr.isTTY;
}

export function makeLogger(args: ConnectionArgs, io: CliIO, command: string): Logger {
  const level = args['log-level'] ?? io.env.PAYOUT_BATCH_LOG_LEVEL ?? (io.stderr.isTTY ? 'warn' : 'info');
  // Logs go to the command's own stderr (process.stderr from the bin), so an embedding or a test
  // that runs main() with its own streams gets them too.
  return createLogger({ level, bindings: { command }, destination: io.stderr as unknown as DestinationStream });
}

/**
 * The state folder: --state-dir (relative to the working folder), else the per-user one
 * ($PAYOUT_BATCH_STATE_DIR, $XDG_STATE_HOME/payout-batch, ~/.local/state/payout-batch). It holds
 * the ledger of every service account (engine/ledger.ts) and the quota count.
 */
export function stateRootOf(args: { 'state-dir'?: string }, io: CliIO): string {
  return args['state-dir'] ? resolve(io.cwd, args['state-dir']) : defaultStateDir(io.env);
}

export async function openConnection(
  args: ConnectionArgs,
  io: CliIO,
  logger: Logger,
  onEvent?: (e: ClientEvent) => void,
  stateRoot: string = defaultStateDir(io.env),
): Promise<Connection> {
  refuseKeyFlag(args);
  if (args.rate !== undefined && !(args.rate > 0 && args.rate <= 1000))
    throw new UsageError('--rate must be a number of requests per second above 0');
  const margin = args['safety-margin'];
  if (margin !== undefined && !(margin >= 0 && margin <= 5000))
    throw new UsageError('--safety-margin must be a number of milliseconds from 0 to 5000');
  const sandbox = embeddedSandboxOptions(io.env);
  try {
    return await connect({
      env: args.env,
      baseUrl: args['base-url'],
      gatewayHost: args['gateway-host'],
      keyFile: args['key-file'],
      vars: io.env,
      cwd: io.cwd,
      stateDir: stateRoot,
      logger,
      sandbox,
      client: {
        ...(args.rate ? { requestsPerSecond: args.rate } : {}),
        ...(margin !== undefined ? { safetyMarginMs: margin } : {}),
        concurrency: inFlightFor(args.rate),
        ...(onEvent ? { onEvent } : {}),
      },
    });
  } catch (e) {
    if (e instanceof ClientConfigError)
      throw new UsageError(e.message, e.reason === 'refused' ? ExitCode.REFUSED : ExitCode.UNUSABLE_INPUT);
    throw e;
  }
}

/**
 * Requests (and rows) in flight: enough to keep `rate` starts per second going while each waits up
 * to a second for its answer. At the spec's 5/s this is the default 8.
 */
export const inFlightFor = (rate: number | undefined): number => Math.max(8, Math.ceil(rate ?? 5));

/** Asks once on the terminal. */
export async function askYesNo(io: CliIO, question: string): Promise<boolean> {
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: true });
  try {
    const answer = await new Promise<string>((resolve) => rl.question(question, resolve));
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

const group = (amount: string) => {
  const [i, f] = amount.split('.');
  return i!.replace(/\B(?=(\d{3})+(?!\d))/g, ',') + (f !== undefined ? `.${f}` : '');
};

export function resumeText(r: ResumeReport): string {
  if (!r.resumed) return '';
  const parts = [`${r.created} row${r.created === 1 ? '' : 's'} already created`];
  if (r.toSettle) parts.push(`${r.toSettle} whose outcome must be settled first (same key, same body)`);
  if (r.rejected) parts.push(`${r.rejected} refused by the service before`);
  if (r.conflicts) parts.push(`${r.conflicts} in conflict`);
  return (
    `Resuming this batch (${r.interrupted ? 'the last run was interrupted' : `${r.runs} earlier run${r.runs === 1 ? '' : 's'}`}): ${parts.join(', ')}.` +
    (r.skippedLines ? ` (${r.skippedLines} torn journal line${r.skippedLines === 1 ? '' : 's'} ignored)` : '') +
    '\n'
  );
}

export function planText(p: BatchPlan, environment: string): string {
  const l: string[] = [];
  l.push(`Plan for ${p.file} (${environment}, batch ${p.batchId.slice(0, 16)})`);
  l.push(`  rows         ${p.rows}: ${p.valid} valid, ${p.invalid} invalid (never sent)`);
  l.push(
    `  to send now  ${p.toSend.length}${p.toSettle ? ` (${p.toSettle} to settle with their original key)` : ''}${p.alreadyCreated ? `; ${p.alreadyCreated} already created` : ''}${p.notSent.size ? `; ${p.notSent.size} left out` : ''}`,
  );
  if (p.currencies.length) {
    l.push('  by source currency (estimated fees)         wallet balance -> after the batch');
    for (const c of p.currencies) {
      l.push(
        `    ${c.currency}  ${String(c.rows).padStart(5)} rows  ${group(c.amount).padStart(16)} + ${group(c.estimatedFees).padStart(10)} = ${group(c.total).padStart(16)}   ` +
          (c.balance === undefined || c.balanceAfter === undefined
            ? 'balance not known'
            : `${group(c.balance).padStart(16)} -> ${group(c.balanceAfter)}${c.shortfall ? `   SHORT BY ${group(c.shortfall)}` : ''}`) +
          (c.feesNotKnown ? `   (+ fees of ${c.feesNotKnown} row${c.feesNotKnown === 1 ? '' : 's'} not known before sending)` : ''),
      );
    }
  }
  for (const c of p.corridorsNotEnabled) {
    l.push(
      `  not enabled  ${c.sourceCurrency} -> ${c.destinationCurrency} (${c.destinationCountryCode}), ${c.rows} row${c.rows === 1 ? '' : 's'}: ` +
        `PATCH /v1/payout-api/payouts/currency-pairs/${c.pairId ?? '{currencyPairId}'}/toggle {"enabled": true}, or --enable-pairs`,
    );
  }
  const q = p.requests;
  l.push(
    `  requests     about ${q.estimate}${q.usedThisMonth !== undefined ? `; this key has used ${q.usedThisMonth} of ${q.quota} this month, as counted here` : ''}`,
  );
  if (p.resend?.rows)
    l.push(
      `  sent again   ${p.resend.rows} row${p.resend.rows === 1 ? '' : 's'} whose payout failed and was refunded: ` +
        p.resend.byCurrency.map((c) => `${c.currency} ${group(c.amount)} (${c.rows})`).join(', ') +
        ' (plus fees), under a new attempt',
    );
  for (const w of p.warnings) l.push(`  warning      ${w}`);
  return l.join('\n') + '\n';
}

export function summaryText(r: PipelineResult): string {
  const l: string[] = ['', 'Summary'];
  for (const [status, n] of Object.entries(r.summary.byStatus).sort((a, b) => b[1] - a[1])) {
    const o = outcomeOf(status);
    l.push(`  ${status.padEnd(16)} ${String(n).padStart(6)}${o === 'notCreated' ? '' : `  (${OUTCOME_WORDS[o]})`}`);
  }
  const money = Object.entries(r.summary.money ?? {});
  if (money.length) {
    l.push('  by source currency:      debited         refunded              net');
    for (const [c, t] of money)
      l.push(
        `    ${c}  ${group(t.debited).padStart(16)} ${group(t.refunded).padStart(16)} ${group(t.net).padStart(16)}` +
          (t.refundsNotSeen ? `   (${t.refundsNotSeen} refund${t.refundsNotSeen === 1 ? '' : 's'} not seen yet)` : '') +
          (t.feesNotKnown ? `   (fees of ${t.feesNotKnown} not known yet)` : ''),
      );
  }
  l.push(`  results      ${r.resultsPath}`);
  return l.join('\n') + '\n';
}

/** A payout status in a treasurer's words, beside the status in the summary. */
const OUTCOME_WORDS = {
  paid: 'paid',
  inProgress: 'created, in progress',
  waiting: 'waiting for us: answer with payout-batch attach',
  failed: 'failed after creation, refunded by the service',
  notCreated: '',
} as const;

export function exitReasonText(r: PipelineResult): string {
  if (r.refused) return `Nothing was sent:\n${r.refused.map((x) => `  - ${x}`).join('\n')}\n`;
  if (r.halted) return `The run stopped: ${r.halted}\nWhat was sent is journalled: run the same command again to continue (it is safe).\n`;
  if (r.stopped) return 'Stopped on request: run the same command again to continue.\n';
  const s = r.summary;
  if (s.notCreated) {
    const bad = Object.entries(s.byStatus)
      .filter(([k]) => !isCreatedStatus(k))
      .map(([k, n]) => `${n} ${k}`)
      .join(', ');
    return (
      `${bad}: see the results file; fix rows and run \`payout-batch retry ${r.resultsPath}\`` +
      `${s.byStatus[ENGINE_STATUSES.UNKNOWN_OUTCOME] ? ' (rows of unknown outcome are settled with their original key first)' : ''}.\n`
    );
  }
  const o = s.outcomes;
  if (o && (o.failed || o.waiting))
    return (
      `${s.created} payout${s.created === 1 ? '' : 's'} created; ${[o.failed ? `${o.failed} failed after creation` : '', o.waiting ? `${o.waiting} waiting for information` : ''].filter(Boolean).join(', ')}: ` +
      `see the results file and \`payout-batch status ${r.resultsPath}\`.\n`
    );
  return `All ${s.created} payout${s.created === 1 ? '' : 's'} created.\n`;
}

/** Progress on a terminal (cli-progress), or JSON lines through pino. */
export function progressSink(io: CliIO, logger: Logger, batchLabel: () => string, json: boolean) {
  const starts: number[] = [];
  let bar: cliProgress.SingleBar | undefined;
  let done = 0;
  let failed = 0;
  let pending = 0;
  const rps = () => {
    const now = Date.now();
    while (starts.length && starts[0]! < now - 5000) starts.shift();
    return (starts.length / 5).toFixed(1);
  };
  return {
    onClientEvent(e: ClientEvent) {
      if (e.type === 'response') starts.push(Date.now());
    },
    /** Remembers the total; the bar appears with the first row (after any confirmation question). */
    start(total: number) {
      pending = total;
    },
    show() {
      const total = pending;
      pending = 0;
      if (io.stderr.isTTY && !json && total > 0) {
        bar = new cliProgress.SingleBar(
          {
            stream: io.stderr,
            format: ' {bar} {value}/{total} rows | failed {failed} | {rps} req/s | ETA {eta_formatted}',
            hideCursor: true,
            clearOnComplete: false,
          },
          cliProgress.Presets.shades_classic,
        );
        bar.start(total, 0, { failed: 0, rps: '0.0' });
      }
    },
    onEvent(e: EngineEvent) {
      if (pending) this.show();
      if (e.type === 'row-done') {
        done++;
        if (!isCreatedStatus(e.status)) failed++;
        bar?.update(done, { failed, rps: rps() });
        const fields = {
          batchId: batchLabel(),
          row: e.rowNumber,
          reference: e.reference,
          status: e.status,
          requestId: e.requestId,
          payoutId: e.payoutId,
          idempotencyKey: e.key,
          errorCode: e.errorCode,
        };
        if (isCreatedStatus(e.status)) logger.info(fields, 'row done');
        else logger.warn({ ...fields, message: e.message }, 'row not created');
      } else if (e.type === 'halted') {
        logger.error({ batchId: batchLabel(), reason: e.reason }, 'run halted');
      } else if (e.type === 'settle-pass') {
        logger.info({ batchId: batchLabel(), rows: e.rows }, 'settling rows of unknown outcome with their original keys');
      }
    },
    stop() {
      bar?.stop();
    },
  };
}

/** Maps the engine's errors to exit codes with a message (no stack trace). */
export function handleEngineError(e: unknown, io: CliIO): ExitCode {
  // Before anything else: once rows may have been sent, no failure may say "nothing was sent" (2).
  if (e instanceof FailedAfterSending) {
    io.stderr.write(
      `payout-batch: the run failed after sending began: ${e.message}\n` +
        `Part of the batch may have been sent; every request sent is in the journal (${e.journalPath}). ` +
        'Resume is safe: fix the cause and run the same command again (nothing is paid twice).\n',
    );
    return ExitCode.SERVICE_UNAVAILABLE;
  }
  if (e instanceof BatchRefused) {
    io.stderr.write(`payout-batch: refused: ${e.message}\n`);
    return ExitCode.REFUSED;
  }
  if (e instanceof InputError) {
    io.stderr.write(`payout-batch: ${e.message} [${e.code}]\n`);
    return ExitCode.UNUSABLE_INPUT;
  }
  if (e instanceof ResultsError) {
    io.stderr.write(`payout-batch: ${e.message}\n`);
    return ExitCode.UNUSABLE_INPUT;
  }
  if (e instanceof RangeError) throw new UsageError(e.message);
  throw e;
}

export function jsonSummary(r: PipelineResult & { batchId?: string; journalPath?: string }, environment: string): string {
  return (
    JSON.stringify(
      {
        exitCode: r.exitCode,
        environment,
        batchId: r.batchId,
        journal: r.journalPath,
        results: r.resultsPath,
        resumed: r.report,
        refused: r.refused,
        halted: r.halted,
        plan: r.plan
          ? {
              rows: r.plan.rows,
              valid: r.plan.valid,
              invalid: r.plan.invalid,
              toSend: r.plan.toSend.length,
              alreadyCreated: r.plan.alreadyCreated,
              currencies: r.plan.currencies,
              warnings: r.plan.warnings,
              requests: r.plan.requests,
              ...(r.plan.resend?.rows ? { resend: r.plan.resend } : {}),
            }
          : undefined,
        summary: r.summary,
        ...('resent' in r ? { resent: r.resent, notResent: (r as unknown as { notResent: unknown[] }).notResent } : {}),
      },
      null,
      2,
    ) + '\n'
  );
}

/** The sending flags run and retry share. */
export function sendingOptions(y: Argv): Argv {
  return y
    .option('quote', { type: 'boolean', default: true, describe: 'Quote each row before sending (--no-quote skips it)' })
    .option('merge-documents', { type: 'boolean', default: false, describe: "Merge a row's documents into one PDF before upload" })
    .option('concurrency', { type: 'number', describe: 'Rows in flight at once (default max(8, --rate); the client throttles requests)' })
    .option('json', { type: 'boolean', default: false, describe: 'Print a machine-readable summary on stdout' });
}

/** What run and retry set up before sending: logs, control totals, progress, the connection, Ctrl-C. */
export async function sendingSession(
  args: ConnectionArgs & GuardArgs & { json: boolean; 'state-dir'?: string },
  io: CliIO,
  command: string,
) {
  const logger = makeLogger(args, io, command);
  const expectTotals = moneyFlags(args['expect-total'], '--expect-total');
  const maxTotals = moneyFlags(args['max-total'], '--max-total');
  const label = { batch: '' };
  const progress = progressSink(io, logger, () => label.batch, args.json);
  const conn = await openConnection(args, io, logger, (e) => progress.onClientEvent(e), stateRootOf(args, io));
  const stop = new AbortController();
  void io.stopSignal.then(() => stop.abort());
  const out = (text: string) => {
    if (!args.json) io.stdout.write(text);
  };
  return { logger, expectTotals, maxTotals, label, progress, conn, stop, out };
}

export default defineCommand<RunArgs>({
  builder: (y) =>
    sendingOptions(guardOptions(connectionOptions(y)))
      .positional('file', { type: 'string', describe: 'The batch file (CSV or Excel); optional with --plan' })
      .option('plan', { type: 'string', describe: 'Run exactly this plan (from `payout-batch plan FILE --out PLAN`)' })
      .option('batch-id', {
        type: 'string',
        describe: 'Batch identity instead of the content hash: a new one sends the same rows again on purpose',
      })
      .option('state-dir', { type: 'string', describe: STATE_DIR_HELP })
      .option('results', { type: 'string', describe: 'Results file (.csv or .xlsx); default <batch>.results.<ext> beside the batch' })
      .option('encoding', { type: 'string', describe: 'CSV encoding (default: detected)' })
      .option('sheet', { type: 'string', describe: 'Excel sheet (default: the first)' })
      .option('allow-duplicate-rows', {
        type: 'boolean',
        default: false,
        describe: 'Same account, amount and currency on two rows is intended',
      }) as never,
  run: async (args, io) => {
    if (!args.file && !args.plan) throw new UsageError('name the batch file, or --plan PLAN');
    const { logger, expectTotals, maxTotals, label, progress, conn, stop, out } = await sendingSession(args, io, 'run');
    try {
      const r = await runBatch({
        file: args.file,
        planFile: args.plan,
        conn,
        batchId: args['batch-id'],
        stateDir: stateRootOf(args, io),
        resultsPath: args.results,
        encoding: args.encoding,
        sheet: args.sheet,
        allowDuplicateRows: args['allow-duplicate-rows'],
        envFlag: args.env,
        yes: args.yes,
        interactive: isInteractive(io),
        allowPartial: args['allow-partial'],
        enablePairs: args['enable-pairs'],
        expectRows: args['expect-rows'],
        expectTotals,
        maxTotals,
        quote: args.quote,
        mergeDocuments: args['merge-documents'],
        concurrency: args.concurrency ?? inFlightFor(args.rate),
        stop: stop.signal,
        onResume: (report) => out(resumeText(report)),
        onPlan: (plan) => {
          label.batch = plan.batchId.slice(0, 16);
          out(planText(plan, conn.environment.name));
          logger.info(
            { batchId: label.batch, toSend: plan.toSend.length, alreadyCreated: plan.alreadyCreated, currencies: plan.currencies },
            'plan',
          );
          progress.start(plan.toSend.length);
        },
        confirm: (plan) =>
          askYesNo(
            io,
            `Send ${plan.toSend.length} payout${plan.toSend.length === 1 ? '' : 's'} (${plan.currencies.map((c) => `${c.currency} ${group(c.total)}`).join(', ')}) from ${conn.environment.name}? [y/N] `,
          ),
        onEvent: (e) => progress.onEvent(e),
      });
      progress.stop();
      out(summaryText(r));
      (r.exitCode === 0 ? io.stdout : io.stderr).write(args.json ? '' : exitReasonText(r));
      if (args.json) io.stdout.write(jsonSummary(r, conn.environment.name));
      return r.exitCode;
    } catch (e) {
      progress.stop();
      return handleEngineError(e, io);
    } finally {
      await conn.close().catch(() => undefined);
    }
  },
});

// What run, retry, plan and demo print: the plan, the resume note, the summary, why a run ended,
// the progress (a bar on a terminal, JSON lines otherwise), the --json summary, and the engine's
// errors as a message and an exit code. Text only: no flag parsing, no request.
import cliProgress from 'cli-progress';
import type { Logger } from 'pino';
import { group, plural, UsageError, type CliIO } from './command.ts';
import { ExitCode } from './exit-codes.ts';
import { environmentText } from './environment.ts';
import type { ClientEvent } from '../client/http.ts';
import { InputError } from '../input/errors.ts';
import { ResultsError } from '../results/errors.ts';
import type { EngineEvent } from '../engine/execute.ts';
import { requestKindsText, type BatchPlan } from '../engine/plan.ts';
import { swapText } from '../engine/swap.ts';
import type { PipelineResult } from '../engine/pipeline.ts';
import { ENGINE_STATUSES, isCreatedStatus, logRowDone, statusGroup, STATUS_GROUP_WORDS } from '../engine/outcome.ts';
import type { MoneyTotals } from '../engine/money-totals.ts';
import { BatchRefused, FailedAfterSending, type ResumeReport } from '../engine/session.ts';

export function resumeText(r: ResumeReport): string {
  if (!r.resumed) return '';
  const parts = [`${plural(r.created, 'row')} already created`];
  if (r.toSettle) parts.push(`${r.toSettle} whose outcome must be settled first (same key, same body)`);
  if (r.rejected) parts.push(`${r.rejected} refused by the service before`);
  if (r.conflicts) parts.push(`${r.conflicts} in conflict`);
  return (
    `Resuming this batch (${r.interrupted ? 'the last run was interrupted' : `${plural(r.runs, 'earlier run')}`}): ${parts.join(', ')}.` +
    (r.skippedLines ? ` (${plural(r.skippedLines, 'torn journal line')} ignored)` : '') +
    '\n'
  );
}

export function planText(p: BatchPlan, environment: string, baseUrl?: string): string {
  const l: string[] = [];
  l.push(`Plan for ${p.file} (${environment}, batch ${p.batchId.slice(0, 16)})`);
  l.push(`  environment  ${environmentText(environment, baseUrl)}`);
  l.push(`  rows         ${p.rows}: ${p.valid} valid, ${p.invalid} invalid (never sent)`);
  l.push(
    `  to send now  ${p.toSend.length}${p.toSettle ? ` (${p.toSettle} to settle with their original key)` : ''}${p.alreadyCreated ? `; ${p.alreadyCreated} already created` : ''}${p.notSent.size ? `; ${p.notSent.size} left out` : ''}`,
  );
  if (p.currencies.length) {
    l.push('  by source currency: amount + fees = total     wallet balance -> after the batch');
    for (const c of p.currencies) {
      l.push(
        `    ${c.currency}  ${String(c.rows).padStart(5)} rows  ${group(c.amount).padStart(16)} + ${group(c.estimatedFees).padStart(10)} = ${group(c.total).padStart(16)}   ` +
          (c.balance === undefined || c.balanceAfter === undefined
            ? 'balance not known'
            : `${group(c.balance).padStart(16)}${c.swap ? ` ${group(c.swap)} swap` : ''} -> ${group(c.balanceAfter)}${c.shortfall ? `   SHORT BY ${group(c.shortfall)}` : ''}`) +
          feesText(c),
      );
    }
  }
  for (const s of p.swaps)
    l.push(`  swap ${s.currency}     ${swapText(s)}${p.fundedBySwaps ? '' : ' (proposed: not sent without --fund-by-swap)'}`);
  for (const r of p.swapRefusals) l.push(`  no swap ${r.currency}  short by ${group(r.shortfall)}: ${r.reason}`);
  for (const c of p.corridorsNotEnabled) {
    l.push(
      `  not enabled  ${c.sourceCurrency} -> ${c.destinationCurrency} (${c.destinationCountryCode}), ${plural(c.rows, 'row')}: ` +
        `PATCH /v1/payout-api/payouts/currency-pairs/${c.pairId ?? '{currencyPairId}'}/toggle {"enabled": true}, or --enable-pairs`,
    );
  }
  const q = p.requests;
  l.push(`  requests     about ${q.estimate} of the key's month: ${requestKindsText(q)}`);
  if (q.usedThisMonth !== undefined && q.quota !== undefined)
    l.push(
      `  quota        ${n(q.usedThisMonth)} of ${n(q.quota)} used this month, as counted here: about ${n(Math.max(0, q.quota - q.usedThisMonth - q.estimate))} left after this batch`,
    );
  if (p.resend?.rows)
    l.push(
      `  sent again   ${plural(p.resend.rows, 'row')} whose payout failed and was refunded: ` +
        p.resend.byCurrency.map((c) => `${c.currency} ${group(c.amount)} (${c.rows})`).join(', ') +
        ' (plus fees), under a new attempt',
    );
  for (const w of p.warnings) l.push(`  warning      ${w}`);
  return l.join('\n') + '\n';
}

const n = (x: number) => x.toLocaleString('en-US');

/** Which fees of a currency are exact (quoted) and which estimated (the methods route's), with the margin kept for them. */
function feesText(c: BatchPlan['currencies'][number]): string {
  const notes = [
    c.feesEstimated
      ? `fees of ${plural(c.feesEstimated, 'row')} estimated, margin ${group(c.feeMargin ?? '0')}`
      : c.rows > (c.feesNotKnown ?? 0)
        ? 'fees exact (quoted)'
        : '',
    c.feesNotKnown ? `+ fees of ${plural(c.feesNotKnown, 'row')} not known before sending` : '',
  ].filter(Boolean);
  return notes.length ? `   (${notes.join('; ')})` : '';
}

export function summaryText(r: Pick<PipelineResult, 'summary' | 'resultsPath'>): string {
  const l: string[] = ['', 'Summary'];
  for (const [status, n] of Object.entries(r.summary.byStatus).sort((a, b) => b[1] - a[1])) {
    l.push(`  ${status.padEnd(16)} ${String(n).padStart(6)}  (${STATUS_GROUP_WORDS[statusGroup(status)].title.toLowerCase()})`);
  }
  l.push(...moneyLines(r.summary.money));
  l.push(`  results      ${r.resultsPath}`);
  return l.join('\n') + '\n';
}

/** Per source currency: what the payouts debited, what came back and the net (engine/money-totals.ts), one line each. */
export function moneyLines(money: Record<string, MoneyTotals>): string[] {
  const entries = Object.entries(money);
  if (!entries.length) return [];
  const line = (t: MoneyTotals) => {
    const notes = [
      t.refundsNotSeen ? `${plural(t.refundsNotSeen, 'refund')} not seen yet` : '',
      t.feesNotKnown ? `fees of ${t.feesNotKnown} not known yet` : '',
    ].filter(Boolean);
    return `${group(t.debited).padStart(16)} ${group(t.refunded).padStart(16)} ${group(t.net).padStart(16)}${notes.length ? `   (${notes.join('; ')})` : ''}`;
  };
  return ['  by source currency:        debited         refunded              net', ...entries.map(([c, t]) => `    ${c}  ${line(t)}`)];
}

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
    if (s.byStatus[ENGINE_STATUSES.ALREADY_PAID] === s.notCreated)
      return `${bad}: paid before at this account, nothing created by this run (see the results file); paying again takes new references.\n`;
    return (
      `${bad}: see the results file; fix rows and run \`payout-batch retry ${r.resultsPath}\`` +
      `${s.byStatus[ENGINE_STATUSES.UNKNOWN_OUTCOME] ? ' (rows of unknown outcome are settled with their original key first)' : ''}.\n`
    );
  }
  const o = s.outcomes;
  if (o.failed || o.waiting)
    return (
      `${plural(s.created, 'payout')} created; ${[o.failed ? `${o.failed} failed after creation` : '', o.waiting ? `${o.waiting} waiting for information` : ''].filter(Boolean).join(', ')}: ` +
      `see the results file and \`payout-batch status ${r.resultsPath}\`.\n`
    );
  return `All ${plural(s.created, 'payout')} created.\n`;
}

/** Progress on a terminal (cli-progress) unless quiet (--json, --quiet), and JSON lines through pino. */
export function progressSink(io: CliIO, logger: Logger, batchLabel: () => string, quiet: boolean) {
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
    onEvent(e: EngineEvent) {
      if (pending && io.stderr.isTTY && !quiet) {
        bar = new cliProgress.SingleBar(
          {
            stream: io.stderr,
            format: ' {bar} {value}/{total} rows | failed {failed} | {rps} req/s | ETA {eta_formatted}',
            hideCursor: true,
            clearOnComplete: false,
          },
          cliProgress.Presets.shades_classic,
        );
        bar.start(pending, 0, { failed: 0, rps: '0.0' });
      }
      pending = 0;
      if (e.type === 'row-done') {
        done++;
        if (!isCreatedStatus(e.status)) failed++;
        bar?.update(done, { failed, rps: rps() });
        logRowDone(logger, e, { batchId: batchLabel() });
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
  if (e instanceof InputError || e instanceof ResultsError) {
    io.stderr.write(`payout-batch: ${e.message}${e instanceof InputError ? ` [${e.code}]` : ''}\n`);
    return ExitCode.UNUSABLE_INPUT;
  }
  if (e instanceof RangeError) throw new UsageError(e.message);
  throw e;
}

/**
 * A plan as every --json gives it (plan, and run's and retry's `plan`), in one key order; `plan`
 * also names the corridors not enabled (run and retry refuse a batch over them).
 */
export const planJson = (p: BatchPlan, withCorridors = false) => ({
  rows: p.rows,
  valid: p.valid,
  invalid: p.invalid,
  toSend: p.toSend.length,
  alreadyCreated: p.alreadyCreated,
  currencies: p.currencies,
  ...(withCorridors ? { corridorsNotEnabled: p.corridorsNotEnabled } : {}),
  ...(p.swaps.length ? { swaps: p.swaps } : {}),
  ...(p.swapRefusals.length ? { swapRefusals: p.swapRefusals } : {}),
  warnings: p.warnings,
  requests: p.requests,
});

/** The --json summary of run and retry (retry adds what --resend-failed sent again). */
export function jsonSummary(
  r: PipelineResult & { batchId?: string; journalPath?: string; reportPath?: string; resent?: number; notResent?: unknown[] },
  environment: string,
) {
  return {
    exitCode: r.exitCode,
    environment,
    batchId: r.batchId,
    journal: r.journalPath,
    results: r.resultsPath,
    report: r.reportPath,
    resumed: r.report,
    refused: r.refused,
    halted: r.halted,
    plan: r.plan ? { ...planJson(r.plan), ...(r.plan.resend?.rows ? { resend: r.plan.resend } : {}) } : undefined,
    summary: r.summary,
    ...(r.resent !== undefined ? { resent: r.resent, notResent: r.notResent } : {}),
  };
}

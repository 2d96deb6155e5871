// What run, retry, plan, demo, status and reconcile print (README.md), and the engine's errors as an exit code.
import { EventEmitter } from 'node:events';
import { basename } from 'node:path';
import cliProgress, { type Params } from 'cli-progress';
import type { Logger } from 'pino';
import { plural, saidFailed, type CliIO } from './command.ts';
import { groupThousands } from '../money.ts';
import { shellWord } from '../text.ts';
import { ExitCode } from './exit-codes.ts';
import type { ClientEvent } from '../client/http.ts';
import { InputError } from '../input/input-errors.ts';
import { ResultsError } from '../results/results-errors.ts';
import type { EngineEvent } from '../engine/execute.ts';
import { requestKindsText, type BatchPlan } from '../engine/batch-plan.ts';
import { enableHint } from '../engine/guards.ts';
import { swapText } from '../engine/swap.ts';
import { hitText, listText, type Screened } from '../engine/screen-batch.ts';
import { swapRequestsText } from '../follow-up/swap-views.ts';
import type { RequestCounts } from '../follow-up/reconcile-fetch.ts';
import type { EngineEvents, PipelineResult } from '../engine/pipeline.ts';
import { ENGINE_STATUSES, isCreatedStatus, logRowDone, statusGroup, STATUS_GROUP_WORDS } from '../engine/outcome.ts';
import type { MoneyTotals } from '../engine/money-totals.ts';
import { BatchRefused, BatchUnusable, FailedAfterSending } from '../engine/engine-errors.ts';
import { TeamLedgerError } from '../ledger/pg-db.ts';
import { formatProblem } from '../validation/problems.ts';
import type { ResumeReport } from '../engine/session.ts';
import type { PreflightStep } from '../engine/preflight.ts';

export const ENVIRONMENT_MEANING: Record<string, string> = {
  local: 'the sandbox embedded in the command, its state kept in the state folder (--env local); no money moves',
  sandbox: "the service's sandbox (staging) host; no money moves",
  production: 'the live service: real money moves',
  custom: 'a base URL given with --base-url or $PAYOUT_BASE_URL; not a known service environment',
};

export function environmentText(name: string, baseUrl?: string): string {
  const meaning = ENVIRONMENT_MEANING[name];
  return `${name}${meaning ? ` (${meaning})` : ''}${baseUrl ? ` ${baseUrl}` : ''}`;
}

export function resumeText(r: ResumeReport): string {
  if (!r.resumed) return '';
  const parts = [`${plural(r.created, 'row')} already created`];
  if (r.toSettle) parts.push(`${r.toSettle} whose outcome must be settled first (same key, same body)`);
  if (r.rejected) parts.push(`${r.rejected} refused by the service before`);
  if (r.resending) parts.push(`${r.resending} reopened by a retry --resend-failed (failed, refunded), not sent again yet`);
  if (r.conflicts) parts.push(`${r.conflicts} in conflict`);
  return (
    `Resuming this batch (${r.interrupted ? 'the last run was interrupted' : `${plural(r.runs, 'earlier run')}`}): ${parts.join(', ')}.` +
    (r.skippedLines ? ` (${plural(r.skippedLines, 'torn journal line')} ignored)` : '') +
    '\n'
  );
}

/** A terminal the plan is fitted to before the question: its width, the rows the plan may take, where to read it whole. */
export interface Screen {
  columns: number;
  rows: number;
  whole: string;
}
type Width = Pick<Screen, 'columns'>;

/** The plan whole (a file, a pipe), wrapped to a terminal's width, or fitted to a `screen` with the question after it. */
export function planText(p: BatchPlan, environment: string, baseUrl?: string, screen?: Screen | Width): string {
  const l: string[] = [];
  /** Lines that give way, last first, when the plan does not fit the screen. */
  const notes = new Set<string>();
  const note = (line: string) => notes.add(l[l.push(line) - 1]!);
  // (on a screen the file's name only: the batch id after it must not be cut off)
  l.push(`Plan for ${screen ? basename(p.file) : p.file} (${environment}, batch ${p.batchId.slice(0, 16)})`);
  l.push(`  environment  ${environmentText(environment, baseUrl)}`);
  if (p.message) l.push(`  message      ISO 20022 ${p.message.version} ${p.message.id}`);
  const sc = p.screening;
  if (sc) l.push(`  screened     ${plural(sc.screened, 'payee')} against ${sc.lists.map(listText).join(', ') || 'no list'}`);
  for (const [n, h] of sc?.held ?? []) l.push(`  HELD         row ${n} ${h.reference}: ${h.hits.map(hitText).join('; ')}`);
  for (const [n, cs] of sc?.cleared ?? [])
    l.push(`  cleared      row ${n}: ${cs.map((c) => `${c.id} (${c.list}:${c.entryId}, signed by ${c.signedBy.join(', ')})`).join('; ')}`);
  l.push(`  rows         ${p.rows}: ${p.valid} valid, ${p.invalid} invalid (never sent)`);
  l.push(
    `  to send now  ${p.toSend.length}${p.toSettle ? ` (${p.toSettle} to settle with their original key)` : ''}${p.alreadyCreated ? `; ${p.alreadyCreated} already created` : ''}${p.notSent.size ? `; ${p.notSent.size} left out` : ''}`,
  );
  for (const [n, i] of p.invalidRows) if (i.code === 'PROBABLE_DUPLICATE') note(`  duplicate    row ${n}: ${i.message}`);
  // every wrong row shown before money moves: the first few whole (row, column, what would be valid), `validate` for the rest
  const invalid = [...p.invalidRows].filter(([, i]) => i.code !== 'PROBABLE_DUPLICATE');
  for (const [n, i] of invalid.slice(0, SHOWN_INVALID))
    note(`  invalid      ${i.problem ? formatProblem({ ...i.problem, file: '' }).trimStart() : `row ${n}: ${i.code}: ${i.message}`}`);
  if (invalid.length > SHOWN_INVALID)
    note(
      `  invalid      and ${plural(invalid.length - SHOWN_INVALID, 'more row')}: \`payout-batch validate ${shellWord(p.file)}\` lists every problem`,
    );
  l.push(...(screen ? currencyTable(p, screen.columns) : currencyLines(p)));
  for (const s of p.swaps)
    l.push(`  swap ${s.currency}     ${swapText(s)}${p.fundedBySwaps ? '' : ' (proposed: not sent without --fund-by-swap)'}`);
  for (const r of p.swapRefusals) l.push(`  no swap ${r.currency}  short by ${groupThousands(r.shortfall)}: ${r.reason}`);
  for (const c of p.corridorsNotEnabled)
    note(
      `  not enabled  ${c.sourceCurrency} -> ${c.destinationCurrency} (${c.destinationCountryCode}), ${plural(c.rows, 'row')}: ${enableHint(c)}`,
    );
  const q = p.requests;
  l.push(`  requests     about ${q.estimate} of the key's month: ${requestKindsText(q)}`);
  if (q.usedThisMonth !== undefined && q.quota !== undefined)
    l.push(
      `  quota        ${n(q.usedThisMonth)} of ${n(q.quota)} used this month, as counted here: about ${n(Math.max(0, q.quota - q.usedThisMonth - q.estimate))} left after this batch`,
    );
  if (p.resend?.rows)
    l.push(
      `  sent again   ${plural(p.resend.rows, 'row')} whose payout failed and was refunded: ` +
        p.resend.byCurrency.map((c) => `${c.currency} ${groupThousands(c.amount)} (${c.rows})`).join(', ') +
        ' (plus fees), under a new attempt',
    );
  for (const w of p.warnings) note(`  warning      ${w}`);
  const fitted = !screen ? l : 'rows' in screen ? fitToScreen(l, notes, screen) : l.flatMap((line) => wrapLine(line, screen.columns));
  return fitted.join('\n') + '\n';
}

const SHOWN_INVALID = 5;

/** The totals by source currency, whole: amounts, fees, balances and how each fee is known. */
function currencyLines(p: BatchPlan): string[] {
  if (!p.currencies.length) return [];
  const g = (amount: string, width: number) => groupThousands(amount).padStart(width);
  return [
    '  by source currency: amount + fees = total     wallet balance -> after the batch',
    ...p.currencies.map(
      (c) =>
        `    ${c.currency}  ${plural(c.rows, 'row').padStart(10)}  ${g(c.amount, 16)} + ${g(c.estimatedFees, 10)} = ${g(c.total, 16)}   ` +
        (c.balance === undefined || c.balanceAfter === undefined
          ? 'balance not known'
          : `${g(c.balance, 16)}${c.swap ? ` ${groupThousands(c.swap)} swap` : ''} -> ${groupThousands(c.balanceAfter)}${c.shortfall ? `   SHORT BY ${groupThousands(c.shortfall)}` : ''}`) +
        feesText(c),
    ),
  ];
}

/** The totals for a terminal: narrower than `columns`, the rows give way, then amount and fees; the total and wallet after stay. */
function currencyTable(p: BatchPlan, columns: number): string[] {
  if (!p.currencies.length) return [];
  const cells = p.currencies.map((c) => ({
    currency: c.currency,
    rows: plural(c.rows, 'row'),
    amount: groupThousands(c.amount),
    fees: groupThousands(c.estimatedFees),
    total: groupThousands(c.total),
    after: c.shortfall
      ? `SHORT BY ${groupThousands(c.shortfall)}`
      : c.balanceAfter === undefined
        ? 'balance not known'
        : groupThousands(c.balanceAfter),
  }));
  const layouts = [
    { title: 'amount + fees = total', columns: { rows: '  ', amount: '  ', fees: ' + ', total: ' = ', after: ' -> ' } },
    { title: 'amount + fees = total', columns: { amount: '  ', fees: ' + ', total: ' = ', after: ' -> ' } },
    { title: 'total with fees', columns: { total: '  ', after: ' -> ' } },
  ];
  const render = (layout: (typeof layouts)[number]) => {
    const cols = Object.entries(layout.columns) as [Exclude<keyof (typeof cells)[number], 'currency'>, string][];
    const w = cols.map(([k]) => Math.max(...cells.map((c) => c[k].length)));
    return [
      `  by source currency: ${layout.title} -> wallet after the batch`,
      ...cells.map((c) => `    ${c.currency}${cols.map(([k, before], i) => before + c[k].padStart(w[i]!)).join('')}`),
    ];
  };
  const lines = layouts.map(render).find((ls) => ls.every((line) => line.length <= columns)) ?? render(layouts.at(-1)!);
  const estimated = p.currencies.reduce((sum, c) => sum + (c.feesEstimated ?? 0), 0);
  const notKnown = p.currencies.reduce((sum, c) => sum + (c.feesNotKnown ?? 0), 0);
  const feeNotes = [
    estimated ? `${plural(estimated, 'row')} estimated (the methods route's), a margin kept` : 'exact (quoted)',
    notKnown ? `${plural(notKnown, 'row')} not known before sending, left out of the totals` : '',
  ].filter(Boolean);
  return [...lines, `  fees         ${feeNotes.join('; ')}`];
}

/** A line whole in `columns`: words carried under its value (a label's line) or its text's start; a longer word is cut. */
function wrapLine(line: string, columns: number): string[] {
  if (line.length <= columns) return [line];
  const indent = ' '.repeat(Math.min(/^ {2}\S.{11} \S/.test(line) ? 15 : line.search(/\S|$/) + 2, columns >> 1));
  const out: string[] = [];
  let current = '';
  for (const word of line.trimEnd().split(/(?<=\S) /)) {
    const next = current ? `${current} ${word}` : word;
    if (next.length <= columns || !current.trim()) current = next;
    else {
      out.push(current);
      current = indent + word.trimStart();
    }
    while (current.length > columns) {
      out.push(current.slice(0, columns));
      current = indent + current.slice(columns);
    }
  }
  return [...out, current];
}

export const fitText = (text: string, columns: number): string =>
  text
    .split('\n')
    .map((line) => wrapLine(line, columns).join('\n'))
    .join('\n');

/** A stream, and its size when it is a terminal (tty.WriteStream). */
type Terminal = { isTTY?: boolean; columns?: number; rows?: number };

/** The terminal's width (else $COLUMNS, else 80); none off a terminal. */
export function widthFor(stream: Terminal, env: NodeJS.ProcessEnv): Width | undefined {
  return stream.isTTY ? { columns: stream.columns || Number(env.COLUMNS) || 80 } : undefined;
}

/** The terminal's size (else $COLUMNS and $LINES, else 80×24) less the question's lines; none off a terminal. */
export function screenFor(stream: Terminal, env: NodeJS.ProcessEnv, question: string, whole: string): Screen | undefined {
  const width = widthFor(stream, env);
  if (!width) return undefined;
  const rows = stream.rows || Number(env.LINES) || 24;
  return { ...width, rows: rows - Math.ceil(question.length / width.columns), whole };
}

/** Lines cut to the screen's width; past its rows the last `notes` give way to one line saying where to read the whole. */
export function fitToScreen(lines: string[], notes: Set<string>, s: Screen): string[] {
  const cut = (line: string) => (line.length > s.columns ? `${line.slice(0, s.columns - 1)}…` : line);
  let shown = lines;
  let left = 0;
  const dropped = [...lines].reverse().filter((line) => notes.has(line));
  while (shown.length + 1 > s.rows && left < dropped.length) {
    const drop = dropped[left++]!;
    shown = shown.filter((line) => line !== drop);
  }
  const shortened = left > 0 || lines.some((line) => line.length > s.columns);
  const note = left ? `${plural(left, 'line')} left out to fit the screen` : 'shortened to fit the screen';
  return [...shown.map(cut), ...(shortened ? [cut(`  (${note}: ${s.whole})`)] : [])];
}

const n = (x: number) => x.toLocaleString('en-US');

const feesText = (c: BatchPlan['currencies'][number]) =>
  notesText(
    c.feesEstimated
      ? `fees of ${plural(c.feesEstimated, 'row')} estimated, margin ${groupThousands(c.feeMargin ?? '0')}`
      : c.rows > (c.feesNotKnown ?? 0)
        ? 'fees exact (quoted)'
        : '',
    c.feesNotKnown ? `+ fees of ${plural(c.feesNotKnown, 'row')} not known before sending` : '',
  );

const notesText = (...notes: string[]) => (notes.some(Boolean) ? `   (${notes.filter(Boolean).join('; ')})` : '');

export function summaryText(r: Pick<PipelineResult, 'summary' | 'resultsPath'>): string {
  const l: string[] = ['', 'Summary'];
  for (const [status, n] of Object.entries(r.summary.byStatus).sort((a, b) => b[1] - a[1])) {
    l.push(`  ${status.padEnd(16)} ${String(n).padStart(6)}  (${STATUS_GROUP_WORDS[statusGroup(status)].title.toLowerCase()})`);
  }
  l.push(...moneyLines(r.summary.money));
  l.push(`  results      ${r.resultsPath}`);
  return l.join('\n') + '\n';
}

/** Per source currency: debited, refunded and net (engine/money-totals.ts). */
export function moneyLines(money: Record<string, MoneyTotals>): string[] {
  const entries = Object.entries(money);
  if (!entries.length) return [];
  const line = (t: MoneyTotals) =>
    [t.debited, t.refunded, t.net].map((amount) => groupThousands(amount).padStart(16)).join(' ') +
    notesText(
      t.refundsNotSeen ? `${plural(t.refundsNotSeen, 'refund')} not seen yet` : '',
      t.feesNotKnown ? `fees of ${t.feesNotKnown} not known yet` : '',
    );
  return ['  by source currency:        debited         refunded              net', ...entries.map(([c, t]) => `    ${c}  ${line(t)}`)];
}

export const requestsUsedText = (q: RequestCounts) =>
  `${plural(q.total, 'request')} (${plural(q.payoutPages, 'payout page')}, ${q.getPayout} payout status, ${plural(q.transactionPages, 'transaction page')}${swapRequestsText(q)})`;

/** `connection`: the flags to repeat in a command printed here (connectionHint). */
export function exitReasonText(r: PipelineResult, connection = ''): string {
  if (r.refused) return `Nothing was sent:\n${r.refused.map((x) => `  - ${x}`).join('\n')}\n`;
  if (r.halted)
    return (
      `The run stopped: ${r.halted}\nWhat was sent is journalled: ` +
      (r.answerNotAsSent
        ? 'ask the service about the payout named above before running the same command again (the next row could be paid so).\n'
        : 'run the same command again to continue (it is safe).\n')
    );
  if (r.stopped)
    return (
      'Stopped on request: no payout was started after the signal; the rows not started are NOT_SENT in the results file. ' +
      'Run the same command again to continue (safe: nothing is paid twice).\n'
    );
  const s = r.summary;
  if (s.notCreated) {
    const bad = Object.entries(s.byStatus)
      .filter(([k]) => !isCreatedStatus(k))
      .map(([k, n]) => `${n} ${k}`)
      .join(', ');
    if (s.byStatus[ENGINE_STATUSES.ALREADY_PAID] === s.notCreated)
      return `${bad}: paid before at this account, nothing created by this run (see the results file); paying again takes new references.\n`;
    // 409 on every row not created: sent before at this account, maybe by another host; retrying would not help
    if ((s.byStatus[ENGINE_STATUSES.CONFLICT] ?? 0) + (s.byStatus[ENGINE_STATUSES.ALREADY_PAID] ?? 0) === s.notCreated)
      return (
        `${bad}: already paid at this account, or the reference was used with other content (409 IDEMPOTENCY_KEY_CONFLICT); ` +
        'nothing was sent twice. See the results file: paying again takes new references.\n'
      );
    if (r.kind === 'not-finished')
      return `${bad}: not due yet (pain.001 ReqdExctnDt): see the results file; run the same command again on or after that day.\n`;
    return (
      `${bad}: see the results file; fix rows and run \`payout-batch retry ${shellWord(r.resultsPath)}${connection}\`` +
      `${s.byStatus[ENGINE_STATUSES.UNKNOWN_OUTCOME] ? ' (rows of unknown outcome are settled with their original key first)' : ''}.\n`
    );
  }
  const o = s.outcomes;
  if (o.failed || o.waiting)
    return (
      `${plural(s.created, 'payout')} created; ${[o.failed ? `${o.failed} failed after creation` : '', o.waiting ? `${o.waiting} waiting for information` : ''].filter(Boolean).join(', ')}: ` +
      `see the results file and \`payout-batch status ${shellWord(r.resultsPath)}${connection}\`.\n`
    );
  return `All ${plural(s.created, 'payout')} created.\n`;
}

/** The bar's count and total, and ours; `eta`: seconds left (cli-progress: a number, or 'NULL'/'INF'). */
type BarValues = Pick<Params, 'value' | 'total'> & { failed: number; rps: string; eta: number | string };

/** Seconds as the bar shows them, at most 6 characters: 42s, 12m05s, 3h07m, 99h+; -- while unknown. */
export function etaText(eta: number | string): string {
  if (typeof eta !== 'number' || !Number.isFinite(eta) || eta < 0) return '--';
  const s = Math.round(eta);
  const two = (n: number) => String(n).padStart(2, '0');
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${two(s % 60)}s`;
  if (s < 100 * 3600) return `${Math.floor(s / 3600)}h${two(Math.floor((s % 3600) / 60))}m`;
  return '99h+';
}

/**
 * The progress line within `width`, the ETA always whole: the bar takes what the text leaves (at
 * most 40, none under 10). The last column stays free: a terminal that writes it may wrap.
 */
export function barLine(v: BarValues, width: number): string {
  const text = `${v.value}/${v.total} rows | failed ${v.failed} | ${v.rps} req/s | ETA ${etaText(v.eta)}`;
  const room = Math.min(40, width - 1 - text.length - 2);
  if (room < 10) return ` ${text}`.slice(0, Math.max(0, width - 1));
  const done = v.total > 0 ? Math.round((Math.min(v.value, v.total) / v.total) * room) : 0;
  return ` ${'\u2588'.repeat(done)}${'\u2591'.repeat(room - done)} ${text}`;
}

/**
 * Requests a second over the last 5 s, each counted when answered at the time it was sent, so the
 * figure never runs ahead of the client's pace (spec §8). Storage PUTs are not requests (spec §4.6).
 */
export function requestMeter(now: () => number = Date.now) {
  const WINDOW_MS = 5000;
  let starts: number[] = [];
  return {
    add(e: ClientEvent): void {
      if (e.type === 'response' && !e.storage) starts.push(now() - e.ms);
    },
    perSecond(): string {
      const from = now() - WINDOW_MS;
      starts = starts.filter((t) => t > from);
      return (starts.length / (WINDOW_MS / 1000)).toFixed(1);
    },
  };
}

export function preflightText(s: PreflightStep): string {
  if (s.step === 'wallets') return 'preflight: reading the wallets and the countries...';
  if (s.step === 'quotes') return `plan: quoting ${plural(s.rows, 'row')} (one quote per corridor, method and fee band)...`;
  return `preflight: reading the payment methods of ${plural(s.corridors, 'corridor')} (${s.done} done)...`;
}

/** What the CLI says at once when asked to stop. `inFlight`: rows under way, undefined before sending. */
export function stoppingText(inFlight: number | undefined): string {
  const again = 'press Ctrl-C again to stop at once';
  if (inFlight === undefined) return `payout-batch: stopping before sending: no payout will start; ${again}.\n`;
  return (
    `payout-batch: stopping: no new payout will start; waiting for ${plural(inFlight, 'row')} in flight to be answered ` +
    `and journalled; ${again} (safe: every request sent is journalled, and running the same command again resumes).\n`
  );
}

/** A bar on a terminal unless quiet, and log lines, from the engine's and the client's events; the preflight step rewritten in place. */
export function progressSink(io: CliIO, logger: Logger, batchLabel: () => string, quiet: boolean) {
  const onTerminal = !!io.stderr.isTTY && !quiet;
  const meter = requestMeter();
  let bar: cliProgress.SingleBar | undefined;
  let stepShown = false;
  let done = 0;
  let failed = 0;
  let pending = 0;
  // rows started and not done; undefined until sending begins
  let underWay: Set<number> | undefined;
  const clearStep = () => {
    if (stepShown) io.stderr.write('\r\x1b[K');
    stepShown = false;
  };
  const events: EngineEvents = new EventEmitter();
  events.on('event', (e: EngineEvent) => {
    if (e.type === 'preflight') {
      if (onTerminal) io.stderr.write(`\r\x1b[K${preflightText(e.step)}`);
      stepShown = onTerminal;
      return;
    }
    if (pending && onTerminal) {
      bar = new cliProgress.SingleBar(
        { stream: io.stderr, format: (_o, p, payload: BarValues) => barLine({ ...payload, ...p }, p.maxWidth), hideCursor: true },
        cliProgress.Presets.shades_classic,
      );
      bar.start(pending, 0, { failed: 0, rps: '0.0' });
    }
    pending = 0;
    underWay ??= new Set();
    if (e.type === 'row-start') underWay.add(e.rowNumber);
    else if (e.type === 'row-done') {
      underWay.delete(e.rowNumber);
      done++;
      if (!isCreatedStatus(e.outcome.status)) failed++;
      bar?.update(done, { failed, rps: meter.perSecond() });
      logRowDone(logger, e, { batchId: batchLabel() });
    } else if (e.type === 'halted') {
      logger.error({ batchId: batchLabel(), reason: e.reason }, 'run halted');
    } else if (e.type === 'settle-pass') {
      logger.info({ batchId: batchLabel(), rows: e.rows }, 'settling rows of unknown outcome with their original keys');
    }
  });
  return {
    events,
    onClientEvent: (e: ClientEvent) => meter.add(e),
    // the bar appears with the first row, after any confirmation question
    start(total: number) {
      clearStep();
      pending = total;
    },
    // Ctrl-C: the bar ends where it is and the answer is shown at once, quiet or not
    stopping() {
      this.stop();
      bar = undefined;
      pending = 0;
      io.stderr.write(stoppingText(underWay?.size));
      logger.info({ batchId: batchLabel(), rowsInFlight: underWay?.size ?? 0 }, 'stopping on request');
    },
    stop() {
      clearStep();
      bar?.stop();
    },
  };
}

/** The engine's errors as a message (with --json, also the one document on stdout) and an exit code; first: once rows may have been sent, never 2. */
export function handleEngineError(e: unknown, io: CliIO, json = false): ExitCode {
  const fail = (message: string, code: ExitCode) => saidFailed(io, json, message, code, (e as Error).message);
  if (e instanceof FailedAfterSending)
    return fail(
      `the run failed after sending began: ${e.message}\n` +
        `Part of the batch may have been sent; every request sent is in the journal (${e.journalPath}). ` +
        'Resume is safe: fix the cause and run the same command again (nothing is paid twice).',
      ExitCode.SERVICE_UNAVAILABLE,
    );
  if (e instanceof BatchRefused) return fail(`refused: ${e.message}`, ExitCode.REFUSED);
  // (the team ledger lost before sending began: nothing was sent, run it again)
  if (e instanceof TeamLedgerError) return fail(e.message, ExitCode.SERVICE_UNAVAILABLE);
  if (e instanceof InputError || e instanceof ResultsError || e instanceof BatchUnusable)
    return fail(`${e.message}${e instanceof InputError ? ` [${e.code}]` : ''}`, ExitCode.UNUSABLE_INPUT);
  throw e;
}

/** A plan as every --json gives it, in one key order; `plan` also names the corridors not enabled. */
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
  ...(p.screening ? { screening: screeningJson(p.screening) } : {}),
  warnings: p.warnings,
  requests: p.requests,
});

export const screeningJson = (s: Screened) => ({
  held: [...s.held].map(([row, h]) => ({ reference: h.reference, row, hits: h.hits })),
  screened: s.screened,
  lists: s.lists,
  ...(s.cleared.size ? { cleared: [...s.cleared].map(([row, cs]) => ({ row, clearances: cs.map((c) => c.id) })) } : {}),
  ...(s.refused.length ? { refused: s.refused } : {}),
});

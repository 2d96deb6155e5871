// `payout-batch status RESULTS`: refresh the payouts that are not final, forward only (follow-up/refresh-status.ts).
import { basename } from 'node:path';
import type { Argv } from 'yargs';
import { abortOn, defineCommand, flag, plural, printJson, type CliIO } from '../command.ts';
import { groupThousands } from '../../money.ts';
import { ExitCode, exitCodeOf } from '../exit-codes.ts';
import { defaultStateDir, quotaSentence } from '../../client/quota.ts';
import { refreshStatus, type StatusResult } from '../../follow-up/refresh-status.ts';
import { batchSwapsOf, swapText } from '../../follow-up/swap-views.ts';
import { STATUS_GROUP_WORDS, STATUS_GROUPS } from '../../engine/outcome.ts';
import { moneyLines, requestsUsedText } from '../render.ts';
import {
  connectionHint,
  resultsAndLedgers,
  resultsFileOptions,
  signalled,
  statusReportJson,
  statusReportOf,
  statusReportOptions,
  statusReportText,
  withConnection,
} from '../options.ts';
import { streamResults } from '../../results/read.ts';
import { attempt } from '../../files/attempt.ts';
import { shellWord } from '../../text.ts';

/** More moved rows than this are shown as the first MOVED_CONDENSED and a count. */
const MOVED_IN_FULL = 20;
const MOVED_CONDENSED = 10;

const builder = (y: Argv) =>
  statusReportOptions(
    resultsFileOptions(
      y,
      'A results file written by run, retry or watch, or the id of its batch (from any host of a team ledger)',
      "A state folder whose ledgers hold the batch's journal, to record the changes",
    ),
  ).option('json', flag('Print a machine-readable summary on stdout'));

const command = defineCommand(builder, (args, io: CliIO) =>
  withConnection(args, io, 'status', async (conn, logger) => {
    const { stateDirs, ledgers, results } = await resultsAndLedgers(args, io, conn);
    const r = await refreshStatus({
      client: conn.client,
      resultsFile: results,
      stateDirs,
      stateRoots: [defaultStateDir(io.env)],
      ledgers,
      logger,
      stop: abortOn(io.stopSignal),
      onPlan: ({ requests, usage }) => {
        const text = usage ? quotaSentence(requests, usage, 'this refresh') : `this refresh needs about ${plural(requests, 'request')}`;
        if (!args.json) io.stdout.write(`${text}.\n`);
        logger.info({ requests, used: usage?.used, quota: usage?.quota }, 'status refresh');
      },
    });
    io.note?.({ conn, byStatus: r.byStatus, money: r.money, reasons: r.halted ? [r.halted] : undefined });
    // (a batch that was not a pain.001 is reported under its journal's id)
    const statusReport = await statusReportOf(
      args,
      io,
      results,
      async () => (await batchSwapsOf((await streamResults(results)).rows, results, ledgers))?.batchId,
    );
    if (args.json) {
      printJson(io, {
        exitCode: exitCodeOf(r),
        finished: r.finished,
        results,
        rows: r.rows,
        asked: r.asked,
        final: r.final,
        requests: r.requests,
        outcomes: r.outcomes,
        money: r.money,
        ...(r.moneyProblems.length ? { moneyProblems: r.moneyProblems } : {}),
        waiting: r.waiting,
        failed: r.failed,
        refundsFound: r.refundsFound,
        moved: r.moved.map((c) => ({ row: c.rowNumber, payoutId: c.payoutId, from: c.from, to: c.to, statusDetail: c.statusDetail })),
        failures: r.failures,
        halted: r.halted,
        byStatus: r.byStatus,
        ...statusReportJson(statusReport),
        ...(r.swaps.length ? { swaps: r.swaps, swapsMoved: r.swapsMoved, swapFailures: r.swapFailures } : {}),
      });
    } else {
      // the rows first, condensed when many, the summary last: on the screen when the command ends
      const l: string[] = [];
      const shown = r.moved.length > MOVED_IN_FULL ? r.moved.slice(0, MOVED_CONDENSED) : r.moved;
      for (const c of shown) l.push(`  ${rowText(c)}: ${c.from} -> ${c.to}${c.statusDetail ? ` (${c.statusDetail})` : ''}`);
      if (shown.length < r.moved.length)
        l.push(`  … ${r.moved.length - shown.length} more moved forward (every row is in ${basename(results)}; --json lists them)`);
      for (const f of r.failures) l.push(`  row ${f.rowNumber}: ${f.code}: ${f.message}${requestIdText(f)}`);
      l.push(
        ...r.swaps.map((s) => `  ${swapText(s)}`),
        ...r.swapsMoved.map((m) => `  swap to ${m.currency} ${m.id}: ${m.from} -> ${m.to}`),
        ...r.swapFailures.map((f) => `  swap to ${f.currency} ${f.id}: ${f.code}: ${f.message}${requestIdText(f)}`),
      );
      l.push(`Asked about ${plural(r.asked, 'payout')} (${r.final} already final, not asked); ${r.moved.length} moved forward.`);
      l.push(`Used ${requestsUsedText(r.requests)}.`);
      l.push(
        `Now: ${Object.entries(r.byStatus)
          .map(([s, n]) => `${n} ${s}`)
          .join(', ')}`,
      );
      l.push(...outcomeLines(r, results, connectionHint(args)));
      if (r.halted) l.push(`Stopped: ${r.halted}. What was learnt is written; run it again later.`);
      if (statusReport) l.push(`Status report: ${statusReportText(statusReport)}`);
      io.stdout.write(l.join('\n') + '\n');
    }
    return exitCodeOf(r);
  }),
);
export default signalled('status', command);

const rowText = (r: { rowNumber: number; reference?: string }) => `row ${r.rowNumber}${r.reference ? ` ${r.reference}` : ''}`;
const requestIdText = (f: { requestId?: string }) => (f.requestId ? ` (request id ${f.requestId})` : '');

function outcomeLines(r: StatusResult, results: string, connection: string): string[] {
  const l: string[] = ['Outcome'];
  for (const g of STATUS_GROUPS) if (r.groups[g]) l.push(`  ${String(r.groups[g]).padStart(6)}  ${STATUS_GROUP_WORDS[g].text}`);
  for (const w of r.waiting)
    l.push(
      `  ${rowText(w)} waits for us: ${requestsText(w.informationRequests)}; ` +
        `answer with: payout-batch attach ${shellWord(w.payoutId)}${connection} FILE...`,
    );
  for (const f of r.failed) l.push(failedLine(f, results, connection));
  l.push(...moneyLines(r.money));
  for (const p of r.moneyProblems) l.push(`  ! ${p}`);
  l.push(
    r.finished
      ? 'Finished: every row is paid.'
      : r.kind === 'not-finished'
        ? `Not finished: ${r.groups.inProgress} still in progress${r.groups.notSent ? `, ${r.groups.notSent} not due yet` : ''}; run status again later (exit ${ExitCode.NOT_FINISHED}).`
        : 'Not finished: some rows need you (failed, waiting for information, or no payout): see above and the results file.',
  );
  return l;
}

function requestsText(json: string | undefined): string {
  const list = attempt(() => JSON.parse(json ?? '[]') as { title?: string; type?: string }[]); // (not JSON: shown as it is)
  if (Array.isArray(list) && list.length) return list.map((x) => `${x.title ?? 'request'}${x.type ? ` (${x.type})` : ''}`).join(', ');
  return json ? json : 'information requested';
}

function failedLine(f: StatusResult['failed'][number], results: string, connection: string): string {
  const refund =
    f.refunded !== undefined ? `refunded ${f.currency ? `${f.currency} ` : ''}${groupThousands(f.refunded)}` : 'refund not seen yet';
  const next =
    f.refunded !== undefined
      ? `pay it again with: payout-batch retry ${shellWord(results)} --resend-failed${connection}`
      : "not in the wallet's transactions yet: run status again later";
  return `  ${rowText(f)} ${f.status}: ${refund} — ${f.reason ?? 'no reason given by the service'}; ${next}`;
}

// `payout-batch reconcile RESULTS` (follow-up/reconciliation.ts): writes the reconciliation and its own HTML report, never the run's.
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { abortOn, defineCommand, flag, plural, printJson, str, type CliIO } from '../command.ts';
import { groupThousands } from '../../money.ts';
import { exitCodeOf } from '../exit-codes.ts';
import { reconcile, type ReconcileResult } from '../../follow-up/reconciliation.ts';
import type { ForeignTransaction } from '../../follow-up/tie-out.ts';
import { writeResultsReport } from '../../report/write-report.ts';
import { reconciliationPathFor } from '../../engine/money-totals.ts';
import { requestsUsedText } from '../render.ts';
import { reportOption, resultsAndLedgers, resultsFileOptions, reportOrNote, withConnection } from '../options.ts';

const builder = (y: Argv) =>
  reportOption(
    resultsFileOptions(
      y,
      'A results file written by run, retry or watch (and refreshed by status), or the id of its batch',
      "A state folder whose ledgers hold the account's batches",
    ),
  )
    .option(
      'since',
      str(
        "Start of the period whose debits are explained (ISO 8601 with its zone, or a date: the start of that day, UTC; default: the batch's first movement)",
      ),
    )
    .option('until', str('End of that period (ISO 8601 with its zone, or a date: the end of that day, UTC; default: now)'))
    .option('statement', str("Also write the camt.053.001.02 statement of the batch's wallets for the period to FILE"))
    .option('json', flag('Print the reconciliation as JSON (money as decimal strings)'));

export default defineCommand(builder, (args, io: CliIO) =>
  withConnection(args, io, 'reconcile', async (conn, logger) => {
    const { ledgers, results } = await resultsAndLedgers(args, io, conn);
    const r = await reconcile({
      client: conn.client,
      resultsFile: results,
      since: args.since,
      until: args.until,
      statement: args.statement && resolve(io.cwd, args.statement),
      ledgers,
      logger,
      stop: abortOn(io.stopSignal),
      onPlan: ({ payouts }) => {
        if (!args.json) io.stdout.write(`Reading the status of ${plural(payouts, 'payout')} and the wallet transactions (100 a page).\n`);
      },
    });
    const report =
      args.report && r.report
        ? await reportOrNote(io, () =>
            writeResultsReport(results, { environment: conn.environment.name, out: reconciliationPathFor(results, 'html'), ledgers }),
          )
        : undefined;
    if (args.json) printJson(io, { ...jsonOf(results, r), ...(report ? { report } : {}) });
    else io.stdout.write(textOf(r) + '\n' + (report ? `Report: ${report}\n` : ''));
    return exitCodeOf(r);
  }),
);

const usageText = (r: ReconcileResult): string =>
  requestsUsedText(r.requests) +
  (r.usage
    ? `; this key has used ${r.usage.used.toLocaleString('en-US')} of ${r.usage.quota.toLocaleString('en-US')} this month (${r.usage.month}, UTC), as counted here`
    : '');

function textOf(r: ReconcileResult): string {
  if (!r.report) return `Reconciliation stopped: ${r.halted}. Nothing was written; run it again later.\nUsed ${usageText(r)}.`;
  const rep = r.report;
  const l = [
    'Reconciliation',
    `  ${plural(rep.counts.created, 'payout')} created of ${plural(rep.counts.rows, 'row')}: ${rep.counts.tiedOut} tie out (${rep.counts.failedRefunded} failed and refunded` +
      (rep.counts.earlierRefunded ? `; ${plural(rep.counts.earlierRefunded, 'earlier payout')} refunded and sent again` : '') +
      ').',
  ];
  for (const t of rep.totals)
    l.push(
      `  ${t.currency}: debited ${groupThousands(t.debited)}, refunded ${groupThousands(t.refunded)}${t.swapped ? `, swap ${groupThousands(t.swapped)}` : ''}, net ${groupThousands(t.net)}; the results say ${groupThousands(t.expectedNet)}: ${t.ok ? 'ties out' : 'DOES NOT tie out'}` +
        (t.walletIds.length ? ` (wallet ${t.walletIds.join(', ')})` : ''),
    );
  for (const w of rep.swaps)
    l.push(
      `  Swap ${w.reference}${w.id ? ` (${w.id}, ${w.status})` : ''}: debit ${w.debit} ${w.sourceCurrency ?? ''}, credit ${w.credit} ${w.destinationCurrency ?? ''}` +
        `${w.exchangeRate ? ` at ${w.exchangeRate}` : ''}: ${w.ok ? 'ties out' : 'DOES NOT tie out'}`,
    );
  const period = `${rep.period.from ?? 'the start of the listing'} to ${rep.period.to ?? 'now'}`;
  l.push(
    `  Period checked for other debits: ${period}${rep.period.by === 'listing order' ? ' (by the listing order: no dates)' : ''}; ${plural(rep.unexplained.length, 'unexplained debit')}, ${plural(rep.otherCredits.length, 'other credit')}.`,
    ...explainedLine(rep.explained),
  );
  if (r.superseded)
    l.push(
      `  The ledger knows a later payout of ${plural(r.superseded.rows.length, 'row')} (${r.superseded.rows.join(', ')}) than this file (sent again since): reconciled with their latest state; ` +
        (r.superseded.latest ? `the latest results file is ${r.superseded.latest}` : 'the latest results file is not beside this one'),
    );
  for (const p of rep.problems) l.push(`  ! ${p}`);
  const others = rep.others ?? [];
  if (others.length)
    l.push(
      `  Not this batch's: ${plural(others.length, 'debit')} of the period that no row of it, no batch of this ledger and no swap explains ` +
        "(another state folder's, ledger's or watch folder's; --since and --until narrow the period):",
      ...others.slice(0, SHOWN).map((p) => `  - ${p}`),
    );
  if (others.length > SHOWN) l.push(`  - … and ${others.length - SHOWN} more: ${r.reconciliationPath}`);
  l.push(
    `  Used ${usageText(r)}.`,
    `  Reconciliation file: ${r.reconciliationPath}`,
    ...(r.statement
      ? [
          `  Statement: ${r.statement.path} (camt.053.001.02: ${plural(r.statement.statements, 'wallet')}, ${r.statement.entries} ${r.statement.entries === 1 ? 'entry' : 'entries'})`,
        ]
      : []),
    !rep.ok
      ? `Does not tie out: ${plural(rep.problems.length, 'problem')} above.`
      : others.length
        ? `This batch ties out; ${plural(others.length, 'debit')} of the period ${others.length === 1 ? 'is' : 'are'} not this batch's (above).`
        : 'Everything ties out.',
  );
  return l.join('\n');
}

/** The unexplained debits shown (all of them in the reconciliation file). */
const SHOWN = 5;

function explainedLine(explained: ForeignTransaction[]): string[] {
  const by = new Map<string, number>();
  for (const f of explained) by.set(f.explainedBy!, (by.get(f.explainedBy!) ?? 0) + 1);
  const named = [...by].slice(0, SHOWN).map(([who, n]) => `${who} (${n})`);
  if (by.size > SHOWN) named.push(`${by.size - SHOWN} more in the reconciliation file`);
  return explained.length ? [`  ${plural(explained.length, 'debit')} explained elsewhere: ${named.join('; ')}`] : [];
}

function jsonOf(results: string, r: ReconcileResult) {
  const { ok, swaps, ...report } = r.report ?? { ok: false, swaps: [] };
  return {
    exitCode: exitCodeOf(r),
    results,
    tiesOut: ok,
    reconciliationFile: r.reconciliationPath,
    statement: r.statement,
    halted: r.halted,
    superseded: r.superseded,
    requests: r.requests,
    listing: r.listing,
    quota: r.usage ? { used: r.usage.used, quota: r.usage.quota, month: r.usage.month } : undefined,
    ...report,
    ...(swaps.length ? { swaps } : {}),
  };
}

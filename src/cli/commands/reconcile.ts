// `payout-batch reconcile RESULTS`: tie a results file to the wallet transactions and the payouts'
// status; print the reconciliation, write it beside the results, and the results' HTML report with
// the tie-out per wallet (src/report; --no-report skips it). A thin layer over src/ops/reconcile.ts.
import type { Argv } from 'yargs';
import { abortOn, defineCommand, flag, plural, printJson, type CliIO } from '../command.ts';
import { reconcile, type ReconcileResult } from '../../ops/reconcile.ts';
import { writeResultsReport } from '../../report/index.ts';
import { reportOption, resultsFileOptions, reportOrNote, withConnection, type ArgsOf } from '../options.ts';

const builder = (y: Argv) =>
  reportOption(resultsFileOptions(y, 'A results file written by run, retry or watch (and refreshed by status)'))
    .option('since', {
      type: 'string',
      describe: "Start of the period whose debits must all be explained (ISO 8601; default: the batch's first movement)",
    })
    .option('until', { type: 'string', describe: "End of that period (ISO 8601; default: the batch's last movement)" })
    .option('json', flag('Print the reconciliation as JSON (money as decimal strings)'));
type ReconcileArgs = ArgsOf<typeof builder>;

export default defineCommand<ReconcileArgs>({
  builder,
  run: (args, io: CliIO) =>
    withConnection(args, io, 'reconcile', async (conn, logger) => {
      const r = await reconcile({
        client: conn.client,
        resultsFile: args.results,
        since: args.since,
        until: args.until,
        logger,
        stop: abortOn(io.stopSignal),
        onPlan: ({ payouts }) => {
          if (!args.json) io.stdout.write(`Reading the status of ${plural(payouts, 'payout')} and the wallet transactions (100 a page).\n`);
        },
      });
      // The results' report, now with the tie-out (it replaces the one `run` wrote).
      const report =
        args.report && r.report
          ? await reportOrNote(io, () =>
              // (the tie-out it reads back is the one reconcile has just written beside the results)
              writeResultsReport(args.results, { environment: conn.environment.name }),
            )
          : undefined;
      if (args.json) printJson(io, { ...jsonOf(args.results, r), ...(report ? { report } : {}) });
      else io.stdout.write(textOf(r) + '\n' + (report ? `Report: ${report}\n` : ''));
      return r.exitCode;
    }),
});

const usageText = (r: ReconcileResult): string =>
  `${plural(r.requests.total, 'request')} (${plural(r.requests.payoutPages, 'payout page')}, ${r.requests.getPayout} payout status, ${plural(r.requests.transactionPages, 'transaction page')})` +
  (r.usage
    ? `; this key has used ${r.usage.used.toLocaleString('en-US')} of ${r.usage.quota.toLocaleString('en-US')} this month (${r.usage.month}, UTC), as counted here`
    : '');

function textOf(r: ReconcileResult): string {
  if (!r.report) return `Reconciliation stopped: ${r.halted}. Nothing was written; run it again later.\nUsed ${usageText(r)}.`;
  const rep = r.report;
  const l = [
    'Reconciliation',
    `  ${rep.counts.created} payouts created of ${rep.counts.rows} rows: ${rep.counts.tiedOut} tie out (${rep.counts.failedRefunded} failed and refunded` +
      (rep.counts.earlierRefunded ? `; ${plural(rep.counts.earlierRefunded, 'earlier payout')} refunded and sent again` : '') +
      ').',
  ];
  for (const t of rep.totals)
    l.push(
      `  ${t.currency}: debited ${t.debited}, refunded ${t.refunded}, net ${t.net}; the results say ${t.expectedNet}: ${t.ok ? 'ties out' : 'DOES NOT tie out'}` +
        (t.walletIds.length ? ` (wallet ${t.walletIds.join(', ')})` : ''),
    );
  const period = rep.period.from || rep.period.to ? `${rep.period.from ?? '…'} to ${rep.period.to ?? '…'}` : 'the whole listing';
  l.push(
    `  Period checked for other debits: ${period}${rep.period.by === 'listing order' ? ' (by the listing order: no dates)' : ''}; ${rep.notFromBatch.length} not from this batch, ${plural(rep.otherCredits.length, 'other credit')}.`,
  );
  for (const f of rep.notFromBatch)
    l.push(
      `    not from this batch: ${f.amount} ${f.currency ?? ''} reference ${f.reference || '(none)'}${f.createdAt ? ` at ${f.createdAt}` : ''}`,
    );
  for (const p of rep.problems.filter((p) => !/ is not from this batch$/.test(p))) l.push(`  ! ${p}`);
  if (r.listing.ended === 'repeated page')
    l.push('  ! the transactions route gave the same page twice (it may ignore page): the listing read may be incomplete.');
  l.push(
    `  Used ${usageText(r)}.`,
    `  Reconciliation file: ${r.reconciliationPath}`,
    rep.ok ? 'Everything ties out.' : `Does not tie out: ${plural(rep.problems.length, 'problem')} above.`,
  );
  return l.join('\n');
}

function jsonOf(results: string, r: ReconcileResult) {
  return {
    exitCode: r.exitCode,
    results,
    tiesOut: r.report?.ok ?? false,
    reconciliationFile: r.reconciliationPath,
    halted: r.halted,
    requests: r.requests,
    listing: r.listing,
    quota: r.usage ? { used: r.usage.used, quota: r.usage.quota, month: r.usage.month } : undefined,
    ...(r.report
      ? {
          counts: r.report.counts,
          totals: r.report.totals,
          period: r.report.period,
          problems: r.report.problems,
          notFromBatch: r.report.notFromBatch,
          otherCredits: r.report.otherCredits,
          rows: r.report.rows,
        }
      : {}),
  };
}

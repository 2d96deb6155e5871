// `payout-batch status RESULTS`: refresh the payouts of a results file that are not final and
// rewrite it (forward only). A thin layer over src/ops/status.ts.
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { abortOn, defineCommand, type CliIO } from '../command.ts';
import { ExitCode } from '../exit-codes.ts';
import { defaultStateDir, quotaSentence } from '../../client/quota.ts';
import { ResultsError } from '../../results/errors.ts';
import { refreshStatus } from '../../ops/status.ts';
import { connectionOptions, makeLogger, openConnection, type ConnectionArgs } from './run.ts';

interface StatusArgs extends ConnectionArgs {
  results: string;
  'state-dir'?: string[];
  json: boolean;
}

export default defineCommand<StatusArgs>({
  builder: (y: Argv) =>
    connectionOptions(y)
      .positional('results', { type: 'string', describe: 'A results file written by run, retry or watch' })
      .option('state-dir', {
        type: 'string',
        array: true,
        describe:
          "A state folder (or a folder of older journals) holding the batch's journal, to record the changes (default: the per-user one)",
      })
      .option('json', { type: 'boolean', default: false, describe: 'Print a machine-readable summary on stdout' }) as never,
  run: async (args, io: CliIO) => {
    const logger = makeLogger(args, io, 'status');
    const conn = await openConnection(args, io, logger);
    try {
      const r = await refreshStatus({
        client: conn.client,
        resultsFile: args.results,
        // (and the ledgers of the per-user state folder: apply.ts)
        stateDirs: (args['state-dir'] ?? []).map((d) => resolve(io.cwd, String(d))),
        stateRoots: [defaultStateDir(io.env)],
        logger,
        stop: abortOn(io.stopSignal),
        onPlan: ({ toRefresh, usage }) => {
          const text = usage
            ? quotaSentence(toRefresh, usage).replace(/this batch needs( about)?/, 'this refresh needs')
            : `this refresh needs ${toRefresh} requests`;
          if (!args.json) io.stdout.write(`${text}.\n`);
          logger.info({ toRefresh, used: usage?.used, quota: usage?.quota }, 'status refresh');
        },
      });
      if (args.json) {
        io.stdout.write(
          JSON.stringify(
            {
              exitCode: r.exitCode,
              results: args.results,
              rows: r.rows,
              asked: r.asked,
              final: r.final,
              moved: r.apply.applied.map((c) => ({
                row: c.rowNumber,
                payoutId: c.payoutId,
                from: c.from,
                to: c.to,
                statusDetail: c.statusDetail,
              })),
              failures: r.failures,
              halted: r.halted,
              byStatus: r.byStatus,
            },
            null,
            2,
          ) + '\n',
        );
      } else {
        const l: string[] = [];
        l.push(
          `Asked about ${r.asked} payout${r.asked === 1 ? '' : 's'} (${r.final} already final, not asked); ${r.apply.applied.length} moved forward.`,
        );
        for (const c of r.apply.applied)
          l.push(
            `  row ${c.rowNumber}${c.reference ? ` ${c.reference}` : ''}: ${c.from} -> ${c.to}${c.statusDetail ? ` (${c.statusDetail})` : ''}`,
          );
        for (const f of r.failures)
          l.push(`  row ${f.rowNumber}: ${f.code}: ${f.message}${f.requestId ? ` (request id ${f.requestId})` : ''}`);
        l.push(
          `Now: ${Object.entries(r.byStatus)
            .map(([s, n]) => `${n} ${s}`)
            .join(', ')}`,
        );
        if (r.halted) l.push(`Stopped: ${r.halted}. What was learnt is written; run it again later.`);
        io.stdout.write(l.join('\n') + '\n');
      }
      return r.exitCode;
    } catch (e) {
      if (e instanceof ResultsError) {
        io.stderr.write(`payout-batch: ${e.message}\n`);
        return ExitCode.UNUSABLE_INPUT;
      }
      throw e;
    } finally {
      await conn.close().catch(() => undefined);
    }
  },
});

// `payout-batch attach PAYOUT_ID FILE...`: upload documents and attach them to a payout, within
// the status rule and the 5-document cap. A thin layer over src/ops/attach.ts.
import type { Argv } from 'yargs';
import { defineCommand, flag, plural, printJson, type CliIO } from '../command.ts';
import { ExitCode } from '../exit-codes.ts';
import { PayoutApiError } from '../../client/errors.ts';
import { AttachRefused, attachDocuments } from '../../ops/attach.ts';
import { connectionOptions, withConnection, type ArgsOf } from '../options.ts';

const builder = (y: Argv) =>
  connectionOptions(y)
    .positional('payoutId', { type: 'string', demandOption: true, describe: 'The payout id (payoutId column of the results file)' })
    .positional('files', { type: 'string', array: true, demandOption: true, describe: 'PDF, JPEG or PNG files, at most 10 MB each' })
    .option('merge', flag('Merge all the files into one PDF first (one document of the 5 allowed)'))
    .option('force', flag("Send even when the payout's status forbids documents, to see the service's answer"))
    .option('json', flag('Print a machine-readable result on stdout'));
type AttachArgs = ArgsOf<typeof builder>;

export default defineCommand<AttachArgs>({
  builder,
  run: (args, io: CliIO) =>
    withConnection(args, io, 'attach', async (conn, logger) => {
      try {
        const r = await attachDocuments({
          client: conn.client,
          payoutId: args.payoutId,
          files: args.files.map(String),
          merge: args.merge,
          force: args.force,
          logger,
        });
        if (args.json) {
          printJson(io, {
            exitCode: 0,
            payoutId: r.payout.id,
            status: r.payout.status,
            uploaded: r.uploaded,
            totalDocuments: r.response.totalDocuments,
            merged: r.merged,
          });
        } else {
          io.stdout.write(
            `Attached ${plural(r.uploaded.length, 'document')}${r.merged ? ` (${args.files.length} files merged into one PDF)` : ''} ` +
              `to ${r.payout.payoutRef} (${r.payout.status}); it now has ${r.response.totalDocuments} of 5.\n` +
              (r.answers.length
                ? `They answer the request${r.answers.length === 1 ? '' : 's'}: ${r.answers.join('; ')}. Run \`payout-batch status\` later to see the review.\n`
                : ''),
          );
        }
        return ExitCode.OK;
      } catch (e) {
        if (e instanceof AttachRefused) {
          io.stderr.write(`payout-batch: attach refused: ${e.message}\n`);
          return e.exitCode;
        }
        if (e instanceof PayoutApiError) {
          // The service's answer, plainly: its code, its message, the request id to quote.
          io.stderr.write(
            `payout-batch: the service refused: ${e.code ?? `HTTP ${e.status ?? '?'}`}: ${e.message} (request id ${e.requestId})\n`,
          );
          return e.serviceTrouble ? ExitCode.SERVICE_UNAVAILABLE : ExitCode.ROWS_FAILED;
        }
        throw e;
      }
    }),
});

// `payout-batch attach PAYOUT FILE...`: upload documents to a payout (follow-up/attach-documents.ts).
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { defineCommand, flag, plural, printJson, saidFailed, serviceAnswer, str, strs, type CliIO } from '../command.ts';
import { ExitCode } from '../exit-codes.ts';
import { PayoutApiError } from '../../client/errors.ts';
import { LockBusy } from '../../files/lock.ts';
import { AttachRefused, attachDocuments, payoutIdOf } from '../../follow-up/attach-documents.ts';
import type { RowChange } from '../../follow-up/apply-status.ts';
import { connectionOptions, stateLedgers, withConnection } from '../options.ts';
import { shellWord } from '../../text.ts';

const builder = (y: Argv) =>
  connectionOptions(y)
    .positional('payout', { ...str("The payout: its id, its payoutRef, or its row's reference"), demandOption: true })
    .positional('files', { ...strs('PDF, JPEG or PNG files, at most 10 MB each'), demandOption: true })
    .option('results', str('The results file whose row names the payout (by payoutId, payoutRef or reference)'))
    .option('merge', flag('Merge all the files into one PDF first (one document of the 5 allowed)'))
    .option('state-dir', strs('State folders whose journals may hold the payout, as given to `run` (default: the per-user one)'))
    .option('force', flag("Send even when the payout's status forbids documents, to see the service's answer"))
    .option('json', flag('Print a machine-readable result on stdout'));

const alreadyText = (a: { file: string; documentUrl: string; uploadedAt?: string }) =>
  `${a.file} is attached already (uploaded ${a.uploadedAt ?? 'before'}, ${a.documentUrl}); nothing was sent for it.\n`;
const changeText = (c: RowChange) => `row ${c.rowNumber} is ${c.to}${c.statusDetail ? ` (${c.statusDetail})` : ''}`;

export default defineCommand(builder, (args, io: CliIO) =>
  withConnection(args, io, 'attach', async (conn, logger) => {
    try {
      const { ledgers } = stateLedgers(args, io, conn);
      const found = await payoutIdOf(args.payout, { ...(args.results ? { resultsFile: resolve(io.cwd, args.results) } : {}), ledgers });
      const r = await attachDocuments({
        client: conn.client,
        ...found,
        ledgers,
        files: args.files.map((f) => resolve(io.cwd, String(f))),
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
          alreadyAttached: r.already,
          stillAsks: r.stillAsks,
          totalDocuments: r.totalDocuments,
          merged: r.merged > 0,
          ...(r.results ? { resultsFile: found.resultsFile, rowsUpdated: r.results.applied.length } : {}),
        });
      } else {
        io.stdout.write(
          r.already.map(alreadyText).join('') +
            (r.uploaded.length
              ? `Attached ${plural(r.uploaded.length, 'document')}${r.merged ? ` (${r.merged} files merged into one PDF)` : ''} ` +
                `to ${r.payout.payoutRef} (${r.payout.status}); it now has ${r.totalDocuments} of 5.\n`
              : `${r.payout.payoutRef} (${r.payout.status}) has ${r.totalDocuments} of 5 documents.\n`) +
            (r.stillAsks.length ? `It still asks for ${r.stillAsks.join('; ')}: attach a file it does not hold yet.\n` : '') +
            (r.results?.applied.length ? `${found.resultsFile} updated: ${r.results.applied.map(changeText).join('; ')}.\n` : '') +
            (r.answers.length
              ? `They answer the request${r.answers.length === 1 ? '' : 's'}: ${r.answers.join('; ')}. ` +
                (args.results
                  ? `See the review later with \`payout-batch status ${shellWord(args.results)}\`.\n`
                  : 'See the review later with `payout-batch status` on its results file.\n')
              : ''),
        );
      }
      return ExitCode.OK;
    } catch (e) {
      return attachFailed(e, io, args.json);
    }
  }),
);

function attachFailed(e: unknown, io: CliIO, json: boolean): ExitCode {
  const fail = (message: string, code: ExitCode) => saidFailed(io, json, message, code);
  if (e instanceof AttachRefused)
    return fail(
      `attach refused: ${e.message}`,
      e.code === 'BAD_FILE' || e.code === 'PAYOUT_NOT_FOUND' ? ExitCode.UNUSABLE_INPUT : ExitCode.REFUSED,
    );
  if (e instanceof LockBusy)
    return fail(
      `attach refused: another attach of this payout is running (${e.message}). Nothing was sent: run again when it has ended.`,
      ExitCode.REFUSED,
    );
  if (e instanceof PayoutApiError)
    return fail(`the service refused: ${serviceAnswer(e)}`, e.serviceTrouble ? ExitCode.SERVICE_UNAVAILABLE : ExitCode.ROWS_FAILED);
  throw e;
}

// `payout-batch retry RESULTS`: the rows with no payout yet (engine/retry-batch.ts), sent as `run` sends (cli/send-batch.ts).
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { defineCommand, flag, plural, str } from '../command.ts';
import { duplicateFlags, outputFolderChecked, sendOptions, signalled } from '../options.ts';
import { accountPolicyOf, refused, sendBatch } from '../send-batch.ts';
import { policyGuard } from '../../approvals/account-policy.ts';
import { prepareRetry } from '../../engine/retry-batch.ts';
import { shellWord } from '../../text.ts';
import type { KeyProof } from '../../engine/spent.ts';

const builder = (y: Argv) =>
  sendOptions(y)
    .positional('results', { ...str('A results file of run or retry (it may be edited), or its batch id'), demandOption: true })
    .option('out', str('New results file (default <results>.retry-N beside it)'))
    .option('resend-failed', flag('Send again, under a new attempt, rows whose payout FAILED or was REJECTED, once the refund shows'));

const command = defineCommand(builder, async (args, io) => {
  outputFolderChecked('--out', args.out, io);
  const duplicates = duplicateFlags(args);
  // a retry carries no plan: under a policy it goes only when it needs no approvals, else exit 3
  const policy = await accountPolicyOf(args, io);
  if (typeof policy === 'string') return refused(io, args.json, policy);
  return sendBatch(
    args,
    io,
    'retry',
    (o) =>
      prepareRetry({
        ...o,
        resultsFile: args.results,
        here: io.cwd,
        resultsPath: args.out && resolve(io.cwd, args.out),
        resendFailed: args['resend-failed'],
        ...duplicates,
      }),
    {
      policy,
      guard: policy && policyGuard(policy),
      named: args.results,
      after: (r) =>
        r.keyProofs.map(proofText).join('') +
        (args['resend-failed'] || r.resent
          ? `Sent again after a failed, refunded payout: ${plural(r.resent, 'row')}` +
            `${args['resend-failed'] ? '' : ', finishing what a retry --resend-failed began'}.\n` +
            r.notResent.map((n) => `  row ${n.rowNumber} ${n.reference}: ${n.reason}\n`).join('') +
            (r.resent || r.notResent.length
              ? ''
              : `  no row of ${r.resultsPath} is known FAILED or REJECTED yet: run payout-batch status ${shellWord(r.resultsPath)} first.\n`)
          : ''),
    },
  );
});
export default signalled('retry', command);

/** What a refused row's key showed (engine/spent.ts). */
function proofText(p: KeyProof): string {
  const steps = p.steps.map((s) =>
    'sentBy' in s
      ? `not sent: refused under the API key of fingerprint ${s.sentBy}, not this one; retry with that key`
      : 'read' in s
        ? `${s.read} read: cause ${s.causeGone ? 'gone' : 'still there'}`
        : `${s.send === 'now' ? 'row as it is now' : 'refused body'}: ${s.answer}${s.code ? ` ${s.code}` : ''}`,
  );
  const verdict = p.verdict === 'spent' ? `key spent, attempt ${p.attempt + 1} sent` : p.verdict;
  return `  row ${p.rowNumber} ${p.reference}: attempt ${p.attempt}'s key again (${steps.join('; ')}): ${verdict}\n`;
}

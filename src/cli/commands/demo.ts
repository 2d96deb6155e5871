// `payout-batch demo` (npm run demo): the embedded sandbox and one payout, end to end.
import { defineCommand } from '../command.ts';
import { ExitCode } from '../exit-codes.ts';
import { runTour } from '../../demo/tour.ts';

export default defineCommand<{ json: boolean }>({
  command: 'demo',
  describe: 'Rehearse on the embedded sandbox: wallets, pairs, methods, a quote and one payout with its invoice',
  builder: (y) => y.option('json', { type: 'boolean', default: false, describe: 'Print the outcome as JSON' }) as never,
  run: async (args, io) => {
    const outcome = await runTour((line) => {
      if (!args.json) io.stdout.write(`${line}\n`);
    });
    if (args.json) io.stdout.write(`${JSON.stringify(outcome)}\n`);
    else io.stdout.write('\nDone: no money moved, everything above happened on this machine.\n');
    return outcome.replayedSameId && outcome.balanceMatches ? ExitCode.OK : ExitCode.ROWS_FAILED;
  },
});

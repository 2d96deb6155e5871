#!/usr/bin/env node
// The `payout-batch` executable. tsx runs the TypeScript sources directly on Node 20, so the bin
// works from a fresh clone after `npm install`, with no build step to forget.
import { register } from 'tsx/esm/api';

register();
// `payout-batch validate big.csv | head`: a closed pipe ends the output quietly, not with an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
}
const { main } = await import('./main.ts');
process.exitCode = await main(process.argv.slice(2));

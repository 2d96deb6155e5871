#!/usr/bin/env node
// The `payout-batch` executable (bundled into dist/bin.js). `validate big.csv | head`: a closed
// pipe ends the output quietly, not with an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
}
const { main } = await import('./main.ts');
process.exitCode = await main(process.argv.slice(2));

#!/usr/bin/env node
// The `payout-batch` executable, bundled by esbuild into dist/bin.js at install (npm's
// `prepare`): one file per command and shared chunks, so a command loads only its own code.
// `payout-batch validate big.csv | head`: a closed pipe ends the output quietly, not with an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
}
const { main } = await import('./main.ts');
process.exitCode = await main(process.argv.slice(2));

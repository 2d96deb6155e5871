#!/usr/bin/env node
// The `payout-batch` executable. tsx runs the TypeScript sources directly on Node 20, so the bin
// works from a fresh clone after `npm install`, with no build step to forget.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./main.ts');
process.exitCode = await main(process.argv.slice(2));

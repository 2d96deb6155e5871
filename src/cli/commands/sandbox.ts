// `payout-batch sandbox`: the local simulator of the payout service (src/sandbox) until Ctrl+C.
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { CommandError, defineCommand, flag, num, parseShapes, saying, SHAPES_VARIABLE, str, strs, UsageError } from '../command.ts';
import { ExitCode } from '../exit-codes.ts';
import { readSeedFile, SeedError, startSandbox, type SandboxOptions } from '../../sandbox/start-sandbox.ts';
import { autoAdvanceFlag } from '../local-sandbox.ts';

/** "5", or "off" for no limit. */
function limitFlag(name: string, value: string): number | null {
  if (/^(off|none|null)$/i.test(value)) return null;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} takes a whole number above 0, or "off" (got "${value}")`);
  return n;
}

/** "MIN-MAX" or "MS", in milliseconds. */
function latencyFlag(value: string): [number, number] {
  const m = /^(\d+)(?:-(\d+))?$/.exec(value.trim());
  const min = Number(m?.[1]);
  const max = m?.[2] === undefined ? min : Number(m[2]);
  if (!m || min > max) throw new UsageError(`--latency takes MIN-MAX in milliseconds, e.g. 50-300 (got "${value}")`);
  return [min, max];
}

const builder = (y: Argv) =>
  y
    .option('port', { type: 'number', default: 4010, describe: 'Port on 127.0.0.1; 0 picks a free one' })
    .option('seed', str('Seed JSON file: businesses, keys, wallets, pairs, countries (default: the shipped seed)'))
    .option('rate-limit', { type: 'string', default: '5', describe: 'Requests per rolling second per key, or "off"' })
    .option('quota', { type: 'string', default: '10000', describe: 'Requests per calendar month per key, or "off"' })
    .option('latency', str('Added latency MIN-MAX ms on every API route, e.g. 50-300'))
    .option('auto-advance', str('Move payouts PENDING -> PROCESSING -> SUCCESSFUL after MS (or PROCESSING_MS,SUCCESSFUL_MS)'))
    .option('random-seed', num('Seed of the fault PRNG, to replay a campaign'))
    .option('propagating-key', strs('A key that answers 403 for 30 minutes, as during key propagation (repeatable)'))
    .option('shapes', str(`Reading of the spec where it says "not shown": strict (default) or variant ($${SHAPES_VARIABLE})`))
    .option('store-refusals', {
      type: 'boolean',
      describe: 'A refusal of initiate or swap binds its key (default: on with --shapes variant)',
    })
    .option('quiet', { ...flag('Do not print a line per request'), alias: 'q' })
    .example('$0 sandbox', 'Serve the default seed on http://127.0.0.1:4010')
    .example(
      '$0 sandbox --port 0 --latency 50-300 --auto-advance 2000,5000',
      'A free port, slow answers, payouts that settle by themselves',
    )
    .example('$0 sandbox --shapes variant', 'Answer in the other reading: envelopes, amounts as strings, other fee shapes, nulls');

export default defineCommand(builder, async (args, io) => {
  if (!Number.isInteger(args.port) || args.port < 0 || args.port > 65535)
    throw new UsageError(`--port takes 0 to 65535 (got ${args.port})`);
  const shapes = parseShapes(args.shapes, '--shapes') ?? parseShapes(io.env[SHAPES_VARIABLE], SHAPES_VARIABLE) ?? 'strict';
  const seedFile = args.seed && resolve(io.cwd, args.seed);
  const seed = seedFile
    ? saying(
        () => readSeedFile(seedFile),
        SeedError,
        (e) => new CommandError(`bad seed file ${e.message}`),
      )
    : undefined;
  const options: SandboxOptions = {
    port: args.port,
    rateLimitPerSecond: limitFlag('rate-limit', args['rate-limit']),
    monthlyQuota: limitFlag('quota', args.quota),
    shapes,
    storeRefusals: args['store-refusals'],
    seed,
    faults: args.latency ? { latencyMs: latencyFlag(args.latency) } : undefined,
    autoAdvance: args['auto-advance'] ? autoAdvanceFlag(args['auto-advance']) : undefined,
    randomSeed: args['random-seed'],
    propagatingKeys: args['propagating-key'],
    onRequest: args.quiet
      ? undefined
      : (e) => io.stderr.write(`${new Date(e.at).toISOString()} ${e.status || 'dropped'} ${e.method} ${e.path} (${e.route})\n`),
  };
  let sandbox;
  try {
    sandbox = await startSandbox(options);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new UsageError(`port ${args.port} on 127.0.0.1 is in use; pick another with --port, or --port 0 for a free one`);
    }
    throw err;
  }
  const keyWidth = Math.max(...sandbox.keys.map((k) => k.key.length));
  io.stdout.write(
    [
      `Payout service sandbox listening on ${sandbox.url}`,
      `  base_url: ${sandbox.url}  (payouts: ${sandbox.url}/v1/payout-api/payouts)`,
      `  rate limit: ${options.rateLimitPerSecond ?? 'off'}/s per key, quota: ${options.monthlyQuota ?? 'off'}/month per key, fault seed: ${sandbox.randomSeed}`,
      `  shapes: ${sandbox.shapes} (the reading of the spec its answers follow where the spec says "not shown")`,
      `  refused keys: ${sandbox.storeRefusals ? 'stored (a refusal binds its key)' : 'not stored (a 4xx stores nothing)'}`,
      'Keys (x-api-key):',
      ...sandbox.keys.map((k) => `  ${k.key.padEnd(keyWidth)}  ${k.businessName} (${k.businessId})`),
      `Control routes: ${sandbox.url}/_sandbox/... (README "The sandbox"). Ctrl+C stops.`,
      '',
    ].join('\n'),
  );
  await io.stopSignal;
  await sandbox.close();
  io.stdout.write('Sandbox stopped.\n');
  return ExitCode.OK;
});

// One key, several processes (issue 15): what the shared pace costs and what it saves. Figures
// printed, never asserted.
//   npx tsx test/bench/shared-pace.ts                 the real limit: sandbox at 5/s, 40 rows a process
//   options: --rows N (40 a process), --scale K (sandbox and client at 5K/s), --margin MS (the
//            client's --safety-margin; default the loopback 25 ms)
//
// Three runs of the same batches, each against a fresh sandbox at the limit:
//   one process      one `run` of both batches' rows (2N rows): the pace of a single process;
//   two, shared      two `run`s at once, one key, one state folder: the pace shared (pace.ts);
//   two, not shared  the same with a state folder each: the pace before, each process alone.
// For each: the wall time, the key's requests, their rate from first to last start, the 429s the
// sandbox answered, and the most starts in a rolling second, by the clients' own records (`sentAt`:
// when sent) and by the sandbox's arrival dates.
import { join } from 'node:path';
import { startSandbox } from '../../src/sandbox/start-sandbox.ts';
import { readFlags } from './args.ts';
import { saveFigures } from './figures.ts';
import { KEY, cleanEnv, runCli, workDir, writeBatch } from '../engine/helpers.ts';
import { mostInWindow, sentTimes } from '../client/starts.ts';

const f = readFlags(process.argv.slice(2), ['rows', 'scale', 'margin']);
const ROWS = f.num('rows') ?? 40;
const LIMIT = 5 * (f.num('scale') ?? 1);
const MARGIN = f.num('margin');

async function scenario(name: string, batches: string[][], sharedState: boolean) {
  const sb = await startSandbox({ rateLimitPerSecond: LIMIT, monthlyQuota: null });
  const dir = await workDir('pb-bench-pace-');
  try {
    const files = await Promise.all(
      batches.map(async (prefixes, k) => {
        const name = `batch-${k}.csv`;
        // ROWS rows per part; unique references and amounts across the batches
        await writeBatch(dir, name, {
          rows: ROWS * prefixes.length,
          currencies: ['GBP'],
          prefix: prefixes.join(''),
          amount: (i) => `${100 + k * 1000 + i}.00`,
        });
        return name;
      }),
    );
    const t0 = Date.now();
    const runs = await Promise.all(
      files.map((file, k) =>
        runCli(
          [
            'run',
            file,
            '--base-url',
            sb.url,
            '--yes',
            '--log-level',
            'debug',
            '--rate',
            String(LIMIT),
            ...(MARGIN === undefined ? [] : ['--safety-margin', String(MARGIN)]),
          ],
          { cwd: dir, env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, sharedState ? 'state' : `state-${k}`) }), timeoutMs: 20 * 60_000 },
        ),
      ),
    );
    const wall = (Date.now() - t0) / 1000;
    const mine = sb.requestLog().filter((e) => e.apiKey === KEY);
    const sent = runs.flatMap(sentTimes).sort((a, b) => a - b);
    const span = (sent.at(-1)! - sent[0]!) / 1000;
    return {
      name,
      exits: runs.map((r) => r.code).join(' '),
      wall: wall.toFixed(1),
      requests: mine.length,
      rate: (sent.length > 1 ? (sent.length - 1) / span : 0).toFixed(2),
      r429: mine.filter((e) => e.status === 429).length,
      mostSent: mostInWindow(sent, 1000),
      mostArrived: mostInWindow(
        mine.map((e) => e.at),
        1000,
      ),
    };
  } finally {
    await sb.close();
  }
}

const results = [
  await scenario('one process (2N rows)', [['PA', 'PB']], true),
  await scenario('two processes, shared', [['PA'], ['PB']], true),
  await scenario('two processes, not shared', [['PA'], ['PB']], false),
];
saveFigures({
  name: `shared-pace${MARGIN === undefined ? '' : `-margin${MARGIN}`}`,
  caption: `One key, sandbox at ${LIMIT}/s, ${ROWS} rows a process, client safety margin ${MARGIN === undefined ? 'the loopback default' : `${MARGIN} ms`}`,
  columns: ['run', 'exit', 'wall s', 'requests', 'starts/s', '429s', 'most in 1 s (clients)', 'most in 1 s (arrivals)'],
  rows: results.map((r) => [r.name, r.exits, r.wall, r.requests, r.rate, r.r429, r.mostSent, r.mostArrived]),
});

// Throughput against the service's real constraint: 5 requests per second per key (spec §8).
//   npx tsx test/bench/throughput.ts                     real limit: sandbox and client at 5/s
//   npx tsx test/bench/throughput.ts --scale 10          scaled: sandbox and client at 50/s
//   options: --rows N (payout-batch run), --baseline-rows M (each baseline), --latency MIN-MAX (ms,
//            default 150-400), --no-baselines, --margin MS (one more payout-batch run with
//            --safety-margin MS, to compare with the default margin), --created K (the batch has K
//            more rows, already created in its journal: a big batch's last rows, whose results
//            file checkpoints rewrite all K + N rows while the N are sent)
//
// Each phase gets a fresh sandbox (this process) with latency MIN-MAX ms on every request and its
// rate limit at 5 x scale per rolling second, the monthly quota off; the phase itself runs in a
// child process, so the sandbox's event loop and the client's never share a thread:
//   payout-batch run   the CLI as a user runs it: run FILE --yes --base-url URL --rate 5xscale
//                      (its defaults: 25 ms safety margin on loopback, max(8, rate) requests and rows in flight, at most 64)
//   one at a time      the same PayoutClient, limiter effectively off (1000/s): for each row,
//                      quote then initiate, one request at a time
//   p-limit(R) alone   the same client and rows, limiter off, p-limit(5 x scale) over the rows
// Every row is a withdrawal with no document: 2 requests per row (quote, initiate), plus the
// run's preflight (wallets, countries, methods per corridor). The client retries 429s (Retry-After).
//
// How the rate is measured: from the sandbox's request log of the phase's key (arrival times),
// first to last request of the phase: achieved = (requests - 1) / (last - first) (n requests
// make n - 1 intervals). Ratio = achieved / limit. "accepted" counts answers other than 429.
// Peak memory: the child's maxRSS (process.resourceUsage(), read at its exit).
// Targets (issue): payout-batch run >= 0.95 of the limit with zero 429s.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pLimit from 'p-limit';
import { PayoutClient } from '../../src/client/client.ts';
import { initiateBody } from '../../src/engine/execute.ts';
import { toApi } from '../../src/money.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import type { RequestLogEntry } from '../../src/sandbox/contract.ts';
import { validateBatch } from '../../src/validation/validation.ts';
import { saveFigures } from './figures.ts';
import type { PayoutRow } from '../../src/validation/row-schemas.ts';
import { KEY, ROOT, cleanEnv, generateCsv } from '../engine/helpers.ts';
import { readFlags, spawnChild } from './args.ts';
import { writeCreatedJournal, writeLargeBatch } from './batches.ts';

const self = fileURLToPath(import.meta.url);

// ------------------------------------------------------------------ child phases (same client code)

async function validRows(file: string): Promise<PayoutRow[]> {
  const v = await validateBatch(file);
  const rows: PayoutRow[] = [];
  for await (const r of v.rows) if (r.valid && r.payout) rows.push(r.payout);
  return rows;
}

/** One row as a user's loop would send it: quote, then initiate with a key of its own. */
async function sendRow(client: PayoutClient, p: PayoutRow, tag: string): Promise<boolean> {
  try {
    await client.quote({
      sourceAmount: toApi(p.sourceAmount),
      sourceCurrency: p.sourceCurrency,
      destinationCurrency: p.destinationCurrency,
      destinationCountryCode: p.destinationCountryCode,
      method: p.method,
    });
    await client.initiate(initiateBody(p), { idempotencyKey: `bench-${tag}-${p.reference}` });
    return true;
  } catch {
    return false;
  }
}

async function childPhase(phase: string, url: string, file: string, extra: string): Promise<unknown> {
  const rows = await validRows(file);
  // The limiter effectively off: 1000 starts per second, as many in flight as asked.
  const client = new PayoutClient({ baseUrl: url, apiKey: KEY, requestsPerSecond: 1000, concurrency: 1000 });
  let created = 0;
  if (phase === 'sequential') {
    for (const p of rows) if (await sendRow(client, p, phase)) created++;
  } else {
    const limit = pLimit(Number(extra));
    const ok = await Promise.all(rows.map((p) => limit(() => sendRow(client, p, phase))));
    created = ok.filter(Boolean).length;
  }
  return { created, exitCode: created === rows.length ? 0 : 1 };
}

if (process.argv[2] === '--phase' && process.argv[3] === 'journal') {
  // in a child: the 100,000 rows it loads stay out of the process that hosts the sandboxes
  const [, , , , file, from, baseUrl, stateDir] = process.argv;
  process.stdout.write(JSON.stringify(await writeCreatedJournal(file!, { from: Number(from), baseUrl: baseUrl!, stateDir: stateDir! })));
  process.exit(0);
}

if (process.argv[2] === '--phase') {
  const [, , , phase, url, file, , extra] = process.argv;
  const r = await childPhase(phase!, url!, file!, extra ?? '');
  process.stdout.write(JSON.stringify({ ...(r as object), maxRssMb: process.resourceUsage().maxRSS / 1024 }));
  process.exit(0);
}

// ------------------------------------------------------------------ parent

interface Args {
  scale: number;
  rows: number;
  baselineRows: number;
  latency: [number, number];
  baselines: boolean;
  margin?: number;
  created: number;
}

function parseArgs(argv: string[]): Args {
  const f = readFlags(argv, ['scale', 'rows', 'baseline-rows', 'margin', 'created'], ['no-baselines'], ['latency']);
  const a: Partial<Args> = {
    scale: f.num('scale'),
    rows: f.num('rows'),
    baselineRows: f.num('baseline-rows'),
    margin: f.num('margin'),
    latency: f.range('latency'),
    baselines: !f.flag('no-baselines'),
  };
  const scale = a.scale ?? 1;
  if (!(scale >= 1 && Number.isInteger(scale))) throw new Error('--scale is a whole number >= 1');
  return {
    scale,
    // ~2 requests per row: 5/s for about 2 minutes is ~600 requests; 50/s for about 45 s is ~2,200.
    rows: a.rows ?? (scale === 1 ? 280 : 1100),
    baselineRows: a.baselineRows ?? (scale === 1 ? 80 : 60),
    latency: a.latency ?? [150, 400],
    baselines: a.baselines!,
    margin: a.margin,
    created: f.num('created') ?? 0,
  };
}

interface Measure {
  name: string;
  rows: number;
  created: number;
  exitCode: number | null;
  requests: number;
  accepted: number;
  r429: number;
  wallMs: number;
  spanMs: number;
  rate: number;
  acceptedRate: number;
  rowPhaseRate?: number;
  maxRssMb: number;
  maxRolling: number;
}

function maxRolling(at: number[]): number {
  let max = 0;
  for (let i = 0, j = 0; i < at.length; i++) {
    while (at[i]! - at[j]! >= 1000) j++;
    max = Math.max(max, i - j + 1);
  }
  return max;
}

function measure(
  name: string,
  rows: number,
  log: RequestLogEntry[],
  wallMs: number,
  child: { created: number; exitCode: number | null; maxRssMb: number },
): Measure {
  const mine = log.filter((r) => r.apiKey === KEY && r.route !== 'control').sort((a, b) => a.at - b.at);
  const at = mine.map((r) => r.at);
  const spanMs = at.length > 1 ? at[at.length - 1]! - at[0]! : 0;
  const accepted = mine.filter((r) => r.status !== 429);
  const rate = spanMs ? ((mine.length - 1) * 1000) / spanMs : 0;
  // accepted per second over the same span
  const acceptedRate = spanMs ? ((accepted.length - 1) * 1000) / spanMs : 0;
  // the rows' own phase: first quote to last initiate (the preflight left out)
  const rowReqs = mine.filter((r) => r.route === 'quote' || r.route === 'initiate');
  const rowSpan = rowReqs.length > 1 ? rowReqs[rowReqs.length - 1]!.at - rowReqs[0]!.at : 0;
  return {
    name,
    rows,
    created: child.created,
    exitCode: child.exitCode,
    requests: mine.length,
    accepted: accepted.length,
    r429: mine.filter((r) => r.status === 429).length,
    wallMs,
    spanMs,
    rate,
    acceptedRate,
    rowPhaseRate: rowSpan ? ((rowReqs.length - 1) * 1000) / rowSpan : undefined,
    maxRssMb: child.maxRssMb,
    maxRolling: maxRolling(at),
  };
}

async function main(): Promise<number> {
  const a = parseArgs(process.argv.slice(2));
  const limit = 5 * a.scale;
  const dir = mkdtempSync(join(tmpdir(), 'pb-bench-throughput-'));
  const rssHook = join(dir, 'rss-hook.cjs');
  writeFileSync(
    rssHook,
    'process.on("exit", () => { try { require("fs").writeFileSync(process.env.PB_RSS_FILE, String(process.resourceUsage().maxRSS)); } catch {} });\n',
  );
  const results: Measure[] = [];
  const sandbox = (): Promise<LocalSandbox> =>
    startSandbox({ rateLimitPerSecond: limit, monthlyQuota: null, faults: { latencyMs: a.latency }, randomSeed: 20251122 });
  const batch = (name: string, rows: number, prefix = 'TPUT') => {
    const p = join(dir, name);
    writeFileSync(p, generateCsv({ rows, prefix }));
    return p;
  };
  try {
    console.log(
      `Sandbox limit ${limit}/s per key (rolling 1000 ms), latency ${a.latency[0]}-${a.latency[1]} ms per request, monthly quota off; ` +
        `${a.scale === 1 ? 'the real limit' : `scaled x${a.scale}`}. 2 requests per row (quote, initiate; withdrawals, no documents).`,
    );

    // ---- payout-batch run, as shipped (and with another --safety-margin)
    const cliPhase = async (name: string, extra: string[]) => {
      let file: string;
      const sb = await sandbox();
      if (a.created) {
        // the rows to send first, then the created ones (small amounts go first: the wallets cover them)
        file = join(dir, `payroll-${results.length}.csv`);
        await writeLargeBatch(file, a.rows + a.created, `T${results.length}-`);
        const journalArgs = [file, String(a.rows), sb.url, join(dir, 'state')];
        const j = await spawnChild(['--import', 'tsx', self, '--phase', 'journal', ...journalArgs], cleanEnv(), ROOT);
        if (j.code !== 0) throw new Error(`the journal of ${file}: ${j.stderr}`);
      } else file = batch(`payroll-${results.length}.csv`, a.rows, `TPUT${results.length}`); // other content: not refused as the same batch
      const env = cleanEnv({
        PAYOUT_BATCH_STATE_DIR: join(dir, 'state'),
        PB_RSS_FILE: join(dir, 'rss-cli'),
        NODE_OPTIONS: `--require ${rssHook}`,
      });
      process.stdout.write(
        `${name}: ${a.rows} rows${a.created ? ` to send in a batch of ${(a.rows + a.created).toLocaleString('en')}` : ''} ... `,
      );
      const t0 = performance.now();
      const r = await spawnChild(
        [join(ROOT, 'dist/bin.js'), 'run', file, '--yes', '--base-url', sb.url, '--rate', String(limit), ...extra],
        env,
        dir,
      );
      const wall = performance.now() - t0;
      const created = /All (\d+) payouts? created/.exec(r.stdout)?.[1] ?? '0';
      if (r.code !== 0)
        console.log(
          `\n  exit ${r.code}: ${r.stderr
            .split('\n')
            .filter((l) => !l.startsWith('{'))
            .slice(-5)
            .join('\n  ')}`,
        );
      console.log(`${(wall / 1000).toFixed(1)} s`);
      results.push(
        measure(name, a.rows, sb.requestLog(), wall, {
          created: Number(created),
          exitCode: r.code,
          maxRssMb: Number(readFileSync(join(dir, 'rss-cli'), 'utf8')) / 1024,
        }),
      );
      await sb.close();
    };
    await cliPhase('payout-batch run', []);
    if (a.margin !== undefined) await cliPhase(`run --safety-margin ${a.margin}`, ['--safety-margin', String(a.margin)]);

    const phase = async (name: string, phaseName: string, rows: number, extra: string) => {
      const file = batch(`${phaseName}.csv`, rows);
      const sb = await sandbox();
      process.stdout.write(`${name}: ${rows} rows ... `);
      const t0 = performance.now();
      const r = await spawnChild(
        ['--import', 'tsx', self, '--phase', phaseName, sb.url, file, String(limit), extra],
        cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }),
        ROOT,
      );
      const wall = performance.now() - t0;
      if (r.code !== 0) throw new Error(`${name} failed: ${r.stderr}`);
      const child = JSON.parse(r.stdout) as { created: number; exitCode: number; maxRssMb: number };
      console.log(`${(wall / 1000).toFixed(1)} s`);
      results.push(measure(name, rows, sb.requestLog(), wall, child));
      await sb.close();
    };
    if (a.baselines) {
      await phase('one at a time', 'sequential', a.baselineRows, '');
      await phase(`p-limit(${limit}) alone`, 'plimit', a.baselineRows, String(limit));
    }

    console.log('');
    const h = [
      '',
      'rows',
      'created',
      'requests',
      '429s',
      'wall',
      'span',
      'req/s',
      'ratio',
      'accepted/s',
      'ratio acc.',
      'rows-phase ratio',
      'max in 1 s',
      'peak RSS',
    ];
    const w = [22, 6, 8, 9, 6, 8, 8, 7, 6, 11, 11, 17, 11, 9];
    const fmt = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('');
    console.log(fmt(h));
    for (const m of results) {
      console.log(
        fmt([
          m.name,
          String(m.rows),
          String(m.created),
          String(m.requests),
          String(m.r429),
          `${(m.wallMs / 1000).toFixed(1)} s`,
          `${(m.spanMs / 1000).toFixed(1)} s`,
          m.rate.toFixed(2),
          (m.rate / limit).toFixed(3),
          m.acceptedRate.toFixed(2),
          (m.acceptedRate / limit).toFixed(3),
          m.rowPhaseRate !== undefined ? (m.rowPhaseRate / limit).toFixed(3) : '',
          String(m.maxRolling),
          `${m.maxRssMb.toFixed(0)} MB`,
        ]),
      );
    }
    console.log('');
    console.log(
      `ratio = (requests - 1) / (last - first request arrival at the sandbox) / ${limit}, over the whole phase (the run's preflight included);`,
    );
    console.log('rows-phase ratio: the same from the first quote to the last initiate; accepted = answers other than 429;');
    console.log(
      'max in 1 s: most requests of the key in any rolling 1000 ms of the sandbox log; peak RSS: the child process (CLI or loop) maxRSS.',
    );
    const ours = results[0]!;
    const ratio = ours.rate / limit;
    const ok = ratio >= 0.95 && ours.r429 === 0 && ours.exitCode === 0;
    console.log(`payout-batch run: ${ratio.toFixed(3)} of the limit, ${ours.r429} 429s (target >= 0.95 and 0): ${ok ? 'MET' : 'MISSED'}`);
    for (const m of results.slice(1))
      console.log(`  beside it: ${m.name} ${(m.acceptedRate / limit).toFixed(3)} of the limit in accepted requests, ${m.r429} 429s`);
    // One table per setting: the real limit, scaled, and a big batch's last rows (--created).
    const setting = `${limit}${a.created ? '-created' : ''}`;
    saveFigures({
      name: `throughput-${setting}`,
      caption:
        `Sandbox at ${limit}/s with ${a.latency[0]}-${a.latency[1]} ms latency` +
        (a.created ? `, the batch's other ${a.created.toLocaleString('en')} rows already created in its journal` : '') +
        '; ratio = requests per second at the sandbox over the limit, first to last request',
      columns: ['phase', 'rows', 'requests', '429s', 'wall', 'ratio', 'accepted ratio', 'rows-phase ratio', 'max in 1 s', 'peak RSS'],
      rows: results.map((m) => [
        m.name,
        m.rows,
        m.requests,
        m.r429,
        `${(m.wallMs / 1000).toFixed(1)} s`,
        (m.rate / limit).toFixed(3),
        (m.acceptedRate / limit).toFixed(3),
        m.rowPhaseRate !== undefined ? (m.rowPhaseRate / limit).toFixed(3) : null,
        m.maxRolling,
        `${m.maxRssMb.toFixed(0)} MB`,
      ]),
      notes: [`Target for payout-batch run: ratio ≥ 0.95 with no 429: ${ok ? 'MET' : 'MISSED'}.`],
    });
    return ok ? 0 : 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = await main();

// Kill -9 campaign on the team ledger (issue 30): one payroll, one sandbox (its own process), one
// PostgreSQL database (a throwaway cluster of this script), two "hosts" (a HOME, state folder and
// temporary folder each, one PAYOUT_BATCH_LEDGER_URL) running `payout-batch run` in turn. Each run
// is stopped at a random instant: the CLI SIGKILLed, or the database server killed (`pg_ctl stop
// -m immediate`, then started again) for the --db-kills rounds; the next run is the other host's.
// Then the hosts take turns, unkilled, until a run exits 0. Prints the figures, exits 1 on a miss.
//   npx tsx test/chaos/ledger-campaign.ts [--rows N (40)] [--kills K (10)] [--db-kills D (2)]
//                                         [--seed S] [--latency MIN-MAX (20-80)]
//
// Faults on every spec route: latency MIN-MAX ms, 10% 5xx after create, 5% dropped after create
// (rows of unknown outcome, resent by whichever host resumes). Sandbox and client at 50/s.
// A stop lands in the run's preflight (after 1 to P of its requests, P: a preflight's, counted by a
// `plan` first) once in four, and more often once fewer than two rows are left unpaid a stop; else
// among its sends (after 1 to 2 S of its initiates, S an even share of the unpaid rows over the
// stops left and 2 runs more), so that the batch lasts until the last stop; then 0 to MAX ms more,
// so that it also falls between requests (an `initiating` commit, a journal write, an upload).
//
// Measured at the end, faults off. The sandbox's payout list has no reference: a payout is mapped
// to its row through the Idempotency-Key that created it (the sandbox's record) and the
// `initiating` lines of payout_batch.journal_lines, which name the key's reference.
//   payouts / rows                 payouts at the sandbox, rows of the file
//   duplicates                     payouts beyond one per reference, and payouts of no journalled key
//   rows lost                      references with no payout, or not created in the results file
//   initiates not in the database  Idempotency-Keys the sandbox received with no `initiating` line
//   rows of dead holders left      reservations and batch runs after the last run (its own released)
import { existsSync, readdirSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { readResults } from '../../src/results/read.ts';
import type { FaultConfig } from '../../src/sandbox/contract.ts';
import { mulberry32 } from '../../src/sandbox/faults.ts';
import { readFlags } from '../bench/args.ts';
import { allPayouts, cleanEnv, runCli, workDir, writeBatch, type CliRun } from '../engine/helpers.ts';
import { startCluster } from '../pg/cluster.ts';
import { sandboxProcess } from './sandbox-process.ts';

const f = readFlags(process.argv.slice(2), ['rows', 'kills', 'db-kills', 'seed'], [], ['latency']);
const ROWS = f.num('rows') ?? 40;
const KILLS = f.num('kills') ?? 10;
const DB_KILLS = f.num('db-kills') ?? 2;
const SEED = f.num('seed') ?? Date.now() % 1_000_000;
const LATENCY = f.range('latency') ?? [20, 80];
const RATE = 50;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the database holds at the end: the `initiating` lines' key → reference, and rows left. */
async function readLedger(url: string): Promise<{ refOfKey: Map<string, string>; lines: number; left: number }> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const r = await db.query<{ line: string }>(`SELECT line FROM payout_batch.journal_lines WHERE line LIKE '{"t":"initiating"%'`);
    const refOfKey = new Map<string, string>();
    for (const { line } of r.rows) {
      const l = JSON.parse(line) as { key: string; ref: string };
      refOfKey.set(l.key, l.ref);
    }
    const left = await db.query<{ n: number }>(
      '(SELECT count(*)::int AS n FROM payout_batch.reservations) UNION ALL (SELECT count(*)::int FROM payout_batch.batch_runs)',
    );
    return { refOfKey, lines: r.rows.length, left: left.rows.reduce((s, x) => s + x.n, 0) };
  } finally {
    await db.end();
  }
}

async function main(): Promise<number> {
  const random = mulberry32(SEED);
  const t0 = Date.now();
  const clock = () => `${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s`;
  const cluster = await startCluster();
  const sb = await sandboxProcess({ rateLimitPerSecond: RATE, monthlyQuota: null, randomSeed: SEED });
  try {
    const ledger = await cluster.newDatabase();
    const shared = await workDir('pb-ledger-chaos-');
    await writeBatch(shared, 'payroll.csv', { rows: ROWS, documentsEvery: 10, prefix: 'LEDGERCHAOS' });
    const hosts = await Promise.all(
      ['alice', 'bob'].map(async (name) => {
        const home = join(shared, `.home-${name}`);
        await mkdir(join(home, 'tmp'), { recursive: true });
        const env = cleanEnv({
          HOME: home,
          TMPDIR: join(home, 'tmp'),
          PAYOUT_BATCH_STATE_DIR: join(home, 'state'),
          PAYOUT_BATCH_LEDGER_URL: ledger,
        });
        return { name, home, env };
      }),
    );
    const faults: Partial<FaultConfig> = { latencyMs: LATENCY, errorAfterCreate: 0.1, dropAfterCreate: 0.05 };
    await sb.setFaults(faults);
    // which of the K + D stops kill the database rather than the CLI (seeded)
    const stops = KILLS + DB_KILLS;
    const dbRounds = new Set<number>();
    while (dbRounds.size < Math.min(DB_KILLS, stops)) dbRounds.add(1 + Math.floor(random() * stops));
    // (drawn against the rows still unpaid: a stop that comes late, a database crash the CLI sends
    // through until the server is down, leaves fewer rows to the stops after it)
    const shareOf = (unpaid: number, stopsLeft: number) => Math.max(1, unpaid / (stopsLeft + 2));
    const counted = sb.keyRequests();
    const plan = await runCli(['plan', 'payroll.csv', '--base-url', sb.url, '--rate', String(RATE)], { cwd: shared, env: hosts[0]!.env });
    const preflight = sb.keyRequests() - counted;
    if (plan.code !== 0) console.log(`plan: exit ${plan.code}\n${plan.stderr.slice(-400)}`);
    console.log(
      `Team ledger kill campaign: ${ROWS} rows, 2 hosts, ${KILLS} SIGKILLs of the CLI and ${DB_KILLS} of the database ` +
        `(runs ${[...dbRounds].sort((a, b) => a - b).join(', ') || 'none'}), latency ${LATENCY[0]}-${LATENCY[1]} ms, ` +
        `10% 5xx and 5% dropped after create, sandbox and client at ${RATE}/s, stops after 1-${preflight} requests ` +
        `(a preflight's) or 1 to twice an even share of the unpaid rows' initiates, seed ${SEED}`,
    );

    let [cliKills, dbKills, finished, round] = [0, 0, false, 0];
    const exits: Record<string, number> = {};
    while (!finished && round < stops + 8) {
      round++;
      const host = hosts[(round - 1) % 2]!;
      const stopping = round <= stops;
      const killDb = dbRounds.has(round);
      const unpaid = ROWS - (await sb.initiateKeys()).created.length;
      const inPreflight = random() < Math.max(0.25, 1 - unpaid / (2 * (stops - round + 1)));
      const after = 1 + Math.floor(random() * (inPreflight ? preflight : 2 * shareOf(unpaid, stops - round + 1)));
      const count = inPreflight ? () => sb.keyRequests() : () => sb.keyInitiates();
      const extraMs = Math.floor(random() * LATENCY[1]);
      const from = count();
      let [poll, timer]: (NodeJS.Timeout | undefined)[] = [];
      let stopped = '';
      const run: Promise<CliRun> = runCli(['run', 'payroll.csv', '--yes', '--base-url', sb.url, '--rate', String(RATE)], {
        cwd: shared,
        env: host.env,
        timeoutMs: 5 * 60_000,
        onSpawn: stopping
          ? (child) => {
              poll = setInterval(() => {
                if (count() - from < after) return;
                clearInterval(poll);
                timer = setTimeout(() => {
                  stopped = `after ${after} ${inPreflight ? 'requests' : 'initiates'} + ${extraMs} ms`;
                  if (killDb) cluster.stop('immediate');
                  else child.kill('SIGKILL');
                }, extraMs);
              }, 2);
            }
          : undefined,
      });
      const r = await run;
      clearInterval(poll);
      clearTimeout(timer); // a stop not yet due when the run ended never lands on the next one
      if (killDb && stopped) {
        dbKills++;
        cluster.start();
      }
      if (r.signal === 'SIGKILL') cliKills++;
      // the killed process's requests in flight land before the next run starts counting
      if (stopped) await sleep(LATENCY[1] + 100);
      const what =
        r.signal === 'SIGKILL'
          ? `SIGKILL ${cliKills}/${KILLS} ${stopped}`
          : killDb && stopped
            ? `database killed ${stopped}: exit ${r.code}`
            : `exit ${r.code}${stopping ? ' (before its stop)' : ''}`;
      const exit = r.signal ?? `exit ${r.code}`;
      exits[exit] = (exits[exit] ?? 0) + 1;
      const keys = await sb.initiateKeys();
      console.log(
        `${clock()}  run ${String(round).padStart(2)} ${host.name.padEnd(5)}: ${what.padEnd(48)} initiates received ${keys.received.length}, payouts ${keys.created.length}`,
      );
      if (r.code !== null && r.code !== 0 && r.code !== 1 && !(r.code === 4 && killDb))
        console.log(
          `  ${r.stderr
            .split('\n')
            .filter((l) => l && !l.startsWith('{'))
            .slice(-4)
            .join('\n  ')}`,
        );
      finished = r.code === 0 && round > stops;
      // a batch that ended before its stop was due: no further stop can land, the campaign is short
      if (r.code === 0 && round <= stops) {
        console.log(`${clock()}  the batch ended before stop ${round}: lower --rows or --kills`);
        finished = true;
      }
    }

    // ---- the figures, faults off
    await sb.setFaults({});
    const payouts = await allPayouts(sb);
    const keys = await sb.initiateKeys();
    const { refOfKey, lines, left } = await readLedger(ledger);
    const results = await readResults(join(shared, 'payroll.results.csv'));
    const refs = results.rows.map((r) => r.cells.reference!);
    const payoutOfKey = new Map(keys.created.map((c) => [c.key, c.payoutId]));
    const perRef = new Map<string, string[]>();
    let unmapped = 0;
    for (const [key, id] of payoutOfKey) {
      const ref = refOfKey.get(key);
      if (ref === undefined || !refs.includes(ref)) unmapped++;
      else perRef.set(ref, [...(perRef.get(ref) ?? []), id]);
    }
    const duplicates = [...perRef.values()].reduce((s, ids) => s + ids.length - 1, 0) + unmapped;
    const created = (s?: string) => !!s && ['PENDING', 'ADDITIONAL_INFO_REQUIRED', 'PROCESSING', 'SUCCESSFUL'].includes(s);
    const lost = results.rows.filter(
      (r) => !created(r.result.status) || !perRef.get(r.cells.reference!)?.includes(r.result.payoutId ?? ''),
    ).length;
    const unrecorded = new Set(keys.received.filter((k) => !refOfKey.has(k))).size;
    // no process keeps the journals on its host (beneficiaries, accounts): it reads them from the database
    const copies = (h: { home: string }) =>
      ['team', 'ledgers'].reduce(
        (n, d) => n + (existsSync(join(h.home, 'state', d)) ? readdirSync(join(h.home, 'state', d)).length : 0),
        0,
      );
    const leftovers = hosts.reduce((n, h) => n + copies(h), 0);

    console.log(
      `\n${round} runs (${Object.entries(exits)
        .map(([e, n]) => `${n} ${e}`)
        .join(', ')}); ${keys.received.length} initiates received under ${new Set(keys.received).size} keys; ` +
        `${lines} initiating lines in the database; ${clock().trim()} in all`,
    );
    const checks: [string, string, string, boolean][] = [
      ['SIGKILLs of the CLI', String(cliKills), String(KILLS), cliKills >= KILLS],
      ['kills of the database', String(dbKills), String(DB_KILLS), dbKills >= DB_KILLS],
      ['a run finished (exit 0)', String(finished), 'true', finished],
      ['payouts / rows', `${payouts.length} / ${ROWS}`, 'equal', payouts.length === ROWS],
      ['duplicates', String(duplicates), '0', duplicates === 0],
      ['rows lost', String(lost), '0', lost === 0],
      ['initiates not in the database', String(unrecorded), '0', unrecorded === 0],
      ['rows of dead holders left', String(left), '0', left === 0],
      ['journals kept on the hosts', String(leftovers), '0', leftovers === 0],
    ];
    for (const [n, v, t, ok] of checks) console.log(`${n.padEnd(34)}${v.padStart(10)}   target ${t.padEnd(6)} ${ok ? 'ok' : 'MISSED'}`);
    const ok = checks.every((c) => c[3]);
    console.log(ok ? 'All targets met.' : 'Some targets MISSED.');
    console.log(
      `replay: npx tsx test/chaos/ledger-campaign.ts --rows ${ROWS} --kills ${KILLS} --db-kills ${DB_KILLS} ` +
        `--latency ${LATENCY[0]}-${LATENCY[1]} --seed ${SEED}`,
    );
    return ok ? 0 : 1;
  } finally {
    await sb.close();
    cluster.destroy();
  }
}

process.exitCode = await main();

// Chaos: two processes on one service account (issue 15). Each round starts a fresh sandbox and
// a fresh state folder, then
//   copies  two edited copies of a batch (one amount changed) in two folders, `run` at the same
//           moment: one must pay, the other be refused (exit 3) naming the first;
//   labels  the same file under two environment labels: `run --base-url U`, then the same with
//           PAYOUT_ENV=sandbox, both started at once: the second is refused or resumes;
// with latency on every route so the two overlap. Prints the figures and exits 1 on any miss.
//   npx tsx test/chaos/two-processes.ts [--rows 40] [--rounds 3] [--latency 20-80]
//
// Counted at the sandbox (each row has its own amount, so a reference's payouts are those of its
// amount): payouts expected, payouts created, duplicates (payouts beyond one per amount).
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { readFlags } from '../bench/args.ts';
import { allPayouts, cleanEnv, runCli, workDir, writeBatch, type CliRun } from '../engine/helpers.ts';

const flags = readFlags(process.argv.slice(2), ['rows', 'rounds'], [], ['latency']);
const ROWS = flags.num('rows') ?? 40;
const ROUNDS = flags.num('rounds') ?? 3;
const [LMIN, LMAX] = flags.range('latency') ?? [20, 80];

const amount = (i: number) => `${10 + i}.${String(i % 100).padStart(2, '0')}`;
const edited = (i: number) => (i === 3 ? '77.77' : amount(i));

interface Figures {
  scenario: string;
  round: number;
  exitCodes: string;
  expected: number;
  created: number;
  duplicates: number;
  refusedNamesFirst: boolean | '-';
}

async function count(sb: LocalSandbox): Promise<{ created: number; duplicates: number }> {
  const payouts = await allPayouts(sb);
  const byAmount = new Map<string, number>();
  for (const p of payouts) byAmount.set(String(p.sourceAmount), (byAmount.get(String(p.sourceAmount)) ?? 0) + 1);
  return { created: payouts.length, duplicates: [...byAmount.values()].reduce((a, n) => a + n - 1, 0) };
}

async function round(scenario: 'copies' | 'labels', n: number): Promise<Figures> {
  const sb = await startSandbox({ rateLimitPerSecond: null, monthlyQuota: null });
  let dir: string | undefined;
  try {
    dir = await workDir('pb-chaos-two-');
    const state = join(dir, 'state');
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: state });
    const args = (file: string) => ['run', file, '--yes', '--base-url', sb.url, '--rate', '200'];
    sb.setFaults({ latencyMs: [LMIN, LMAX] });
    let runs: [CliRun, CliRun];
    let firstFile: (won: number) => string;
    if (scenario === 'copies') {
      const k1 = join(dir, 'k1');
      const k2 = join(dir, 'k2');
      await mkdir(k1);
      await mkdir(k2);
      await writeBatch(k1, 'payroll.csv', { rows: ROWS, prefix: `C${n}`, amount });
      await writeBatch(k2, 'payroll.csv', { rows: ROWS, prefix: `C${n}`, amount: edited });
      runs = await Promise.all([runCli(args('payroll.csv'), { cwd: k1, env }), runCli(args('payroll.csv'), { cwd: k2, env })]);
      firstFile = (won) => join(won === 0 ? k1 : k2, 'payroll.csv');
    } else {
      await writeBatch(dir, 'payroll.csv', { rows: ROWS, prefix: `L${n}`, amount });
      runs = await Promise.all([
        runCli(args('payroll.csv'), { cwd: dir, env }),
        runCli(args('payroll.csv'), { cwd: dir, env: { ...env, PAYOUT_ENV: 'sandbox' } }),
      ]);
      firstFile = () => join(dir!, 'payroll.csv');
    }
    sb.setFaults({});
    const codes = runs.map((r) => r.code);
    const won = codes.indexOf(0);
    const refused = runs.find((r) => r.code === 3);
    const { created, duplicates } = await count(sb);
    return {
      scenario,
      round: n,
      exitCodes: codes.join('/'),
      expected: ROWS,
      created,
      duplicates,
      refusedNamesFirst: refused ? won >= 0 && refused.stderr.includes(firstFile(won)) : '-',
    };
  } finally {
    await sb.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

const rows: Figures[] = [];
for (let n = 1; n <= ROUNDS; n++) {
  rows.push(await round('copies', n));
  rows.push(await round('labels', n));
}
console.table(rows);
const missed = rows.filter(
  (r) =>
    r.created !== r.expected ||
    r.duplicates !== 0 ||
    r.refusedNamesFirst === false ||
    (r.scenario === 'copies' && r.exitCodes.split('/').sort().join('/') !== '0/3') ||
    (r.scenario === 'labels' && r.exitCodes.split('/').some((c) => c !== '0' && c !== '3')),
);
console.log(
  `${rows.length} rounds, ${ROWS} rows each: payouts expected ${rows.reduce((a, r) => a + r.expected, 0)}, ` +
    `created ${rows.reduce((a, r) => a + r.created, 0)}, duplicates ${rows.reduce((a, r) => a + r.duplicates, 0)}, misses ${missed.length}`,
);
process.exit(missed.length ? 1 : 0);

// Peak memory of `listen`, `status` and `retry` as the results file grows: each applies a few status
// changes to a results file of 10,000 or 100,000 rows and rewrites it, or reads it whole.
//   npx tsx test/bench/follow-up-memory.ts [--sizes 10000,100000]
//
// A real `run` of 20 rows against the sandbox (in this process, no rate limit, payouts left
// PENDING) makes 20 payouts; its results file is then grown to N rows by copies of its rows, each
// with its own reference and payout id, all paid (final: `status` asks nothing about them). Then:
// - `listen --results FILE`: the 20 payouts' deliveries (PROCESSING), signed, posted at once; it is
//   stopped (SIGTERM) once its inbox records them applied;
// - `status FILE`: the sandbox's staff pay the 20 payouts first, so status moves them;
// - `status FILE --status-report`: nothing moves, the pain.002 of every row is written;
// - `retry FILE --yes`: nothing to send (every row paid), its rows matched with the journal.
// Each is the real CLI (node dist/bin.js) in a child process; its peak RSS is process.resourceUsage()
// read at its exit through a --require hook. The file is checked after each: N rows, 20 moved.
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { spawnChild } from './args.ts';
import { saveFigures, type Cell } from './figures.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { batchColumns, readResults } from '../../src/results/read.ts';
import { writeResults } from '../../src/results/write.ts';
import { ROOT, cleanEnv, generateCsv } from '../engine/helpers.ts';

const MB = 1024 * 1024;
const REAL = 20;
const SECRET = 'whsec_bench_0123456789abcdef';
const { values } = parseArgs({ options: { sizes: { type: 'string' } } });
const sizes = (values.sizes ?? '10000,100000').split(',').map(Number);

const dir = mkdtempSync(join(tmpdir(), 'pb-bench-follow-up-'));
const hook = join(dir, 'usage-hook.cjs');
writeFileSync(
  hook,
  'process.on("exit", () => { try { const u = process.resourceUsage(); require("fs").writeFileSync(process.env.PB_USAGE_FILE, JSON.stringify(u)); } catch {} });\n',
);
const usageFile = join(dir, 'usage.json');
const env = (cwd: string) =>
  cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(cwd, 'state'), PB_USAGE_FILE: usageFile, NODE_OPTIONS: `--require ${hook}` });
const usage = () => JSON.parse(readFileSync(usageFile, 'utf8')) as NodeJS.ResourceUsage;

async function until(what: string, ok: () => boolean, ms = 600_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A results file of `n` rows: the real run's 20, then copies of them, paid, with their own reference and payout id. */
async function grownResults(sb: LocalSandbox, cwd: string, n: number): Promise<{ file: string; payoutIds: string[] }> {
  writeFileSync(join(cwd, 'payroll.csv'), generateCsv({ rows: REAL, prefix: `F${n}-` }));
  const r = await spawnChild(
    [join(ROOT, 'dist/bin.js'), 'run', 'payroll.csv', '--yes', '--no-report', '--base-url', sb.url, '--rate', '1000'],
    env(cwd),
    cwd,
  );
  if (r.code !== 0) throw new Error(`run: exit ${r.code}\n${r.stderr.slice(-1500)}`);
  const file = join(cwd, 'payroll.results.csv');
  const t = await readResults(file);
  const ref = batchColumns(t).reference!;
  const payoutIds = t.rows.map((row) => row.result.payoutId!);
  const copies = Array.from({ length: n - REAL }, (_, i) => {
    const row = t.rows[i % REAL]!;
    return {
      rowNumber: REAL + 2 + i,
      cells: { ...row.cells, [ref]: `COPY-${i}` },
      result: { ...row.result, payoutId: `po_copy_${i}`, status: 'SUCCESSFUL', nextStep: undefined },
    };
  });
  await writeResults(file, { ...t, rows: [...t.rows, ...copies] });
  return { file, payoutIds };
}

async function checked(file: string, n: number, status: string): Promise<void> {
  const t = await readResults(file);
  const moved = t.rows.filter((r) => r.result.status === status).length;
  if (t.rows.length !== n || moved < REAL) throw new Error(`${file}: ${t.rows.length} rows, ${moved} ${status}: expected ${n}, ${REAL}`);
}

/** `listen` until the 20 deliveries are applied, then SIGTERM: its peak RSS in MB. */
async function listen(cwd: string, file: string, payoutIds: string[]): Promise<{ rssMb: number; wallS: number }> {
  writeFileSync(join(cwd, 'secret.txt'), SECRET, { mode: 0o600 });
  rmSync(usageFile, { force: true });
  const stateDir = join(cwd, 'listen-state');
  const t0 = performance.now();
  const args = ['listen', '--port', '0', '--secret-file', 'secret.txt', '--results', file, '--state-dir', stateDir];
  const child = spawn(process.execPath, [join(ROOT, 'dist/bin.js'), ...args], { cwd, env: env(cwd), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err = (err + d).slice(-2000)));
  const closed = new Promise<number | null>((r) => child.on('close', r));
  await until('listen to start', () => /Listening on (\S+) /.test(out) || child.exitCode !== null, 60_000);
  const url = /Listening on (\S+) /.exec(out)?.[1];
  if (!url) throw new Error(`listen: ${err}`);
  await Promise.all(
    payoutIds.map(async (payoutId, i) => {
      const body = JSON.stringify({
        eventType: 'payout.status.changed',
        deliveryId: `dl_bench_${i}`,
        occurredAt: new Date().toISOString(),
        data: { payoutId, oldStatus: 'PENDING', newStatus: 'PROCESSING', changedAt: new Date().toISOString() },
      });
      const sig = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
      const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-signature': sig }, body });
      if (r.status >= 300) throw new Error(`delivery: ${r.status} ${await r.text()}`);
    }),
  );
  const applied = () =>
    existsSync(join(stateDir, 'inbox.jsonl')) &&
    readFileSync(join(stateDir, 'inbox.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"t":"applied"')).length >= payoutIds.length;
  await until('the deliveries applied', applied);
  child.kill('SIGTERM');
  const code = await closed;
  if (code !== 0) throw new Error(`listen: exit ${code}\n${err}`);
  return { rssMb: usage().maxRSS / 1024, wallS: (performance.now() - t0) / 1000 };
}

/** The CLI's `args` to the end: its peak RSS in MB. */
async function peak(cwd: string, args: string[]): Promise<{ rssMb: number; wallS: number }> {
  rmSync(usageFile, { force: true });
  const r = await spawnChild([join(ROOT, 'dist/bin.js'), ...args], env(cwd), cwd);
  if (r.code !== 0) throw new Error(`${args[0]}: exit ${r.code}\n${r.stderr.slice(-1500)}`);
  return { rssMb: usage().maxRSS / 1024, wallS: r.ms / 1000 };
}

/** `status FILE` after the sandbox's staff paid the 20 payouts: its peak RSS in MB. */
async function status(sb: LocalSandbox, cwd: string, file: string, payoutIds: string[]): Promise<{ rssMb: number; wallS: number }> {
  for (const id of payoutIds)
    for (const to of ['PROCESSING', 'SUCCESSFUL']) {
      const r = await fetch(`${sb.url}/_sandbox/payouts/${id}/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ status: to }),
      });
      if (r.status !== 200) throw new Error(`control: ${r.status} ${await r.text()}`);
    }
  return peak(cwd, ['status', file, '--base-url', sb.url, '--rate', '1000']);
}

const rows: Cell[][] = [];
const sb = await startSandbox({ rateLimitPerSecond: null, monthlyQuota: null, autoAdvance: false });
try {
  for (const n of sizes) {
    const cwd = mkdtempSync(join(dir, `n${n}-`));
    const { file, payoutIds } = await grownResults(sb, cwd, n);
    const size = `${(statSync(file).size / MB).toFixed(0)} MB`;
    const l = await listen(cwd, file, payoutIds);
    await checked(file, n, 'PROCESSING');
    rows.push(['listen (20 deliveries)', n, size, `${l.wallS.toFixed(1)} s`, `${l.rssMb.toFixed(0)} MB`]);
    console.log(rows.at(-1)!.join('\t'));
    const s = await status(sb, cwd, file, payoutIds);
    await checked(file, n, 'SUCCESSFUL');
    rows.push(['status (20 moved)', n, size, `${s.wallS.toFixed(1)} s`, `${s.rssMb.toFixed(0)} MB`]);
    console.log(rows.at(-1)!.join('\t'));
    const report = join(cwd, 'status.pain002.xml');
    const p = await peak(cwd, ['status', file, '--base-url', sb.url, '--rate', '1000', '--status-report', report]);
    const txs = readFileSync(report, 'utf8').split('<TxInfAndSts>').length - 1;
    if (txs !== n) throw new Error(`${report}: ${txs} transactions, expected ${n}`);
    rows.push(['status --status-report', n, size, `${p.wallS.toFixed(1)} s`, `${p.rssMb.toFixed(0)} MB`]);
    console.log(rows.at(-1)!.join('\t'));
    const r = await peak(cwd, ['retry', file, '--yes', '--no-report', '--base-url', sb.url, '--rate', '1000']);
    await checked(file, n, 'SUCCESSFUL');
    rows.push(['retry (nothing to send)', n, size, `${r.wallS.toFixed(1)} s`, `${r.rssMb.toFixed(0)} MB`]);
    console.log(rows.at(-1)!.join('\t'));
    rmSync(cwd, { recursive: true, force: true });
  }
} finally {
  await sb.close();
  rmSync(dir, { recursive: true, force: true });
}
saveFigures({
  name: 'follow-up-memory',
  caption:
    'Peak RSS of the CLI applying 20 status changes to (or reading) a CSV results file of N rows (20 real payouts, the rest paid copies), in a child process',
  columns: ['command', 'rows', 'results file', 'wall', 'peak RSS'],
  rows,
});

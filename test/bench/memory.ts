// Peak memory and CPU of the CLI as the batch grows (issue 44): validate, plan (with the requests
// the sandbox counted) and run, for CSV and XLSX batches of 1,000, 10,000 and 100,000 rows, and a
// resume after kill -9 half way through a run.
//   npx tsx test/bench/memory.ts [--sizes 1000,10000,100000] [--formats csv,xlsx] [--rate 1000] [--run-up-to N] [--only validate|plan|run]
//
// Each command is the real CLI (node dist/bin.js) in a child process; its peak RSS and CPU time
// (user + system) are process.resourceUsage() read at its exit through a --require hook. The
// sandbox runs in this process with no rate limit and no monthly quota, its wallets funded for the
// whole batch; the client paces at --rate. The rows are the sample payroll's same-currency rows,
// unique references and amounts (batches.ts writeLargeBatch); the XLSX holds the same rows.
// Targets (issue 44): run of 10,000 rows ≤ 256 MB, of 100,000 ≤ 400 MB (CSV); validate of a
// 100,000-row workbook ≤ 500 MB.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as XLSX from 'xlsx';
import { parse } from 'csv-parse/sync';
import { defaultSeed, startSandbox } from '../../src/sandbox/start-sandbox.ts';
import { ROOT, cleanEnv } from '../engine/helpers.ts';
import { writeLargeBatch } from './batches.ts';
import { saveFigures, type Cell } from './figures.ts';

const MB = 1024 * 1024;
const { values } = parseArgs({
  options: {
    sizes: { type: 'string' },
    formats: { type: 'string' },
    rate: { type: 'string' },
    'run-up-to': { type: 'string' },
    only: { type: 'string' },
  },
});
const sizes = (values.sizes ?? '1000,10000,100000').split(',').map(Number);
const formats = (values.formats ?? 'csv,xlsx').split(',') as ('csv' | 'xlsx')[];
const rate = values.rate ?? '1000';
/** Batches larger than this are validated and planned, not run (a run of 100,000 rows takes most of an hour here). */
const runUpTo = Number(values['run-up-to'] ?? Infinity);
/** One command only (validate, plan or run): the others are not measured. */
const only = values.only;
const measure = (command: string) => only === undefined || only === command;

interface Point {
  code: number | null;
  rssMb: number;
  cpuS: number;
  wallS: number;
  requests?: number;
}

const dir = mkdtempSync(join(tmpdir(), 'pb-bench-memory-'));
const hook = join(dir, 'usage-hook.cjs');
writeFileSync(
  hook,
  'process.on("exit", () => { try { const u = process.resourceUsage(); require("fs").writeFileSync(process.env.PB_USAGE_FILE, JSON.stringify(u)); } catch {} });\n',
);
const usageFile = join(dir, 'usage.json');
const seed = defaultSeed();
for (const b of seed.businesses) b.wallets = b.wallets.map((w) => ({ ...w, balance: '100000000000.00' }));
const sb = await startSandbox({ rateLimitPerSecond: null, monthlyQuota: null, seed });
// (the sandbox keeps its last 100,000 requests: they are counted by time, never by the log's length)
let since = Date.now();
const requestsSince = () => {
  const n = sb.requestLog().filter((e) => e.at >= since).length;
  since = Date.now();
  return n;
};
/** Requests since the last count, without starting a new one. */
const sentSoFar = () => sb.requestLog().filter((e) => e.at >= since).length;

/** The CLI with these args to its end (or until `killWhen` says so: kill -9). */
function cli(args: string[], cwd: string, killWhen?: () => boolean): Promise<Point> {
  rmSync(usageFile, { force: true });
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(cwd, 'state'), PB_USAGE_FILE: usageFile, NODE_OPTIONS: `--require ${hook}` });
  const t0 = performance.now();
  const child = spawn(process.execPath, [join(ROOT, 'dist/bin.js'), ...args], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-2000)));
  let hwmMb = NaN; // a killed child's peak so far (Linux: VmHWM), read just before the kill
  const timer =
    killWhen &&
    setInterval(() => {
      if (child.killed || !killWhen()) return;
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      hwmMb = m ? Number(m[1]) / 1024 : NaN;
      child.kill('SIGKILL');
    }, 200);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (timer) clearInterval(timer);
      const wallS = (performance.now() - t0) / 1000;
      if (!existsSync(usageFile)) return resolve({ code, rssMb: hwmMb, cpuS: NaN, wallS }); // killed: no exit hook
      const u = JSON.parse(readFileSync(usageFile, 'utf8')) as NodeJS.ResourceUsage;
      if (code !== 0 && code !== 3) console.error(`${args[0]} exit ${code}: ${stderr}`);
      resolve({ code, rssMb: u.maxRSS / 1024, cpuS: (u.userCPUTime + u.systemCPUTime) / 1e6, wallS });
    });
  });
}

function toXlsx(csv: string, xlsx: string): void {
  const rows: string[][] = parse(readFileSync(csv), { relax_column_count: true });
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(rows), 'Payouts');
  writeFileSync(xlsx, XLSX.write(wb, { type: 'buffer', bookType: 'xlsx', compression: true }) as Buffer);
}

const table: Cell[][] = [];
const row = (what: string, format: string, n: number, p: Point) => {
  const cells: Cell[] = [
    what,
    format,
    n,
    p.code ?? 'killed',
    `${p.wallS.toFixed(1)} s`,
    Number.isNaN(p.cpuS) ? null : `${p.cpuS.toFixed(1)} s`,
    `${p.rssMb.toFixed(0)} MB`,
    p.requests ?? null,
  ];
  table.push(cells);
  console.log(cells.map((c) => String(c ?? '')).join('\t'));
};
const peaks = new Map<string, number>();
try {
  for (const n of sizes) {
    for (const format of formats) {
      const sub = join(dir, `${format}-${n}`);
      mkdirSync(sub);
      const csv = join(sub, 'batch.csv');
      await writeLargeBatch(csv, n, `M${format}${n}-`);
      const file = format === 'csv' ? csv : join(sub, 'batch.xlsx');
      if (format === 'xlsx') toXlsx(csv, file);
      console.log(`${format} ${n.toLocaleString('en')} rows, ${(statSync(file).size / MB).toFixed(1)} MB`);
      if (measure('validate')) {
        const v = await cli(['validate', file, '--max-problems', '1'], sub);
        row('validate', format, n, v);
        if (v.code === 0) peaks.set(`validate ${format} ${n}`, v.rssMb); // (a refused file is not a measure)
      }
      requestsSince();
      if (measure('plan')) {
        const p = await cli(['plan', file, '--out', join(sub, 'batch.plan.json'), '--base-url', sb.url, '--rate', rate], sub);
        row('plan --out', format, n, { ...p, requests: requestsSince() });
      }
      if (n > runUpTo || !measure('run')) continue;
      // run killed with SIGKILL half way through its initiates (its peak read from /proc until then), then resumed to the end
      const run = ['run', file, '--yes', '--base-url', sb.url, '--rate', rate];
      const killed = await cli(run, sub, () => sentSoFar() >= n / 2);
      row('run, until kill -9 half way', format, n, { ...killed, requests: requestsSince() });
      const resumed = await cli(run, sub);
      row('run resumed to the end', format, n, { ...resumed, requests: requestsSince() });
      if (resumed.code === 0 || resumed.code === 3) peaks.set(`run ${format} ${n}`, Math.max(killed.rssMb, resumed.rssMb));
      rmSync(sub, { recursive: true, force: true });
    }
  }
} finally {
  await sb.close();
  rmSync(dir, { recursive: true, force: true });
}
const target = (key: string, mb: number) => {
  const got = peaks.get(key);
  return got === undefined ? undefined : `${key}: ${got.toFixed(0)} MB (target ≤ ${mb} MB): ${got <= mb ? 'MET' : 'MISSED'}`;
};
const notes = [target('run csv 10000', 256), target('run csv 100000', 400), target('validate xlsx 100000', 500)].filter(
  (x): x is string => !!x,
);
saveFigures({
  name: 'memory',
  caption: `Peak RSS and CPU (user + system) of the CLI in a child process, sandbox in the bench's process with no rate limit, client at --rate ${rate}; requests counted at the sandbox`,
  columns: ['command', 'format', 'rows', 'exit', 'wall', 'CPU', 'peak RSS', 'requests'],
  rows: table,
  notes,
});
process.exitCode = notes.some((n) => n.endsWith('MISSED')) ? 1 : 0;

// What a CLI process costs to start: the CPU (user + sys) of short commands of the built CLI.
//   npx tsx test/bench/startup.ts [--runs K] [--baseline DIR]      (default 15 rounds)
// The suite and cron jobs start the CLI hundreds of times, and on a shared machine CPU is what
// each start takes from the others: CPU, not wall time, is the figure. Each child's CPU is the
// user + sys time bash's `times` reports for it once reaped (the child itself is not touched).
// Each round runs every command once, in turn, so a busy moment falls on all of them alike.
// --baseline DIR: a copy of another build's dist/ (`cp -r dist /tmp/before` before a change), run
// in the same rounds, alternating, each command's ratio to it in the last column. The figures go
// to test/bench/results/startup.json and the README's table (figures.ts). No target.
import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { saveFigures, type Cell } from './figures.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { values } = parseArgs({ options: { runs: { type: 'string' }, baseline: { type: 'string' } } });
const runs = Number(values.runs ?? 15);
const dir = mkdtempSync(join(tmpdir(), 'pb-startup-'));
const builds: [string, string][] = [['', join(ROOT, 'dist')]];
if (values.baseline) {
  // beside this clone's package.json and node_modules, as dist/ is (the CLI finds its version and iconv-lite there)
  const base = join(dir, 'before');
  cpSync(resolve(values.baseline), join(base, 'dist'), { recursive: true });
  copyFileSync(join(ROOT, 'package.json'), join(base, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(base, 'node_modules'));
  builds.unshift(['before: ', join(base, 'dist')]);
}
cpSync(join(ROOT, 'samples'), join(dir, 'samples'), { recursive: true });
const cases: { name: string; args: string[] }[] = [
  { name: '--version', args: ['--version'] },
  { name: 'validate (CSV, 52 rows)', args: ['validate', 'payroll-2025-01.csv'] },
  { name: 'validate (XLSX, 52 rows)', args: ['validate', 'payroll-2025-01.xlsx'] },
  { name: 'plan --env local (CSV)', args: ['plan', 'payroll-2025-01.csv', '--env', 'local', '--no-report'] },
];

/** user + sys seconds of `node ...args` run to its end, from bash's `times` (its children's line). */
function cpuOf(args: string[], stateDir: string): Promise<number> {
  const script = '"$@" >/dev/null 2>"$PB_ERR"; code=$?; times; exit $code';
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PAYOUT_BATCH_STATE_DIR: stateDir, PB_ERR: join(dir, 'stderr') };
  return new Promise((done, fail) => {
    const c = spawn('bash', ['-c', script, 'bash', process.execPath, ...args], {
      cwd: join(dir, 'samples'),
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('error', fail);
    c.on('close', (code) => {
      // "0m0.002s 0m0.001s\n0m0.310s 0m0.052s": the shell's own, then its children's
      const s = [...(out.trim().split('\n')[1] ?? '').matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
      if (code !== 0 || s.length !== 2) fail(new Error(`node ${args.join(' ')} exited ${code} (see ${join(dir, 'stderr')})`));
      else done(s[0]! + s[1]!);
    });
  });
}

const rowsToRun = [
  { name: 'node -e 0', args: ['-e', '0'] },
  ...builds.flatMap(([label, dist]) => cases.map((c) => ({ name: `${label}${c.name}`, args: [join(dist, 'bin.js'), ...c.args] }))),
];
const cpu = new Map(rowsToRun.map((r) => [r.name, [] as number[]]));
for (let i = 0; i < runs; i++) {
  for (const r of rowsToRun) {
    const state = mkdtempSync(join(dir, 'state-'));
    cpu.get(r.name)!.push(await cpuOf(r.args, state));
    rmSync(state, { recursive: true, force: true });
  }
}
rmSync(dir, { recursive: true, force: true });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (s: number) => Math.round(s * 1000);
const node = median(cpu.get('node -e 0')!);
const table: Cell[][] = rowsToRun.map((r) => {
  const xs = cpu.get(r.name)!;
  const before = builds.length > 1 && !r.name.startsWith('before: ') && r.name !== 'node -e 0' ? cpu.get(`before: ${r.name}`) : undefined;
  return [
    r.name,
    ms(median(xs)),
    ms(Math.min(...xs)),
    (median(xs) / node).toFixed(2),
    before ? (median(xs) / median(before)).toFixed(2) : null,
  ];
});
saveFigures({
  name: 'startup',
  caption: `CPU (user + sys) of each command of the built CLI in a child process, ${runs} rounds, every command once a round; ratio to \`node -e 0\` of the medians`,
  columns: ['command', 'median ms CPU', 'min ms CPU', '× node -e 0', ...(builds.length > 1 ? ['× before'] : [])],
  rows: builds.length > 1 ? table : table.map((r) => r.slice(0, 4)),
});

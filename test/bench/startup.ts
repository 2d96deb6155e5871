// How long the compiled CLI takes to start, as a ratio to a bare `node -e 0` on the same machine.
//   npx tsx test/bench/startup.ts [--runs K]          (default 15 rounds)
// Each round runs every command once, in turn, so a busy moment of this shared machine falls on
// all of them alike; the figure of each is its median. Targets (issue 18): --help and --version at
// most 3x node, `validate` of a 50-row file at most 5x. The figures go to
// test/bench/results/startup.json and the README's table (figures.ts). Exit 1 when a target is missed.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFlags, spawnChild } from './args.ts';
import { saveFigures } from './figures.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'dist/bin.js');
const runs = readFlags(process.argv.slice(2), ['runs']).num('runs') ?? 15;

// 50 rows of the sample payroll (52 rows, 9 methods): a small batch of every kind.
const dir = mkdtempSync(join(tmpdir(), 'pb-startup-'));
const sample = readFileSync(join(ROOT, 'samples/payroll-2025-01.csv'), 'utf8').trimEnd().split('\n');
const batch = join(dir, 'fifty.csv');
writeFileSync(batch, `${sample.slice(0, 51).join('\n')}\n`);
// the documents the rows name, so validate reads them as it does for users
cpSync(join(ROOT, 'samples/documents'), join(dir, 'documents'), { recursive: true });

const cases: { name: string; args: string[]; target?: number }[] = [
  { name: 'node -e 0', args: ['-e', '0'] },
  { name: 'payout-batch --version', args: [CLI, '--version'], target: 3 },
  { name: 'payout-batch --help', args: [CLI, '--help'], target: 3 },
  { name: 'payout-batch validate (50 rows)', args: [CLI, 'validate', batch], target: 5 },
];
const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
const times = new Map(cases.map((c) => [c.name, [] as number[]]));
for (let i = 0; i < runs; i++) {
  for (const c of cases) {
    const r = await spawnChild(c.args, env, dir);
    if (r.code !== 0) throw new Error(`${c.name} exited ${r.code}: ${r.stderr}`);
    times.get(c.name)!.push(r.ms);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const base = median(times.get('node -e 0')!);
let missed = 0;
const rows = cases.map((c) => {
  const ms = median(times.get(c.name)!);
  const ratio = ms / base;
  const met = c.target === undefined ? undefined : ratio <= c.target;
  if (met === false) missed++;
  return { command: c.name, medianMs: Math.round(ms), ratio: Number(ratio.toFixed(2)), target: c.target ?? null, met: met ?? null };
});
saveFigures({
  name: 'startup',
  caption: `Median of ${runs} rounds, each command's time as a ratio to \`node -e 0\` in the same round`,
  columns: ['command', 'median ms', 'ratio', 'target', ''],
  rows: rows.map((r) => [
    r.command,
    r.medianMs,
    r.ratio.toFixed(2),
    r.target ? `≤ ${r.target}` : null,
    r.met === null ? null : r.met ? 'MET' : 'MISSED',
  ]),
});
process.exitCode = missed ? 1 : 0;

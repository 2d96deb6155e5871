// Benchmark of `validate` against csv-parse alone, on a generated CSV (100,000 rows by default).
//   npx tsx test/bench/validate.ts [--rows N] [--runs K]        (a bare number is taken as --rows)
//
// What makes the comparison like-for-like:
// - Every phase runs in its own child process, started the same way (node --import tsx, this
//   file, which imports csv-parse and the validator in every phase), so each pays the same fixed
//   cost: Node, tsx's loader (a worker thread of its own on Node 20) and the modules. That cost is
//   measured by a phase that reads nothing ("startup") and shown separately.
// - The baseline reads the file as src/input/read-batch.ts does: a 64 KiB read stream into csv-parse
//   with the same options (delimiter, bom, utf8 decoding, relax_column_count, relax_quotes, CR/LF/
//   CRLF records, max_record_size), records taken with read() as they are buffered (no promise per
//   record).
// - Timing starts after the imports, at the first read, and ends with the last row consumed. Wall
//   time (best and median of the runs) and the CPU time of the process over the same span: on a
//   shared machine, CPU time varies less.
// - Memory: maxRSS of the process (process.resourceUsage(), everything the OS gave it: the fixed
//   cost included) and the peak of V8's used heap, sampled every 256 rows in both phases.
// No speed target: the code where money is decided has one obvious implementation (issue 19), and
// 100,000 rows are far beyond a month's quota; the ratio is shown to follow its trend. Target:
// memory flat (the peak heap does not grow with the file).
import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, writeFileSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import { parse } from 'csv-parse';
import { composeIBAN } from 'ibantools';
import { CANONICAL_FIELDS } from '../../src/input/batch-columns.ts';
import { MAX_RECORD_BYTES } from '../../src/input/size-limits.ts';
import { EXAMPLES, nubanCheckDigit } from '../validation/examples.ts';
import { validateBatch } from '../../src/validation/validation.ts';
import { saveFigures } from './figures.ts';

const self = fileURLToPath(import.meta.url);
const MB = 1024 * 1024;

/** A valid, varied row i: five methods, unique references and accounts. */
function row(i: number): string[] {
  const n = String(i).padStart(8, '0');
  const kind = i % 5;
  const method = (['NIP', 'SEPA', 'FASTER_PAYMENTS', 'ACH', 'HK_FPS'] as const)[kind]!;
  const ex = { ...EXAMPLES[method] };
  const r: Record<string, string> = { ...ex, reference: `BENCH-${n}`, documents: 'invoice.pdf', narration: `Salary ${n}` };
  r.sourceAmount = `${(i % 9000) + 100}.${String(i % 100).padStart(2, '0')}`;
  if (kind === 0) r.accountNumber = nubanCheckDigit('058', `1${n}`);
  if (kind === 1) r.iban = composeIBAN({ countryCode: 'DE', bban: `37040044${n}00` })!;
  if (kind === 2) {
    r.accountNumber = n;
    r.iban = composeIBAN({ countryCode: 'GB', bban: `NWBK601613${n}` })!;
  }
  if (kind === 3) r.accountNumber = `9${n}`;
  if (kind === 4) r.fpsId = `1${n}`.slice(0, 9);
  return CANONICAL_FIELDS.map((c) => r[c] ?? '');
}

const quote = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

async function generate(path: string, rows: number): Promise<void> {
  const out = createWriteStream(path);
  out.write(CANONICAL_FIELDS.join(',') + '\r\n');
  for (let i = 1; i <= rows; i++) {
    const cells = row(i);
    if (!out.write(cells.map(quote).join(',') + '\r\n')) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

let peakHeap = 0;
const sampleHeap = () => {
  const h = getHeapStatistics().used_heap_size;
  if (h > peakHeap) peakHeap = h;
};

/**
 * csv-parse alone, set up and consumed as src/input/read-batch.ts does for a UTF-8 comma-separated file:
 * 64 KiB reads, the same options, records taken with read() while some are buffered and a wait
 * for 'readable' when none are (the cheapest streamed way: no promise per record).
 */
async function phaseParse(file: string): Promise<number> {
  const input = createReadStream(file, { highWaterMark: 64 * 1024 });
  const parser = parse({
    delimiter: ',',
    bom: true,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: false,
    record_delimiter: ['\r\n', '\n', '\r'],
    from_line: 1,
    encoding: 'utf8',
    max_record_size: MAX_RECORD_BYTES,
  });
  input.pipe(parser);
  let ended = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const notify = () => wake?.();
  parser.on('readable', notify);
  parser.on('end', () => ((ended = true), notify()));
  parser.on('error', (e) => ((failure = e), notify()));
  let n = 0;
  for (;;) {
    if (failure) throw failure as Error;
    const rec = parser.read() as string[] | null;
    if (rec !== null) {
      if ((++n & 255) === 0) sampleHeap();
      continue;
    }
    if (ended) break;
    await new Promise<void>((resolve) => (wake = resolve));
  }
  return n - 1;
}

async function phaseValidate(file: string): Promise<number> {
  const v = await validateBatch(file);
  let errors = 0;
  let n = 0;
  for await (const r of v.rows) {
    if (!r.valid) errors++;
    if ((++n & 255) === 0) sampleHeap();
  }
  if (errors) throw new Error(`${errors} invalid rows in the benchmark file`);
  return v.summary.rows;
}

interface PhaseResult {
  rows: number;
  ms: number;
  cpuMs: number;
  maxRssMb: number;
  peakHeapMb: number;
  startRssMb: number;
  startHeapMb: number;
}

if (process.argv[2] === '--phase') {
  const [, , , phase, file] = process.argv;
  const startRssMb = process.memoryUsage().rss / MB;
  sampleHeap();
  const startHeapMb = peakHeap / MB;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const rows = phase === 'startup' ? 0 : await (phase === 'parse' ? phaseParse(file!) : phaseValidate(file!));
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  sampleHeap();
  const r: PhaseResult = {
    rows,
    ms,
    cpuMs: (cpu.user + cpu.system) / 1000,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    peakHeapMb: peakHeap / MB,
    startRssMb,
    startHeapMb,
  };
  process.stdout.write(JSON.stringify(r));
} else {
  const args = process.argv.slice(2);
  const given: Record<string, number> = {};
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--rows' || args[i] === '--runs') given[args[i]!] = Number(args[++i]);
    else if (/^\d+$/.test(args[i]!)) given['--rows'] = Number(args[i]);
    else throw new Error(`unknown argument ${args[i]}: use [--rows N] [--runs K]`);
  }
  const rows = given['--rows'] ?? 100_000;
  const runs = given['--runs'] ?? (rows > 300_000 ? 1 : 3);
  const dir = mkdtempSync(join(tmpdir(), 'pb-bench-'));
  try {
    const file = join(dir, 'batch.csv');
    writeFileSync(join(dir, 'invoice.pdf'), '%PDF-1.7\n%bench\n');
    await generate(file, rows);
    console.log(
      `${rows.toLocaleString('en')} rows, ${(statSync(file).size / MB).toFixed(1)} MB CSV, ${CANONICAL_FIELDS.length} columns; ${runs} run(s) per phase, alternating`,
    );
    const run = (phase: string): PhaseResult => {
      const r = spawnSync(process.execPath, ['--import', 'tsx', self, '--phase', phase, file], {
        encoding: 'utf8',
      });
      if (r.status !== 0) throw new Error(`${phase} failed: ${r.stderr}`);
      return JSON.parse(r.stdout) as PhaseResult;
    };
    const results: Record<string, PhaseResult[]> = { startup: [], parse: [], validate: [] };
    for (let i = 0; i < runs; i++) for (const p of ['startup', 'parse', 'validate']) results[p]!.push(run(p));
    const median = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
    };
    const stat = (p: string) => {
      const rs = results[p]!;
      return {
        rows: rs[0]!.rows,
        best: Math.min(...rs.map((r) => r.ms)),
        median: median(rs.map((r) => r.ms)),
        cpu: median(rs.map((r) => r.cpuMs)),
        rss: Math.max(...rs.map((r) => r.maxRssMb)),
        heap: Math.max(...rs.map((r) => r.peakHeapMb)),
      };
    };
    const st = stat('startup');
    const pa = stat('parse');
    const va = stat('validate');
    if (pa.rows !== va.rows) throw new Error(`parse counted ${pa.rows} rows, validate ${va.rows}`);
    const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    const line = (name: string, x: ReturnType<typeof stat>) =>
      `${name.padEnd(16)} ${s(x.best).padStart(8)} ${s(x.median).padStart(8)} ${s(x.cpu).padStart(8)} ${Math.round(x.rows / (x.best / 1000))
        .toLocaleString('en')
        .padStart(9)}  ` +
      `${x.rss.toFixed(0).padStart(4)} MB (+${(x.rss - st.rss).toFixed(0).padStart(3)})  ${x.heap.toFixed(0).padStart(4)} MB (+${(x.heap - st.heap).toFixed(0).padStart(3)})`;
    console.log(
      `${'phase'.padEnd(16)} ${'best'.padStart(8)} ${'median'.padStart(8)} ${'cpu'.padStart(8)} ${'rows/s'.padStart(9)}  ${'max RSS (over startup)'.padEnd(19)}  peak heap used (over startup)`,
    );
    console.log(
      `${'startup only'.padEnd(16)} ${''.padStart(8)} ${''.padStart(8)} ${''.padStart(8)} ${''.padStart(9)}  ${st.rss.toFixed(0).padStart(4)} MB         ${st.heap.toFixed(0).padStart(4)} MB`,
    );
    console.log(line('csv-parse alone', pa));
    console.log(line('validate', va));
    const ratio = (x: ReturnType<typeof stat>) =>
      `${(x.best / pa.best).toFixed(2)} best, ${(x.median / pa.median).toFixed(2)} median, ${(x.cpu / pa.cpu).toFixed(2)} by CPU time`;
    console.log(`ratio validate / parse: ${ratio(va)}`);
    console.log('wall times best and median, cpu = median CPU time (user + system, all threads: GC helpers too) of the phase;');
    console.log('startup = node + tsx loader + the modules, no file read; RSS and heap are the worst of the runs');
    const row = (name: string, x: ReturnType<typeof stat>) => [
      name,
      x.rows,
      s(x.best),
      s(x.median),
      s(x.cpu),
      `${x.rss.toFixed(0)} MB`,
      `${x.heap.toFixed(0)} MB`,
      (x.best / pa.best).toFixed(2),
    ];
    saveFigures({
      name: 'validate',
      caption: `A generated CSV of ${rows.toLocaleString('en')} rows, ${runs} run(s) per phase, each phase in a child process started the same way; ratio = best wall time over csv-parse's`,
      columns: ['phase', 'rows', 'best', 'median', 'CPU', 'max RSS', 'peak heap used', 'ratio'],
      rows: [
        ['startup only (node, tsx, the modules)', null, null, null, null, `${st.rss.toFixed(0)} MB`, `${st.heap.toFixed(0)} MB`, null],
        row('csv-parse alone', pa),
        row('validate', va),
      ],
      notes: ['No speed target (one implementation where money is decided); memory stays flat: the peak heap does not grow with the file.'],
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

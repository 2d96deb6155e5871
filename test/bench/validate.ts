// Benchmark of `validate` against csv-parse alone, on a generated 100,000-row CSV.
//   npx tsx test/bench/validate.ts [ROWS]
// Each phase runs in its own child process, so its peak memory (process.resourceUsage().maxRSS)
// is its own. Targets: validate / parse time <= 2, and flat memory under 150 MB.
import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, writeFileSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse';
import { composeIBAN } from 'ibantools';
import { CANONICAL_FIELDS } from '../../src/input/columns.ts';
import { EXAMPLES } from '../../src/validation/templates.ts';
import { nubanCheckDigit } from '../../src/validation/fields.ts';
import { validateBatch } from '../../src/validation/index.ts';

const self = fileURLToPath(import.meta.url);

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
    if (!out.write(row(i).map(quote).join(',') + '\r\n')) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

async function phaseParse(file: string): Promise<number> {
  const parser = createReadStream(file).pipe(parse({ bom: true, relax_column_count: true, relax_quotes: true, record_delimiter: ['\r\n', '\n', '\r'] }));
  let n = 0;
  for await (const _ of parser) n++;
  return n - 1;
}

async function phaseValidate(file: string): Promise<number> {
  const v = await validateBatch(file);
  let errors = 0;
  for await (const r of v.rows) if (!r.valid) errors++;
  if (errors) throw new Error(`${errors} invalid rows in the benchmark file`);
  return v.summary.rows;
}

if (process.argv[2] === '--phase') {
  const [, , , phase, file] = process.argv;
  const t0 = performance.now();
  const rows = await (phase === 'parse' ? phaseParse(file!) : phaseValidate(file!));
  const ms = performance.now() - t0;
  process.stdout.write(JSON.stringify({ rows, ms, maxRssMb: process.resourceUsage().maxRSS / 1024 }));
} else {
  const rows = Number(process.argv[2] ?? 100_000);
  const dir = mkdtempSync(join(tmpdir(), 'pb-bench-'));
  try {
    const file = join(dir, 'batch.csv');
    writeFileSync(join(dir, 'invoice.pdf'), '%PDF-1.7\n%bench\n');
    await generate(file, rows);
    console.log(`${rows} rows, ${(statSync(file).size / 1024 / 1024).toFixed(1)} MB CSV, ${CANONICAL_FIELDS.length} columns`);
    const run = (phase: string) => {
      const r = spawnSync(process.execPath, ['--import', 'tsx', self, '--phase', phase, file], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`${phase} failed: ${r.stderr}`);
      return JSON.parse(r.stdout) as { rows: number; ms: number; maxRssMb: number };
    };
    const results: Record<string, { rows: number; ms: number; maxRssMb: number }[]> = { parse: [], validate: [] };
    for (let i = 0; i < 3; i++) for (const p of ['parse', 'validate']) results[p]!.push(run(p));
    const best = (p: string) => results[p]!.reduce((a, b) => (a.ms < b.ms ? a : b));
    const parseR = best('parse');
    const val = best('validate');
    const fmt = (r: { rows: number; ms: number; maxRssMb: number }) => `${(r.ms / 1000).toFixed(2)} s (${Math.round(r.rows / (r.ms / 1000)).toLocaleString('en')} rows/s), peak RSS ${r.maxRssMb.toFixed(0)} MB`;
    console.log(`csv-parse alone: ${fmt(parseR)}`);
    console.log(`validate:        ${fmt(val)}`);
    console.log(`ratio validate / parse: ${(val.ms / parseR.ms).toFixed(2)} (target <= 2); best of 3 runs each`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

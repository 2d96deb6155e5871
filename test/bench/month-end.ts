// What the month-end loop costs of a key's month (issue 27): `run`, three `status` polls and
// `reconcile`, the loop the README teaches, on a batch without documents and on one whose rows
// name a few recurring documents, against an embedded sandbox in each reading of the spec.
//   npx tsx test/bench/month-end.ts [--rows 400] [--files 14]
//
// Every request is counted at the sandbox (its request log), never in the client: the spec's
// routes, which the key pays for (spec §8: 10,000 a month), apart from the PUTs to the document
// storage (no key, not counted: shown on their own). The CLI runs from dist/ as users run it,
// against a sandbox with no rate limit and the client at 1,000/s (the count, not the time, is
// measured). After the first poll the sandbox's staff pay half the payouts, after the second the
// rest, so each poll has payouts to follow and the reconcile sees them all paid. Rows per month = 10,000 / the loop per row.
// Targets: the loop ≤ 1.25 requests per row without documents and ≤ 1.35 with recurring
// documents; the README's approval flow (plan --out, then run --plan) ≤ 1.15 (issue 44: a plan
// quotes once per corridor, method and fee band); each poll and the reconcile ≤ 0.05 per row.
import { copyFileSync, appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFlags, spawnChild } from './args.ts';
import { saveFigures, type Cell } from './figures.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import type { SandboxShapes } from '../../src/sandbox/contract.ts';
import { readResults } from '../../src/results/results.ts';
import { MONTHLY_QUOTA } from '../../src/spec/codes.ts';
import { HEADER, ROOT, cleanEnv, generateCsv } from '../engine/helpers.ts';

const TARGET = { loopNoDocuments: 1.25, loopDocuments: 1.35, approvalFlow: 1.15, followUp: 0.05 };
/** Routes that are not the service's: the storage (no key) and the sandbox's own control routes. */
const NOT_COUNTED = new Set(['storagePut', 'storageGet', 'control']);

interface Step {
  step: string;
  requests: number;
  storagePuts: number;
  routes: Record<string, number>;
}

/** A batch of `rows` valid rows; with `files`, all but every 40th row name one of `files` distinct documents in turn. */
function writeBatchFile(dir: string, rows: number, files: number): string {
  const docs = Array.from({ length: files }, (_, i) => {
    const path = join(dir, `invoice-${i + 1}.pdf`);
    copyFileSync(join(ROOT, 'samples/documents/invoice-de-c1.pdf'), path);
    appendFileSync(path, `\n% copy ${i + 1}\n`); // another content, still a PDF
    return path;
  });
  const [header, ...lines] = generateCsv({ rows, prefix: files ? 'MD' : 'MN' })
    .trim()
    .split('\n');
  const out = lines.map((l, i) => {
    if (!files || i % 40 === 39) return l;
    const c = l.split(',');
    c[HEADER.indexOf('documents')] = docs[i % files]!;
    c[HEADER.indexOf('withdrawal')] = 'false';
    return c.join(',');
  });
  const file = join(dir, 'payroll.csv');
  writeFileSync(file, [header, ...out].join('\n') + '\n');
  return file;
}

/** One CLI command against the sandbox, and the requests it made there (status exits 5 while payouts are in progress). */
async function measured(sb: LocalSandbox, step: string, args: string[], dir: string): Promise<Step> {
  const before = sb.requestLog().length;
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const r = await spawnChild([join(ROOT, 'dist/bin.js'), ...args, '--base-url', sb.url, '--rate', '1000'], env, dir);
  if (r.code === null || r.code === 2 || r.code === 3 || r.code === 4)
    throw new Error(`${args.join(' ')}: exit ${r.code}\n${r.stderr.slice(-1500)}`);
  const log = sb.requestLog().slice(before);
  const routes: Record<string, number> = {};
  for (const e of log) if (!NOT_COUNTED.has(e.route)) routes[e.route] = (routes[e.route] ?? 0) + 1;
  return {
    step,
    requests: Object.values(routes).reduce((a, b) => a + b, 0),
    storagePuts: log.filter((e) => e.route === 'storagePut').length,
    routes,
  };
}

/** The sandbox's staff pay half the payouts of the results file, every other row from `from` (control routes: not counted). */
async function payHalf(sb: LocalSandbox, results: string, from: 0 | 1): Promise<void> {
  const ids = (await readResults(results)).rows.map((r) => r.result.payoutId).filter((id): id is string => !!id);
  for (const id of ids.filter((_, i) => i % 2 === from))
    for (const status of ['PROCESSING', 'SUCCESSFUL']) {
      const r = await fetch(`${sb.url}/_sandbox/payouts/${id}/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ status }),
      });
      if (r.status !== 200) throw new Error(`control ${status}: ${r.status} ${await r.text()}`);
    }
}

/**
 * The month-end loop on one batch in one reading: run (or, for the approval flow, `plan --out`
 * then `run --plan`), status ×3 (half paid after the first, the rest after the second), reconcile.
 */
async function loop(shapes: SandboxShapes, rows: number, files: number, approved: boolean): Promise<Step[]> {
  const dir = mkdtempSync(join(tmpdir(), 'pb-bench-month-end-'));
  const sb = await startSandbox({ shapes, rateLimitPerSecond: null, monthlyQuota: null, autoAdvance: false });
  try {
    writeBatchFile(dir, rows, files);
    const results = join(dir, 'payroll.results.csv');
    const steps = approved
      ? [
          await measured(sb, 'plan --out', ['plan', 'payroll.csv', '--out', 'payroll.plan.json'], dir),
          await measured(sb, 'run --plan', ['run', '--plan', 'payroll.plan.json', '--yes', '--no-report'], dir),
        ]
      : [await measured(sb, 'run', ['run', 'payroll.csv', '--yes', '--no-report'], dir)];
    for (let poll = 1; poll <= 3; poll++) {
      steps.push(await measured(sb, `status poll ${poll}`, ['status', results], dir));
      if (poll < 3) await payHalf(sb, results, poll === 1 ? 0 : 1);
    }
    steps.push(await measured(sb, 'reconcile', ['reconcile', results], dir));
    return steps;
  } finally {
    await sb.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const perRow = (n: number, rows: number) => (n / rows).toFixed(3);
const routesText = (r: Record<string, number>) =>
  Object.entries(r)
    .sort(([, a], [, b]) => b - a)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');

async function main(): Promise<number> {
  const { num } = readFlags(process.argv.slice(2), ['rows', 'files']);
  const rows = num('rows') ?? 400;
  const files = num('files') ?? 14;
  const table: Cell[][] = [];
  const notes: string[] = [];
  let met = true;
  for (const shapes of ['strict', 'variant'] as const) {
    for (const [docs, approved] of [
      [0, false],
      [files, false],
      [0, true],
    ] as const) {
      const batch = `${docs ? `${docs} recurring documents` : 'no documents'}${approved ? ', plan --out then run --plan' : ''}`;
      console.log(`${shapes}, ${rows} rows, ${batch} ...`);
      const steps = await loop(shapes, rows, docs, approved);
      const total = steps.reduce((a, s) => a + s.requests, 0);
      for (const s of steps) {
        const puts = s.storagePuts ? ` (+ ${s.storagePuts} storage PUTs, not counted)` : '';
        table.push([shapes, batch, s.step, s.requests, perRow(s.requests, rows), routesText(s.routes) + puts]);
      }
      const loopPerRow = total / rows;
      const perMonth = Math.floor(MONTHLY_QUOTA / loopPerRow);
      table.push([shapes, batch, '**the loop**', total, perRow(total, rows), `${perMonth.toLocaleString('en')} rows a month per key`]);
      const loopTarget = approved ? TARGET.approvalFlow : docs ? TARGET.loopDocuments : TARGET.loopNoDocuments;
      const followUps = steps
        .filter((s) => s.step.startsWith('status') || s.step === 'reconcile')
        .filter((s) => s.requests / rows > TARGET.followUp);
      const ok = loopPerRow <= loopTarget && followUps.length === 0;
      met &&= ok;
      notes.push(
        `${shapes}, ${batch}: the loop ${loopPerRow.toFixed(3)} per row (target ≤ ${loopTarget}), ` +
          `${followUps.length ? `over ${TARGET.followUp} per row: ${followUps.map((s) => s.step).join(', ')}` : `each poll and the reconcile ≤ ${TARGET.followUp} per row`}: ${ok ? 'MET' : 'MISSED'}.`,
      );
    }
  }
  saveFigures({
    name: 'month-end',
    caption: `The month-end loop on ${rows} rows, every request counted at the sandbox (storage PUTs apart), in both readings of the spec`,
    columns: ['reading', 'batch', 'step', 'requests', 'per row', 'by route'],
    rows: table,
    notes,
  });
  return met ? 0 : 1;
}

process.exitCode = await main();

// Where a benchmark's figures go: test/bench/results/<name>.json holds the measured data, and the
// table between `<!-- name -->` and `<!-- /name -->` in test/bench/README.md is rendered from that
// JSON alone. So the README's tables are always a script's output, never typed by hand, and
// `npx tsx test/bench/tables.ts` writes them all again from the JSON without measuring anything.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCH = fileURLToPath(new URL('.', import.meta.url));
const RESULTS = join(BENCH, 'results');
const README = join(BENCH, 'README.md');

export type Cell = string | number | null;

export interface Figures {
  /** The README block and JSON file name, e.g. "validate" or "throughput-5". */
  name: string;
  /** One sentence above the table: what was run and how to read it. */
  caption: string;
  columns: string[];
  rows: Cell[][];
  /** Lines under the table: ratios and targets, each a sentence. */
  notes?: string[];
}

interface Saved extends Figures {
  node: string;
  cpus: number;
  /** The 1-minute load average when the figures were saved: how busy the shared machine was. */
  load: number;
}

const cell = (c: Cell): string => (c === null ? '' : typeof c === 'number' ? c.toLocaleString('en') : c);

export function renderTable(f: Saved): string {
  return [
    `${f.caption} (Node ${f.node}, ${f.cpus} CPUs, load average ${f.load.toFixed(1)} at the end)`,
    '',
    `| ${f.columns.join(' | ')} |`,
    `|${f.columns.map(() => '---').join('|')}|`,
    ...f.rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
    ...(f.notes?.length ? ['', ...f.notes.map((n) => `- ${n}`)] : []),
  ].join('\n');
}

/** Replaces the README block of `name` (its markers must exist), leaving the rest as it is. */
function writeBlock(text: string, name: string, table: string): string {
  const [open, close] = [`<!-- ${name} -->`, `<!-- /${name} -->`];
  const a = text.indexOf(open);
  const b = text.indexOf(close);
  if (a === -1 || b < a) return text;
  return `${text.slice(0, a + open.length)}\n${table}\n${text.slice(b)}`;
}

/** Saves the figures as JSON, writes their README block, and prints the table. */
export function saveFigures(f: Figures): void {
  const saved: Saved = { ...f, node: process.version, cpus: availableParallelism(), load: loadavg()[0]! };
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(join(RESULTS, `${f.name}.json`), `${JSON.stringify(saved, null, 2)}\n`);
  const table = renderTable(saved);
  writeFileSync(README, writeBlock(readFileSync(README, 'utf8'), f.name, table));
  console.log(`\n${table}\n(saved to test/bench/results/${f.name}.json and test/bench/README.md)`);
}

/** Every README block written again from the JSON files. */
export function renderAll(): string[] {
  let text = readFileSync(README, 'utf8');
  const names = readdirSync(RESULTS)
    .filter((n) => n.endsWith('.json'))
    .map((n) => n.slice(0, -'.json'.length));
  for (const name of names) {
    const saved = JSON.parse(readFileSync(join(RESULTS, `${name}.json`), 'utf8')) as Saved;
    text = writeBlock(text, name, renderTable(saved));
  }
  writeFileSync(README, text);
  return names;
}

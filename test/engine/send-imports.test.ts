// The files of the send step import no file that imports them back (issue 38: execute.ts and
// outcome.ts imported each other): read from the sources' import lines, type-only imports included.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');
const MONEY_PATH = [
  'engine/execute.ts',
  'engine/outcome.ts',
  'engine/send.ts',
  'engine/swap-send.ts',
  'engine/swap.ts',
  'journal/lines.ts',
];

/** Each source file of src/ and the files of src/ it imports. */
function importGraph(): Map<string, string[]> {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const text = readFileSync(join(SRC, f), 'utf8');
    const specifiers = [...text.matchAll(/^(?:import|export)\b[^;]*?from\s+'(\.[^']+)'/gms)].map((m) => m[1]!);
    graph.set(
      f,
      specifiers.map((s) => relative(SRC, resolve(SRC, dirname(f), s))),
    );
  }
  return graph;
}

/** The files reachable from `from` (itself excluded unless a path leads back to it). */
function reachable(graph: Map<string, string[]>, from: string): Set<string> {
  const seen = new Set<string>();
  const todo = [...(graph.get(from) ?? [])];
  for (let f = todo.pop(); f !== undefined; f = todo.pop()) {
    if (seen.has(f)) continue;
    seen.add(f);
    todo.push(...(graph.get(f) ?? []));
  }
  return seen;
}

describe('the send step has no import cycle', () => {
  const graph = importGraph();

  it.each(MONEY_PATH)('%s imports nothing that leads back to it', (file) => {
    expect(graph.has(file)).toBe(true);
    expect(reachable(graph, file).has(file)).toBe(false);
  });
});

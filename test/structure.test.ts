// No file-level import cycle in src/ (issue 38): every relative import, `import type` and
// `export ... from` included (a cycle of types is still two files that cannot be read apart), and
// `import('...')` of a literal path. The cycles are the strongly connected components of the graph
// of files (Tarjan), so a cycle through many files is reported once, with all of them.
// Also: a test file that mocks a module runs in vitest's isolated project (test/vitest.config.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const IMPORT =
  /^\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*(?:\/\*[^*]*\*\/\s*)?['"](\.{1,2}\/[^'"]+)['"]\s*\)/gm;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(posix.join(dir, e.name)) : e.name.endsWith('.ts') ? [posix.join(dir, e.name)] : [],
  );
}

/** File -> the files of the graph it imports, by relative path from the repository root. */
function importGraph(files: readonly string[], read: (file: string) => string): Map<string, string[]> {
  const known = new Set(files);
  return new Map(
    files.map((f) => {
      const targets = [...read(f).matchAll(IMPORT)].map((m) => posix.normalize(posix.join(posix.dirname(f), m[1] ?? m[2]!)));
      return [f, [...new Set(targets.filter((t) => known.has(t)))]];
    }),
  );
}

/** The import cycles: each strongly connected component of more than one file (or a file importing itself), sorted. */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.includes(v)) cycles.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

const files = sourceFiles('src');
const cycles = importCycles(importGraph(files, (f) => readFileSync(join(ROOT, f), 'utf8')));
const key = (cycle: readonly string[]) => cycle.join(' -> ');

describe('import cycles in src/', () => {
  it('finds a cycle of types, of a re-export and of import(), and none in a chain', () => {
    const texts: Record<string, string> = {
      'src/a.ts': "import type { B } from './b.ts';\nimport { c } from './x/c.ts';",
      'src/b.ts': "export { a } from './a.ts';",
      'src/x/c.ts': "const d = await import('../x/d.ts');",
      'src/x/d.ts': "import { money } from '../../src/money.ts';\nimport { c } from './c.ts';",
      'src/e.ts': "import { a } from './a.ts';",
    };
    expect(importCycles(importGraph(Object.keys(texts), (f) => texts[f]!))).toEqual([
      ['src/a.ts', 'src/b.ts'],
      ['src/x/c.ts', 'src/x/d.ts'],
    ]);
  });

  it('has none', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(cycles.map(key)).toEqual([]);
  });
});

describe('test files that mock a module (vi.mock)', () => {
  it('run in the isolated project: in the shared module cache the real module may be loaded already', () => {
    const config = readFileSync(join(ROOT, 'test/vitest.config.ts'), 'utf8');
    const mocking = sourceFiles('test').filter((f) => f.endsWith('.test.ts') && /\bvi\.mock\(/.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(mocking.length).toBeGreaterThan(0);
    expect(mocking.filter((f) => !config.includes(`'${f}'`))).toEqual([]);
  });
});

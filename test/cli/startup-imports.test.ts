// What a command loads before it runs: the modules esbuild puts in the chunks its file imports
// statically (its start-up CPU is mostly their compilation: test/bench/startup.ts). Built as
// package.json's build script builds dist/, with a metafile, into a temporary folder.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../engine/helpers.ts';

interface Metafile {
  outputs: Record<
    string,
    { entryPoint?: string; inputs: Record<string, unknown>; imports: { path: string; kind: string; external?: boolean }[] }
  >;
}

const dir = mkdtempSync(join(tmpdir(), 'pb-startup-imports-'));
let meta: Metafile;
beforeAll(() => {
  const script = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { build: string } }).scripts.build;
  const esbuild = script.slice(script.indexOf('esbuild ')).replace('--outdir=dist', `--outdir=${dir}/out --metafile=${dir}/meta.json`);
  execFileSync('sh', ['-c', `PATH="${ROOT}/node_modules/.bin:$PATH" ${esbuild}`], { cwd: ROOT });
  meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as Metafile;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The source files and packages in the chunks `entry`'s chunk imports statically, its own included. */
function loadedBy(entry: string): string[] {
  const first = Object.keys(meta.outputs).find((o) => meta.outputs[o]!.entryPoint === entry);
  if (!first) throw new Error(`no output for ${entry}`);
  const seen = new Set<string>();
  for (const todo = [first]; todo.length;) {
    const o = todo.pop()!;
    if (seen.has(o)) continue;
    seen.add(o);
    todo.push(...meta.outputs[o]!.imports.filter((i) => i.kind === 'import-statement' && !i.external).map((i) => i.path));
  }
  return [...seen].flatMap((o) => Object.keys(meta.outputs[o]!.inputs));
}
const packages = (inputs: string[]) => new Set(inputs.flatMap((i) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(i)?.[1] ?? []));

describe('what a command loads at start', () => {
  it('--version and --help load yargs, not the engine nor zod', () => {
    const loaded = loadedBy('src/cli/main.ts');
    expect(packages(loaded)).toContain('yargs');
    for (const p of ['zod', 'xlsx', 'pino', 'csv-parse', 'unhomoglyph']) expect(packages(loaded)).not.toContain(p);
    expect(loaded.filter((i) => i.startsWith('src/engine/'))).toEqual([]);
  });

  it('validate loads the readers and the rules, not the engine, the logger or SheetJS', () => {
    const loaded = loadedBy('src/cli/commands/validate.ts');
    expect(loaded).toContain('src/validation/validation.ts');
    for (const p of ['xlsx', 'pino', 'cli-progress', 'unhomoglyph']) expect(packages(loaded)).not.toContain(p);
    expect(loaded.filter((i) => i.startsWith('src/engine/'))).toEqual([]);
  });

  it('no command loads SheetJS before it reads or writes a workbook', () => {
    const commands = Object.values(meta.outputs).flatMap((o) => (o.entryPoint?.startsWith('src/cli/commands/') ? [o.entryPoint] : []));
    expect(commands).toContain('src/cli/commands/run.ts');
    for (const c of commands) expect([c, packages(loadedBy(c)).has('xlsx')]).toEqual([c, false]);
  });
});

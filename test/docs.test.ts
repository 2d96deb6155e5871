// Docs that cannot drift (issue 38): every path a Markdown file of the repository names exists.
// A path is a token starting src/, test/, templates/ or samples/ (from the repository root), the
// target of a relative link [text](target) (from the Markdown file's folder), or, in a README of
// src/, a source file named in backticks (`watcher.ts`, `engine/ledger.ts`: from the README's folder, or
// from src/). A token with a placeholder (<name>, *, {a,b}, ...) names a pattern, not a file.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SKIP = new Set(['node_modules', 'dist', 'coverage', '.git']);

function filesIn(dir: string, ext: RegExp): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    if (SKIP.has(e.name)) return [];
    const path = posix.join(dir, e.name);
    return e.isDirectory() ? filesIn(path, ext) : ext.test(e.name) ? [path] : [];
  });
}

const ROOTED = /(?<![\w./@-])(?:src|test|templates|samples)\/[\w./<>*{},-]*/g;
const LINK = /\]\(([^)\s]+)\)/g;
const FILE = /`((?:[\w.-]+\/)*[\w-][\w.-]*\.(?:ts|md))`/g;

/** The paths a Markdown text names, from the repository root ([line, path]); a file named in a README of src/: each place it may be. */
function namedPaths(file: string, text: string): [number, string | string[]][] {
  const out: [number, string | string[]][] = [];
  const folder = posix.dirname(file);
  text.split('\n').forEach((line, i) => {
    if (file.startsWith('src/'))
      for (const [, name] of line.matchAll(FILE))
        if (!/^(src|test|templates|samples)\//.test(name!)) out.push([i + 1, [posix.join(folder, name!), posix.join('src', name!)]]);
    for (const [token] of line.matchAll(ROOTED)) out.push([i + 1, token.replace(/[.,]+$/, '')]);
    for (const [, target] of line.matchAll(LINK)) {
      if (/^[a-z][a-z0-9+.-]*:|^#/i.test(target!)) continue; // a URL or an anchor of this page
      out.push([i + 1, posix.normalize(posix.join(posix.dirname(file), target!.replace(/#.*$/, '')))]);
    }
  });
  return out.filter(([, p]) => ![p].flat().some((one) => /[<>*{}]|\.\.\./.test(one)));
}

/** A relative path (`../x`, `./x/y`) that a text names, with where it leads from the file's folder. */
const RELATIVE = /(?<![\w./-])\.{1,2}\/[\w./-]*/g;

/**
 * The paths of a text that lead out of the repository ([line, path]): a relative one climbing
 * above the root from the file's folder, or an absolute one to a Markdown file (the spec is cited
 * by section: a reader of the repository has no folder beside it).
 */
function pathsOutside(file: string, text: string): [number, string][] {
  const out: [number, string][] = [];
  text.split('\n').forEach((line, i) => {
    for (const [token] of line.matchAll(RELATIVE))
      if (posix.normalize(posix.join(posix.dirname(file), token)).startsWith('../')) out.push([i + 1, token]);
    for (const [, token] of line.matchAll(/(?<![\w.])(\/(?:[\w.-]+\/)+[\w.-]+\.md)\b/g)) out.push([i + 1, token!]);
  });
  return out;
}

describe('docs', () => {
  const files = filesIn('.', /\.md$/);

  it('every path a Markdown file names exists', () => {
    expect(files).toContain('README.md');
    const missing = files.flatMap((file) =>
      namedPaths(file, readFileSync(join(ROOT, file), 'utf8'))
        .filter(([, path]) => ![path].flat().some((one) => existsSync(join(ROOT, one))))
        .map(([line, path]) => `${file}:${line}: ${[path].flat()[0]}`),
    );
    expect(missing).toEqual([]);
  });

  it('names no path outside the repository, in Markdown, code or tests (issue 43, 15f)', () => {
    // (tests also write paths as data: an upward one is a traversal tried, so only absolute ones count there)
    const outside = filesIn('.', /\.(md|ts|js|json|sh|ya?ml)$/).flatMap((file) =>
      pathsOutside(file, readFileSync(join(ROOT, file), 'utf8'))
        .filter(([, path]) => path.startsWith('/') || file.endsWith('.md') || file.startsWith('src/'))
        .map(([line, path]) => `${file}:${line}: ${path}`),
    );
    expect(outside).toEqual([]);
  });

  it('sees a path leaving the repository: climbing above the root, or absolute to a Markdown file', () => {
    // (written so, this file names no such path itself)
    const [up, absolute] = ['../'.repeat(3), '/' + 'work/shared/spec.md'];
    const text = `The spec (\`${up}shared/spec.md\`, [spec](${up}shared/spec.md)); \`../spec/codes.ts\`, ${absolute}.`;
    expect(pathsOutside('src/sandbox/README.md', text)).toEqual([
      [1, `${up}shared/spec.md`],
      [1, `${up}shared/spec.md`],
      [1, absolute],
    ]);
    expect(pathsOutside('src/sandbox/routes/swaps.ts', "import { x } from '../../spec/codes.ts';")).toEqual([]);
  });

  it('sees a missing path, a rooted one and a link, and skips URLs, anchors and patterns', () => {
    const text = 'See `src/nowhere.ts`, [the spec](../x/y.md#a), [web](https://e.org/src/a), [top](#t), src/<folder>/, src/money.ts.';
    expect(namedPaths('src/README.md', text)).toEqual([
      [1, 'src/nowhere.ts'],
      [1, 'src/money.ts'],
      [1, 'x/y.md'],
    ]);
    expect(namedPaths('src/box/README.md', 'In `sub/file.ts`, not `<name>.ts`.')).toEqual([
      [1, ['src/box/sub/file.ts', 'src/sub/file.ts']],
    ]);
  });
});

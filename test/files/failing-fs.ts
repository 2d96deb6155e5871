// node:fs (or node:fs/promises) whose calls fail on one path with an errno, as a failing disk,
// another user's file or a 0700 folder make them fail for a user who is not root (the tests run as
// root). vi.mock is hoisted above the imports, so the failures live in vi.hoisted:
//
//   const failing = vi.hoisted(() => new Map<string, Failure>());
//   vi.mock('node:fs', async (real) => (await import('../files/failing-fs.ts')).failingFs(await real(), failing));
//   failing.set('readdirSync', { path, code: 'EACCES' }); ... failing.clear();
//
// The file then goes in the ISOLATED list of test/vitest.config.ts (a module graph of its own).

import { Readable } from 'node:stream';

export interface Failure {
  path: string;
  code: string;
  /** How many calls have failed so far (a test waits on it, never on a time). */
  hits?: number;
}

/**
 * Wrapped by name: what src/ calls; existsSync answers false on a failure, as Node's does on any error; createReadStream
 * returns a stream that fails when read, as Node's does.
 */
const NAMES = [
  'readdirSync',
  'readFileSync',
  'statSync',
  'lstatSync',
  'existsSync',
  'utimesSync',
  'utimes',
  'createReadStream',
  'open',
  'readFile',
  'readdir',
  'stat',
];

export function failingFs<T extends object>(real: T, failing: Map<string, Failure>): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(real)) {
    if (!NAMES.includes(name) || typeof f !== 'function') continue;
    wrapped[name] = (...a: unknown[]): unknown => {
      const failure = failing.get(name);
      if (!failure || String(a[0]) !== failure.path) return (f as (...a: unknown[]) => unknown)(...a);
      failure.hits = (failure.hits ?? 0) + 1;
      if (name === 'existsSync') return false;
      const e = Object.assign(new Error(`${failure.code}: ${name} '${failure.path}'`), { code: failure.code });
      if (name === 'createReadStream')
        return new Readable({
          read() {
            this.destroy(e);
          },
        });
      if (name.endsWith('Sync')) throw e;
      return Promise.reject(e);
    };
  }
  return { ...real, ...wrapped, default: { ...real, ...wrapped } };
}

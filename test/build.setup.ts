// vitest globalSetup: the end-to-end tests spawn the compiled CLI (dist/bin.js), as users run
// it. Build it first when any source is newer than the last build, so a test never runs stale code.
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

export default function buildOnce(): void {
  let built = 0;
  try {
    built = statSync(join(ROOT, 'dist/bin.js')).mtimeMs;
  } catch {
    // never built
  }
  if (built >= newest(join(ROOT, 'src'))) return;
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
}

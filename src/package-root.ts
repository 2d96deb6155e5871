// The folder of our package.json, wherever this code runs from: src/ (the tests), dist/ (the
// bundled CLI, whose chunks all sit in one folder) or an installed copy under node_modules.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function packageRoot(): string {
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`payout-batch: no package.json above ${start}`);
  }
}

/** Our package.json: the version, and an installation's `payoutBatch` settings. */
export const packageJson = () =>
  JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string; payoutBatch?: { hostFolder?: unknown } };

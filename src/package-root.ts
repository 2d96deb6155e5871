// The folder of our package.json, from src/ (tests), dist/ (the CLI) or under node_modules.
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

export const packageJson = () =>
  JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string; payoutBatch?: { hostFolder?: unknown } };

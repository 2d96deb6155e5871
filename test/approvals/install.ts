// The package installed into a folder of its own, as test/pack.sh installs it (its dist copied,
// its dependencies linked), with the host's folder of approval policies fixed by the installation
// (package.json "payoutBatch.hostFolder", src/approvals/account-policy.ts hostFolder): what every
// run of that installation sees, whatever its flags, variables or state folder. A test file that
// mocks packageJson() to return `hostFolder` runs main() in its worker under the same folder
// (policy-holds.e2e.test.ts), for the steps that are not about a process.
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../engine/helpers.ts';

export interface Installation {
  /** The installed `dist/bin.js`, for runCli's `bin`. */
  bin: string;
  /** The host folder of its policies. */
  hostFolder: string;
}

export function install(dir: string): Installation {
  const pkg = join(dir, 'lib', 'node_modules', 'payout-batch');
  mkdirSync(pkg, { recursive: true });
  // (without the source maps, half of dist's bytes: node reads them only with --enable-source-maps)
  cpSync(join(ROOT, 'dist'), join(pkg, 'dist'), { recursive: true, filter: (f) => !f.endsWith('.map') });
  symlinkSync(join(ROOT, 'node_modules'), join(pkg, 'node_modules'));
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ ...manifest, payoutBatch: { hostFolder: '../../../etc/payout-batch' } }));
  return { bin: join(pkg, 'dist', 'bin.js'), hostFolder: join(dir, 'etc', 'payout-batch') };
}

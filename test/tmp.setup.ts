// vitest globalSetup: the run's temporary files in memory. On this machine /tmp is on the disk, and
// the CLI syncs every journal line and every file it replaces (src/files/atomic.ts): a 4-row run
// waited 0.34 s on fsync there, against 0.004 s on tmpfs, and the end-to-end tests run hundreds.
// What they test (a process killed, then resumed) does not depend on the disk. So, unless $TMPDIR
// is set, the run's folders (the state folders of state.setup.ts, the tests' folders, the
// PostgreSQL cluster of pg/pg.setup.ts) go in a folder of /dev/shm, removed with what the tests
// left in it when the run ends; the workers and the CLIs they spawn inherit $TMPDIR. Not where
// /dev/shm is missing or small (a container's is often 64 MB, less than the cluster and the big
// input files of the run take).
import { chmodSync, existsSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';

const ENOUGH = 2 * 1024 ** 3;

export default function tmpInMemory(): (() => void) | undefined {
  if (process.env.TMPDIR || !existsSync('/dev/shm')) return undefined;
  const free = statfsSync('/dev/shm');
  if (free.bavail * free.bsize < ENOUGH) return undefined;
  const dir = mkdtempSync(join('/dev/shm', 'pb-test-'));
  chmodSync(dir, 0o1777); // as /tmp: the cluster's server runs as the postgres user (pg/cluster.ts)
  process.env.TMPDIR = dir;
  return () => {
    delete process.env.TMPDIR;
    rmSync(dir, { recursive: true, force: true });
  };
}

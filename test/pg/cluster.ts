// A throwaway PostgreSQL cluster for the team ledger's tests: Debian's server binaries, a data
// folder in the temporary folder, 127.0.0.1 on a free port, password authentication (scram), no
// fsync (a test's data need not survive a power cut). The server refuses to run as root, so when
// the tests run as root (CI's container) its programs run as the unprivileged `postgres` user
// that Debian's package creates (runuser).
//
// (synchronous_commit off by default here, as a hurried administrator might set it: the ledger's
// transactions turn it on for themselves, and the test of a server killed mid-run shows they must.)
//
// `.ci/run` installs the packages; the global setup (pg.setup.ts) starts one cluster for the whole
// run and hands its address to the tests in $PAYOUT_BATCH_TEST_DATABASE_URL; a test that kills the
// server starts a cluster of its own. Without the binaries the ledger's tests are skipped and say
// so, unless $PAYOUT_BATCH_REQUIRE_POSTGRES is set (CI), where that is a failure.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export const TEST_DATABASE_URL_VAR = 'PAYOUT_BATCH_TEST_DATABASE_URL';

/** The folder of Debian's PostgreSQL server programs (the newest version installed), if any. */
export function postgresBin(): string | undefined {
  const fromEnv = process.env.PAYOUT_BATCH_POSTGRES_BIN;
  if (fromEnv) return existsSync(join(fromEnv, 'initdb')) ? fromEnv : undefined;
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(base, versions[0], 'bin') : undefined;
}

/** Whether the ledger's tests can run here; throws where they must (CI). */
export function postgresAvailable(): boolean {
  const ok = !!process.env[TEST_DATABASE_URL_VAR] || !!postgresBin();
  if (!ok && process.env.PAYOUT_BATCH_REQUIRE_POSTGRES)
    throw new Error('PostgreSQL is required here ($PAYOUT_BATCH_REQUIRE_POSTGRES) and its server programs were not found');
  return ok;
}

const asRoot = process.getuid?.() === 0;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface Cluster {
  /** postgres://payout:PASSWORD@127.0.0.1:PORT/postgres */
  url: string;
  user: string;
  password: string;
  port: number;
  dir: string;
  /** Starts the server (again) on the same port and data. */
  start(): void;
  /** Stops it: `immediate` is a crash (kill -9 of the server's processes), `fast` a clean stop. */
  stop(mode?: 'immediate' | 'fast'): void;
  /** A new empty database of this cluster, with the ledger's schema applied unless `init: false`. */
  newDatabase(o?: { init?: boolean }): Promise<string>;
  /** Stops the server and removes its folder. */
  destroy(): void;
}

export async function startCluster(): Promise<Cluster> {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL server programs not found (apt-get install postgresql)');
  const dir = mkdtempSync(join(tmpdir(), 'payout-batch-pg-'));
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  const user = 'payout';
  const data = join(dir, 'data');
  writeFileSync(join(dir, 'pwfile'), password + '\n');
  if (asRoot) {
    chmodSync(dir, 0o700);
    chownSync(dir, uidOf('postgres'), gidOf('postgres'));
    chownSync(join(dir, 'pwfile'), uidOf('postgres'), gidOf('postgres'));
  }
  const run = (prog: string, args: string[]) => {
    const cmd = asRoot ? 'runuser' : join(bin, prog);
    const argv = asRoot ? ['-u', 'postgres', '--', join(bin, prog), ...args] : args;
    // (in the C locale: initdb refuses a LANG the machine has no locale for, as when the suite runs under another one)
    const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 60_000, env: { ...process.env, LC_ALL: 'C' } });
    if (r.status !== 0) throw new Error(`${prog} ${args.join(' ')}: exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  };
  run('initdb', ['-D', data, '-A', 'scram-sha-256', '-U', user, `--pwfile=${join(dir, 'pwfile')}`, '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c max_connections=200`;
  const start = () => run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', opts, '-w', '-t', '60', 'start']);
  start();
  const url = `postgres://${user}:${password}@127.0.0.1:${port}/postgres`;
  let n = 0;
  return {
    url,
    user,
    password,
    port,
    dir,
    start,
    stop: (mode = 'fast') => run('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']),
    newDatabase: (o) => newDatabase(url, `t${process.pid}_${++n}_${Math.random().toString(36).slice(2, 8)}`, o),
    destroy: () => {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        /* not running */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A new database in the cluster of `url`, with the ledger's schema unless `init: false`; its URL. */
export async function newDatabase(url: string, name?: string, o: { init?: boolean } = {}): Promise<string> {
  const db = name ?? `t${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE ${db}`);
  } finally {
    await c.end();
  }
  const u = new URL(url);
  u.pathname = `/${db}`;
  const out = u.toString();
  if (o.init !== false) {
    const { TeamDb } = await import('../../src/ledger/pg-db.ts');
    const { migrate } = await import('../../src/ledger/schema.ts');
    const t = await TeamDb.open(out, { init: true });
    try {
      await migrate(t, 'test');
    } finally {
      await t.close();
    }
  }
  return out;
}

const idOf = (flag: '-u' | '-g', name: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());
const uidOf = (name: string) => idOf('-u', name);
const gidOf = (name: string) => idOf('-g', name);

// The database of a ledger test: a new one per call, in the run's cluster ($PAYOUT_BATCH_TEST_DATABASE_URL,
// started by the global setup) or, without it, in a cluster this worker starts (cluster.ts).
import { TeamDb } from '../../src/ledger/pg-db.ts';
import { newDatabase, postgresAvailable, startCluster, TEST_DATABASE_URL_VAR } from './cluster.ts';

/** The ledger's tests run here (PostgreSQL's programs are installed, or a server was given). */
export const withPostgres = postgresAvailable();

let own: Promise<string> | undefined;

/** A new database with the ledger's schema (or none, with init: false); its URL, password included. */
export async function testDatabase(o: { init?: boolean } = {}): Promise<string> {
  const given = process.env[TEST_DATABASE_URL_VAR];
  const base =
    given ??
    (await (own ??= startCluster().then((c) => {
      // vitest ends its workers with SIGTERM, whose default action skips 'exit': the server
      // would outlive the run
      process.once('exit', () => c.destroy());
      process.once('SIGTERM', () => process.exit(143));
      return c.url;
    })));
  return newDatabase(base, undefined, o);
}

/**
 * Processes on one new test database (`init()` in beforeAll): each `connect()` is one, with its own
 * session lock; `closeAll()` closes those still open.
 */
export function ledgerProcesses(command = 'test') {
  const open: TeamDb[] = [];
  let url = '';
  return {
    init: async () => {
      url = await testDatabase();
    },
    connect: async (o: { timeout?: number } = {}) => {
      const db = await TeamDb.open(url, { command, ...o });
      open.push(db);
      return db;
    },
    closeAll: async () => {
      await Promise.all(open.splice(0).map((db) => db.close()));
    },
  };
}

/** A test ledger's URL as --ledger takes it, without its password (other users see a command line in ps), and that password. */
export function withoutPassword(url: string): { url: string; PGPASSWORD: string } {
  const u = new URL(url);
  const PGPASSWORD = decodeURIComponent(u.password);
  u.password = '';
  return { url: u.toString(), PGPASSWORD };
}

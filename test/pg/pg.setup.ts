// vitest globalSetup: one throwaway PostgreSQL cluster for the whole run (cluster.ts), when the
// server's programs are here and no server was given in $PAYOUT_BATCH_TEST_DATABASE_URL. Its
// address goes to the workers in that variable (they are started after this, with this process's
// environment); each ledger test file takes a database of its own in it (database.ts). A test that
// kills the server starts a cluster of its own. About 1.5 s, paid once per run.
import { postgresBin, startCluster, TEST_DATABASE_URL_VAR } from './cluster.ts';

export default async function startRunCluster(): Promise<(() => void) | undefined> {
  // (without the programs the ledger's tests skip, or fail where $PAYOUT_BATCH_REQUIRE_POSTGRES
  // says PostgreSQL is required: database.ts; the file ledger's tests run either way)
  if (process.env[TEST_DATABASE_URL_VAR] || !postgresBin()) return undefined;
  const cluster = await startCluster();
  process.env[TEST_DATABASE_URL_VAR] = cluster.url;
  return () => {
    delete process.env[TEST_DATABASE_URL_VAR];
    cluster.destroy();
  };
}

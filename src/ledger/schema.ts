// The team ledger's schema in PostgreSQL, versioned: `payout-batch ledger init` applies the
// migrations not applied yet, in order, each in one transaction under an advisory lock (two hosts
// running init at once apply each migration once). Every other command checks the version and
// refuses a database that is not initialised or is newer than this tool (README.md beside this file).
//
// A migration, once released, is never edited: a change is a new migration.
import type { QueryResultRow } from 'pg';

/** A database client or pool: what a transaction's body is given. */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(sql: string, params?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
}

export const SCHEMA = 'payout_batch';

/** Migration N brings the schema from version N-1 to N. */
export const MIGRATIONS: readonly string[] = [
  // 1: the ledger of every account, the key's pace and month, the watch claims
  `
  CREATE SCHEMA IF NOT EXISTS payout_batch;
  CREATE TABLE payout_batch.schema_version (
    version    integer PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now(),
    tool       text NOT NULL
  );

  -- One row per process connected to the ledger. The process holds the session advisory lock
  -- (namespace, lock_id) for as long as its connection lives: PostgreSQL releases it
  -- when the process dies or loses the database, which is how others know a holder is gone.
  CREATE TABLE payout_batch.holders (
    holder     text PRIMARY KEY,
    lock_id    integer NOT NULL,
    host       text NOT NULL,
    pid        integer NOT NULL,
    command    text NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now()
  );

  -- The journals of every batch of every account: one row per line, append-only (the trigger
  -- below refuses UPDATE, DELETE and TRUNCATE). origin: the holder that wrote it.
  CREATE TABLE payout_batch.journal_lines (
    id         bigserial PRIMARY KEY,
    account    text NOT NULL,
    batch_id   text NOT NULL,
    origin     text NOT NULL,
    line       text NOT NULL,
    written_at timestamptz NOT NULL DEFAULT clock_timestamp()
  );
  CREATE INDEX journal_lines_account ON payout_batch.journal_lines (account, id);
  CREATE INDEX journal_lines_batch ON payout_batch.journal_lines (account, batch_id, id);
  CREATE FUNCTION payout_batch.append_only() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION 'payout_batch.%: its records are append-only', TG_TABLE_NAME;
  END $$;
  CREATE TRIGGER journal_lines_append_only BEFORE UPDATE OR DELETE ON payout_batch.journal_lines
    FOR EACH ROW EXECUTE FUNCTION payout_batch.append_only();
  CREATE TRIGGER journal_lines_no_truncate BEFORE TRUNCATE ON payout_batch.journal_lines
    FOR EACH STATEMENT EXECUTE FUNCTION payout_batch.append_only();

  -- A batch being sent right now, and by whom (one process per batch).
  CREATE TABLE payout_batch.batch_runs (
    account    text NOT NULL,
    batch_id   text NOT NULL,
    holder     text NOT NULL,
    file       text NOT NULL,
    results    text,
    command    text NOT NULL,
    host       text NOT NULL,
    pid        integer NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account, batch_id)
  );

  -- The references a live process is sending: unique per account by the primary key, so two
  -- processes can never both hold one, whatever they read before.
  CREATE TABLE payout_batch.reservations (
    account   text NOT NULL,
    reference text NOT NULL,
    batch_id  text NOT NULL,
    holder    text NOT NULL,
    PRIMARY KEY (account, reference)
  );
  CREATE INDEX reservations_holder ON payout_batch.reservations (holder);

  -- The key's request starts of the last seconds, every process and host together.
  CREATE TABLE payout_batch.pace_starts (
    pace    text NOT NULL,
    id      text NOT NULL,
    t       double precision NOT NULL,
    pending boolean NOT NULL,
    PRIMARY KEY (pace, id)
  );

  -- The key's requests per month, every process and host together; and where a key worked.
  CREATE TABLE payout_batch.usage (
    fingerprint  text NOT NULL,
    month        text NOT NULL,
    requests     bigint NOT NULL DEFAULT 0,
    last_used_at timestamptz,
    PRIMARY KEY (fingerprint, month)
  );
  CREATE TABLE payout_batch.key_environments (
    fingerprint text PRIMARY KEY,
    environment text NOT NULL
  );

  -- An account's approval policy, every version kept (the last one holds): set by
  -- \`payout-batch policy set --ledger ...\`, read by every run, retry and watch of every host.
  CREATE TABLE payout_batch.account_policies (
    id       bigserial PRIMARY KEY,
    account  text NOT NULL,
    policy   text NOT NULL,
    set_at   timestamptz NOT NULL DEFAULT now()
  );
  CREATE INDEX account_policies_account ON payout_batch.account_policies (account, id);
  CREATE TRIGGER account_policies_append_only BEFORE UPDATE OR DELETE ON payout_batch.account_policies
    FOR EACH ROW EXECUTE FUNCTION payout_batch.append_only();

  -- A watch's claim of an inbox file: one per file content and account, whichever host claims it
  -- (the primary key). claim: the claim folder's name on that host; holder: the process running it
  -- while state is 'running' (ledger/pg-claims.ts).
  CREATE TABLE payout_batch.watch_claims (
    account    text NOT NULL,
    sha256     text NOT NULL,
    claim      text NOT NULL,
    name       text NOT NULL,
    holder     text NOT NULL,
    host       text NOT NULL,
    state      text NOT NULL CHECK (state IN ('running', 'done', 'failed')),
    claimed_at timestamptz NOT NULL DEFAULT now(),
    ended_at   timestamptz,
    PRIMARY KEY (account, sha256)
  );
  `,
  // 2: the payouts each account sent without approval, per UTC day: its policy's daily allowance
  `
  CREATE TABLE payout_batch.unapproved_payouts (
    id        bigserial PRIMARY KEY,
    account   text NOT NULL,
    day       text NOT NULL,
    reference text NOT NULL,
    currency  text NOT NULL,
    amount    text NOT NULL,
    sent_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account, day, reference)
  );
  CREATE TRIGGER unapproved_payouts_append_only BEFORE UPDATE OR DELETE ON payout_batch.unapproved_payouts
    FOR EACH ROW EXECUTE FUNCTION payout_batch.append_only();
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Applies the migrations this database lacks, in one transaction under the schema's advisory lock.
 * Returns the version before and after.
 */
export async function migrate(
  db: { tx: <T>(body: (q: Queryable) => Promise<T>, o?: { lock?: string }) => Promise<T> },
  tool: string,
): Promise<{ from: number; to: number }> {
  return db.tx(
    async (q) => {
      const from = (await schemaVersionOf(q)) ?? 0;
      for (let v = from + 1; v <= MIGRATIONS.length; v++) {
        await q.query(MIGRATIONS[v - 1]!);
        await q.query('INSERT INTO payout_batch.schema_version (version, tool) VALUES ($1, $2)', [v, tool]);
      }
      return { from, to: Math.max(from, MIGRATIONS.length) };
    },
    { lock: 'payout-batch schema' },
  );
}

/** The schema's version in this database; null when it was never initialised. */
export async function schemaVersionOf(q: Queryable): Promise<number | null> {
  const t = await q.query<{ t: string | null }>(`SELECT to_regclass('payout_batch.schema_version')::text AS t`);
  if (!t.rows[0]?.t) return null;
  const r = await q.query<{ v: number | null }>('SELECT max(version) AS v FROM payout_batch.schema_version');
  return Number(r.rows[0]?.v ?? 0);
}

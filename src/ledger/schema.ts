// The team ledger's schema, versioned (README.md beside this file). A migration, once released, is
// never edited: a change is a new migration.
import type { QueryResultRow } from 'pg';

export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(sql: string, params?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
}

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

  -- A process connected to the ledger, alive while it holds the session advisory lock (namespace, lock_id).
  CREATE TABLE payout_batch.holders (
    holder     text PRIMARY KEY,
    lock_id    integer NOT NULL,
    host       text NOT NULL,
    pid        integer NOT NULL,
    command    text NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now()
  );

  -- One row per journal line, append-only. origin: the holder that wrote it.
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

  -- The references a live process is sending: two can never both hold one, whatever they read.
  CREATE TABLE payout_batch.reservations (
    account   text NOT NULL,
    reference text NOT NULL,
    batch_id  text NOT NULL,
    holder    text NOT NULL,
    PRIMARY KEY (account, reference)
  );
  CREATE INDEX reservations_holder ON payout_batch.reservations (holder);

  CREATE TABLE payout_batch.pace_starts (
    pace    text NOT NULL,
    id      text NOT NULL,
    t       double precision NOT NULL,
    pending boolean NOT NULL,
    PRIMARY KEY (pace, id)
  );

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

  -- An account's approval policy, every version kept (the last one holds).
  CREATE TABLE payout_batch.account_policies (
    id       bigserial PRIMARY KEY,
    account  text NOT NULL,
    policy   text NOT NULL,
    set_at   timestamptz NOT NULL DEFAULT now()
  );
  CREATE INDEX account_policies_account ON payout_batch.account_policies (account, id);
  CREATE TRIGGER account_policies_append_only BEFORE UPDATE OR DELETE ON payout_batch.account_policies
    FOR EACH ROW EXECUTE FUNCTION payout_batch.append_only();

  -- A watch's claim of a file's content (ledger/pg-store.ts). claim: the claim folder's name on that host.
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

/** In one transaction under the schema's advisory lock: two hosts running init at once apply each migration once. */
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

/** Null when never initialised. */
export async function schemaVersionOf(q: Queryable): Promise<number | null> {
  const t = await q.query<{ t: string | null }>(`SELECT to_regclass('payout_batch.schema_version')::text AS t`);
  if (!t.rows[0]?.t) return null;
  return Number((await q.query<{ v: number | null }>('SELECT max(version) AS v FROM payout_batch.schema_version')).rows[0]?.v ?? 0);
}

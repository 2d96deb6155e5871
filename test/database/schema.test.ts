// The team ledger's connection and schema (src/ledger): migrations applied once however many
// run them at once, what the tables refuse, a holder known gone once its session is, and a
// connection string never shown with its password.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { redactUrl, TeamDb } from '../../src/ledger/pg-db.ts';
import { PgLedgers } from '../../src/ledger/postgres.ts';
import { migrate, SCHEMA_VERSION, schemaVersionOf } from '../../src/ledger/schema.ts';
import { testDatabase, withPostgres } from '../pg/database.ts';

it('redactUrl drops the password of the authority and of a password= parameter, and nothing else', () => {
  expect(redactUrl('postgres://alice:s3cr%40t@db.example.com:5432/team?sslmode=require&password=x')).toBe(
    'postgres://alice@db.example.com:5432/team?sslmode=require',
  );
  expect(redactUrl('postgres://alice@db.example.com/team')).toBe('postgres://alice@db.example.com/team');
  expect(redactUrl('postgres://alice:pw@[bad')).toBe('postgres://alice:***@[bad');
  // a password quoted in key=value form, or written with a raw "#" (the rest of the URL read as its fragment)
  expect(redactUrl("host=db user=alice password='my s\\'ecret' dbname=team")).toBe('host=db user=alice password=*** dbname=team');
  expect(redactUrl('postgres://alice:p@ss#word@db.example.com/team')).not.toContain('word');
});

/** A plain client of `url`, outside the ledger's own connections. */
async function rawClient(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  return c;
}

describe.runIf(withPostgres)('the schema and the connection', () => {
  const open: TeamDb[] = [];
  const connect = async (url: string, o: { init?: boolean; command?: string } = {}) => {
    const db = await TeamDb.open(url, o);
    open.push(db);
    return db;
  };
  let url: string;
  beforeAll(async () => {
    url = await testDatabase({ init: false });
  });
  afterAll(async () => {
    for (const db of open) await db.close();
  });

  it('two inits at once apply each migration once; a third finds nothing to do', async () => {
    const [a, b] = await Promise.all([connect(url, { init: true }), connect(url, { init: true })]);
    const outcomes = await Promise.all([migrate(a, 'a'), migrate(b, 'b')]);
    expect(outcomes.map((o) => `${o.from}->${o.to}`).sort()).toEqual([`0->${SCHEMA_VERSION}`, `${SCHEMA_VERSION}->${SCHEMA_VERSION}`]);
    expect(await migrate(a, 'c')).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
    expect((await a.query('SELECT version FROM payout_batch.schema_version')).rowCount).toBe(SCHEMA_VERSION);
    expect(await schemaVersionOf(a)).toBe(SCHEMA_VERSION);
  });

  it("refuses to change or remove a journal's lines, and a second holder of a reference", async () => {
    const db = await connect(url);
    await db.query("INSERT INTO payout_batch.journal_lines (account, batch_id, origin, line) VALUES ('acct', 'b', 'o', '{}')");
    for (const sql of [
      "UPDATE payout_batch.journal_lines SET line = 'x'",
      'DELETE FROM payout_batch.journal_lines',
      'TRUNCATE payout_batch.journal_lines',
    ])
      await expect(db.query(sql), sql).rejects.toThrow(/append-only/);
    const reserve = (batch: string) =>
      db.query("INSERT INTO payout_batch.reservations (account, reference, batch_id, holder) VALUES ('acct', 'R1', $1, $2)", [
        batch,
        db.holder,
      ]);
    await reserve('b1');
    await expect(reserve('b2')).rejects.toMatchObject({ code: '23505' });
  });

  it('knows a holder gone once its session is (a process that died), and that process stops sending', async () => {
    const watcher = await connect(url);
    const victim = await connect(url, { command: 'victim' });
    expect(await watcher.holderAlive(victim.holder)).toBe(true);
    let told = 0;
    victim.onLost(() => told++);
    await watcher.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'payout-batch victim'");
    await expect.poll(() => watcher.holderAlive(victim.holder)).toBe(false);
    await expect.poll(() => victim.lost?.code).toBe('LEDGER_LOST');
    await expect(victim.tx(async () => 1)).rejects.toMatchObject({ code: 'LEDGER_LOST' });
    expect(told).toBe(1);
  });

  it("keeps a running process's session, and so its lock, past the server's idle_session_timeout", async () => {
    const own = await testDatabase();
    const raw = () => rawClient(own);
    const admin = await raw();
    // (as an administrator may set it, to end forgotten connections; the session of a long run is idle by design)
    await admin.query(`DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET idle_session_timeout = ''200ms''', current_database()); END $$`);
    try {
      const runner = await connect(own, { command: 'long run' });
      // a connection left as idle, opened after the runner's: once the server has ended it, the runner's was as idle
      const idle = await raw();
      await new Promise<void>((resolve) => idle.once('end', resolve).on('error', () => undefined));
      expect(runner.lost).toBeUndefined();
      const watcher = await connect(own);
      expect(await watcher.holderAlive(runner.holder)).toBe(true);
    } finally {
      await admin.query(`DO $$ BEGIN EXECUTE format('ALTER DATABASE %I RESET idle_session_timeout', current_database()); END $$`);
      await admin.end();
    }
  });

  it("a reserve that reads the account's batches longer than the server's idle_in_transaction_session_timeout still holds", async () => {
    const own = await testDatabase();
    const raw = () => rawClient(own);
    const admin = await raw();
    const setting = (to: string) => admin.query(`DO $$ BEGIN EXECUTE format('ALTER DATABASE %I ${to}', current_database()); END $$`);
    await setting(`SET idle_in_transaction_session_timeout = ''200ms''`);
    try {
      const alice = new PgLedgers(await connect(own)).of('http://127.0.0.1:4');
      // the reserve's transaction waits, idle, while every batch of the account is read on other connections: here until a
      // transaction begun meanwhile, as idle, was ended by the server
      const batches = alice.batches.bind(alice);
      vi.spyOn(alice, 'batches').mockImplementation(async () => {
        const idle = await raw();
        await idle.query('BEGIN');
        await new Promise<void>((resolve) => idle.once('end', resolve).on('error', () => undefined));
        return batches();
      });
      await alice.reserve({ batchId: '8'.repeat(64), file: '/f/8888.csv', command: 'run', fresh: ['R8'] });
      expect(alice.lost).toBeUndefined();
    } finally {
      await setting('RESET idle_in_transaction_session_timeout');
      await admin.end();
    }
  });
});

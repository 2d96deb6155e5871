// A process's connection to the team ledger (README.md beside this file). Once `lost`, never reconnected: the locks went with
// the session, so what it reserved may be another's already. The URL's password never leaves this module.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Socket } from 'node:net';
import { hostname } from 'node:os';
import type { Pool, Client, ClientBase, PoolConfig, QueryResultRow } from 'pg';
import { SCHEMA_VERSION, schemaVersionOf, type Queryable } from './schema.ts';
import { attempt } from '../files/attempt.ts';

/** Its message never holds the password. */
export class TeamLedgerError extends Error {
  override readonly name = 'TeamLedgerError';
  constructor(
    readonly code: 'LEDGER_URL' | 'LEDGER_UNREACHABLE' | 'LEDGER_SCHEMA' | 'LEDGER_LOST',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Without its passwords: also the ledger's name on record (account-policy.ts), the same ledger whether the password is in
 * the URL, PGPASSWORD or ~/.pgpass.
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = u.hash = ''; // (a "#" is no part of a postgres URL: what follows it is a password's, written unencoded)
    for (const k of [...u.searchParams.keys()]) if (/^password$|^sslpassword$/i.test(k)) u.searchParams.delete(k);
    return u.toString();
  } catch {
    return url.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@').replace(/(password=)('(\\.|[^'\\])*'?|[^&\s]*)/gi, '$1***');
  }
}

/** Whether the URL holds a password (its redaction changes it), which a command line or a configuration file never takes. */
export const hasPassword = (url: string) => redactUrl(url) !== (attempt(() => new URL(url).toString()) ?? url);

/** The first key of this tool's two-key advisory locks: "PBAT". */
export const LOCK_NAMESPACE = 0x50424154;

/** Whether the holder of `holderColumn` holds its session advisory lock. */
export const ALIVE = (holderColumn: string) => `EXISTS (
  SELECT 1 FROM payout_batch.holders h JOIN pg_locks l
    ON l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
   AND l.classid = ${LOCK_NAMESPACE}::bigint::oid AND l.objid = h.lock_id::bigint::oid
  WHERE h.holder = ${holderColumn})`;

export function lockIdOf(name: string): number {
  return createHash('sha256').update(name).digest().readUInt32BE(0) & 0x7fffffff;
}

/**
 * Set on every connection. Idle by design while it holds a lock, so a server's idle_session_timeout (PostgreSQL 14 on) must
 * not end it; but a host that vanishes (power cut, network gone) says nothing: the server probes a silent connection and ends
 * it, and its locks with it, within a minute, not the system's default of over 2 h, in which teammates were refused what it held
 * (not sooner: a network gone for some seconds must not end a run).
 */
const SESSION_SETTINGS = `SELECT set_config(name, v, false) FROM pg_settings JOIN (VALUES ('idle_session_timeout', '0'),
  ('tcp_keepalives_idle', '30'), ('tcp_keepalives_interval', '10'), ('tcp_keepalives_count', '3')) AS s(n, v) ON name = n`;

/**
 * How long a statement may go unanswered, in seconds ($PAYOUT_BATCH_LEDGER_TIMEOUT), before the ledger counts as lost: a host that
 * vanishes mid-query (no reset, no end) would leave the command waiting forever. 5 minutes: this tool's statements take
 * milliseconds to seconds. Those that wait on another process's advisory lock (`waits`) are not bounded, as a busy teammate is no
 * lost database: the session connection's `SELECT 1`, as often as the bound, finds a vanished host under them.
 */
export const LEDGER_TIMEOUT_S = 300;
const waits = (text: string, values: unknown[]) => ({ text, values, query_timeout: 2 ** 31 - 1 }); // (setTimeout's longest)

function connectionLost(e: unknown): boolean {
  const code = (e as { code?: string })?.code ?? '';
  const msg = e instanceof Error ? e.message : String(e);
  return (
    /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|ENOTFOUND|EHOSTUNREACH)$/.test(code) ||
    /^(57P01|57P02|57P03|57014|55P03|08\d\d\d)$/.test(code) ||
    /^(Connection terminated|connection is closed|Client has encountered a connection error|timeout|Query read timeout)/i.test(msg)
  );
}

interface OpenOptions {
  /** Shown to others in its holder row. */
  command?: string;
  /** `ledger init`, which applies the schema. */
  init?: boolean;
  onLost?: (e: TeamLedgerError) => void;
  /** Seconds: LEDGER_TIMEOUT_S by default. */
  timeout?: number;
}

export class TeamDb {
  /** Named in the rows it holds and the journal lines it writes. */
  readonly holder = randomUUID();
  readonly lockId = randomBytes(4).readUInt32BE(0) & 0x7fffffff;
  lost: TeamLedgerError | undefined;
  private closing = false;
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly lostListeners: ((e: TeamLedgerError) => void)[] = [];

  private constructor(
    private readonly pool: Pool,
    private readonly session: Client,
    readonly where: string,
    private readonly timeout: number,
    private readonly sockets: Set<Socket>,
  ) {}

  static async open(url: string, o: OpenOptions = {}): Promise<TeamDb> {
    const where = redactUrl(url);
    if (!/^postgres(ql)?:$/.test(attempt(() => new URL(url).protocol) ?? ''))
      throw new TeamLedgerError('LEDGER_URL', `the ledger ${where} is not a postgres:// URL: give postgres://user@host:port/database`);
    // loaded here, not at start-up: a command without --ledger never loads node-postgres
    const pg = (await import('pg')).default;
    const timeout = o.timeout ?? LEDGER_TIMEOUT_S;
    // every socket, destroyed once the ledger is lost: nothing more is asked, and a silent host would never answer their end
    const sockets = new Set<Socket>();
    const stream = () => {
      const s = new Socket();
      sockets.add(s.once('close', () => sockets.delete(s)));
      return s;
    };
    const config = {
      ...{ connectionString: url, connectionTimeoutMillis: 5000, application_name: `payout-batch ${o.command ?? ''}`.trim(), stream },
      query_timeout: timeout * 1000,
    };
    const session = new pg.Client(config);
    // (pg-pool awaits onConnect before handing the connection out, and drops it if it fails: its types say it returns void)
    const pooled: Omit<PoolConfig, 'onConnect'> & { onConnect: (c: ClientBase) => Promise<unknown> } = {
      ...config,
      max: 8,
      idleTimeoutMillis: 10_000,
      onConnect: (c) => c.query(SESSION_SETTINGS),
    };
    const pool = new pg.Pool(pooled);
    const opened: { db?: TeamDb } = {};
    session.on('error', (e) => opened.db?.markLost(e));
    pool.on('error', (e) => opened.db?.markLost(e));
    try {
      await session.connect();
    } catch (e) {
      // (a refused authentication can leave the socket open, and the process waiting on it)
      await Promise.allSettled([session.end(), pool.end()]);
      const why = /password must be a string/.test((e as Error).message)
        ? 'it asks for a password, and none was given (in PGPASSWORD, ~/.pgpass or the URL of $PAYOUT_BATCH_LEDGER_URL)'
        : scrub((e as Error).message, url);
      throw new TeamLedgerError('LEDGER_UNREACHABLE', `the ledger ${where} cannot be reached: ${why}`);
    }
    const db = (opened.db = new TeamDb(pool, session, where, timeout, sockets));
    session.on('end', () => db.markLost(new Error('the connection ended')));
    try {
      await db.checkSchema(o.init);
      await session.query(SESSION_SETTINGS);
      await session.query(waits('SELECT pg_advisory_lock($1, $2)', [LOCK_NAMESPACE, db.lockId]));
      if (!o.init) {
        const row = [db.holder, db.lockId, hostname(), process.pid, o.command ?? ''];
        await session.query('INSERT INTO payout_batch.holders (holder, lock_id, host, pid, command) VALUES ($1, $2, $3, $4, $5)', row);
      }
    } catch (e) {
      await db.close();
      if (e instanceof TeamLedgerError) throw e;
      throw new TeamLedgerError('LEDGER_UNREACHABLE', `the ledger ${where}: ${scrub((e as Error).message, url)}`);
    }
    db.heartbeat = setInterval(() => void session.query('SELECT 1').catch((e: unknown) => db.translate(e)), timeout * 1000).unref();
    if (o.onLost) db.onLost(o.onLost);
    return db;
  }

  /** `init`: an older schema is what it migrates; a newer one is refused all the same. */
  private async checkSchema(init = false): Promise<void> {
    const v = await schemaVersionOf(this.session);
    if (v === SCHEMA_VERSION || (init && (v ?? 0) < SCHEMA_VERSION)) return;
    let is = v === null ? 'not initialised' : `at schema version ${v}, this tool needs ${SCHEMA_VERSION}`;
    let fix = 'run `payout-batch ledger init --ledger ...`';
    if (v !== null && v > SCHEMA_VERSION)
      [is, fix] = [`at schema version ${v}, newer than this tool's ${SCHEMA_VERSION}`, 'upgrade payout-batch'];
    throw new TeamLedgerError('LEDGER_SCHEMA', `the ledger ${this.where} is ${is}: ${fix}`);
  }

  onLost(listener: (e: TeamLedgerError) => void): void {
    this.lostListeners.push(listener);
  }

  private markLost(cause: unknown): TeamLedgerError {
    if (this.lost) return this.lost;
    if (this.closing) return new TeamLedgerError('LEDGER_LOST', `the ledger ${this.where} is closed`);
    this.lost = new TeamLedgerError(
      'LEDGER_LOST',
      `the ledger ${this.where} was lost (${cause instanceof Error ? cause.message : String(cause)}): nothing more is sent; ` +
        'run the command again, from this host or another, once the database is back',
    );
    clearInterval(this.heartbeat);
    for (const s of this.sockets) s.destroy();
    for (const l of this.lostListeners) l(this.lost);
    return this.lost;
  }

  async query<R extends QueryResultRow = QueryResultRow>(sql: string, params: unknown[] = []) {
    if (this.lost) throw this.lost;
    return this.pool.query<R>(sql, params).catch((e: unknown) => Promise.reject(this.translate(e)));
  }

  /** With `lock`, the bodies of one name run one at a time, every process and host together. */
  async tx<T>(body: (q: Queryable) => Promise<T>, o: { lock?: string } = {}): Promise<T> {
    if (this.lost) throw this.lost;
    const client = await this.pool.connect().catch((e: unknown) => Promise.reject(this.translate(e)));
    let broken = false;
    // a checked-out client reports a lost server on itself, not on the pool: unheard, it would end the process
    const onError = (e: Error) => {
      broken = true;
      this.markLost(e);
    };
    client.on('error', onError);
    try {
      // (read committed whatever the database's default: a check under the lock sees what was committed while it waited)
      await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
      // an `initiating` line must survive a crash of the server once its request may leave; a reserve waits, idle, while it reads
      // the account's batches on other connections
      await client.query(
        `SELECT set_config('synchronous_commit', 'on', true), set_config('idle_in_transaction_session_timeout', '0', true)`,
      );
      if (o.lock !== undefined) await client.query(waits('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_NAMESPACE, lockIdOf(o.lock)]));
      const out = await body(client);
      await client.query('COMMIT');
      return out;
    } catch (e) {
      broken ||= connectionLost(e);
      if (!broken) await client.query('ROLLBACK').catch(() => undefined);
      throw this.translate(e);
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }

  private translate(e: unknown): Error {
    if (e instanceof TeamLedgerError) return e;
    if (/^Query read timeout/.test((e as Error)?.message)) return this.markLost(new Error(`no answer in ${this.timeout} s`));
    if (connectionLost(e)) return this.markLost(e);
    return e instanceof Error ? e : new Error(String(e));
  }

  async holderAlive(holder: string): Promise<boolean> {
    if (holder === this.holder) return !this.lost;
    return (await this.query<{ alive: boolean }>(`SELECT ${ALIVE('$1')} AS alive`, [holder])).rows[0]?.alive === true;
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    clearInterval(this.heartbeat);
    if (!this.lost) await this.session.query('DELETE FROM payout_batch.holders WHERE holder = $1', [this.holder]).catch(() => undefined);
    this.lost ??= new TeamLedgerError('LEDGER_LOST', `the ledger ${this.where} is closed`);
    // a silent host never answers an end (no FIN): the process would wait on its sockets until TCP gives up
    setTimeout(() => this.sockets.forEach((s) => s.destroy()), Math.min(this.timeout, 5) * 1000).unref();
    await Promise.allSettled([this.session.end(), this.pool.end()]);
  }
}

function scrub(message: string, url: string): string {
  const out = message.split(url).join(redactUrl(url));
  const pw = attempt(() => decodeURIComponent(new URL(url).password));
  return pw ? out.split(pw).join('***') : out;
}

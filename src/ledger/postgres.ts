// The team ledger (README.md beside this file): an `initiating` line, with every line before it, is committed in the transaction
// that checks, under the account's advisory lock, that this process still holds the batch and the reference.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import pLimit from 'p-limit';
import type { SharedStore } from '../client/connect.ts';
import { ALONE, PENDING_MS, failOnce, waitBeforeStart, type PaceShare, type Take } from '../client/pace.ts';
import type { UsageStore } from '../client/quota.ts';
import { parseLine, type JournalEvent } from '../journal/journal.ts';
import {
  BatchRefused,
  ReservationLost,
  batchInProgress,
  batchKey,
  countUnapproved,
  referencesBeingSent,
  refuseReferencesSentBefore,
  reservationLost,
  type BatchRunner,
  type ClaimAnswer,
  type ClaimRequest,
  type JournalAppender,
  type Ledger,
  type LinesRead,
  type PolicyKeeper,
  type Reservation,
  type ReserveOptions,
  type UnapprovedPayout,
  type UnapprovedCount,
  type UnapprovedTake,
  type WatchClaim,
} from './account-ledger.ts';
import { ALIVE, TeamLedgerError, type TeamDb } from './pg-db.ts';
import type { Queryable } from './schema.ts';

export class PgLedgers implements SharedStore {
  readonly usage: TeamUsage;
  readonly where: string;
  private readonly ledgers = new Map<string, PgLedger>();

  constructor(readonly db: TeamDb) {
    this.usage = new TeamUsage(db);
    this.where = db.where;
  }

  pace(name: string, onError: (e: Error) => void): TeamPace {
    return new TeamPace(this.db, name, onError);
  }

  /** One per account in this process, so that its lines are written in order. */
  of(account: string): PgLedger {
    return this.ledgers.get(account) ?? this.ledgers.set(account, new PgLedger(this.db, account)).get(account)!;
  }

  async all(): Promise<PgLedger[]> {
    const r = await this.db.query<{ account: string }>('SELECT DISTINCT account FROM payout_batch.journal_lines');
    return r.rows.map((x) => this.of(x.account));
  }

  async flush(): Promise<void> {
    await Promise.all([...this.ledgers.values()].map((l) => l.flush()));
    if (this.db.lost) throw this.db.lost; // (lines an earlier flush dropped)
  }

  /** Ends the connection, once this process's lines are written. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.ledgers.values()].map((l) => l.flush()));
    await this.db.close();
  }
}

export class PgLedger implements Ledger, PolicyKeeper {
  /** Appended, not in the database yet. */
  private pending: { batch: string; line: string }[] = [];
  /** This process's writes, one at a time, in order. */
  private readonly inOrder = pLimit(1);
  /** A write failed: guard throws, and release says so. */
  private failed: Error | undefined;

  constructor(
    private readonly db: TeamDb,
    readonly account: string,
  ) {}

  get where(): string {
    return this.db.where;
  }

  get lost(): Error | undefined {
    return this.db.lost;
  }

  journalOf(batchId: string): string {
    return `${this.db.where}#${this.account}/${batchKey(batchId)}`;
  }

  async batches(): Promise<string[]> {
    await this.flush().catch(() => undefined);
    return batchesOf(this.db, this.account);
  }

  /** `from`: a line's id. */
  async read(batchId: string, onEvent: (e: JournalEvent) => void, from = 0): Promise<LinesRead> {
    await this.flush().catch(() => undefined);
    const lines = await linesOf(this.db, this.account, batchKey(batchId), from);
    let skipped = 0;
    for (const l of lines) {
      const e = parseLine(l.line);
      if (typeof e === 'object') onEvent(e);
      else skipped++;
    }
    const last = lines.at(-1);
    return { events: lines.length - skipped, skipped, tornTail: false, next: last?.id ?? from, lastWriteMs: last?.writtenAtMs ?? 0 };
  }

  /** Lines are written in order soon after they are appended (an `initiating` one by guard). */
  open(batchId: string): JournalAppender {
    const batch = batchKey(batchId);
    return {
      path: this.journalOf(batchId),
      append: (event) => {
        this.pending.push({ batch, line: JSON.stringify(event) });
        if (this.pending.length === 1) setImmediate(() => void this.flush().catch(() => undefined));
      },
      close: () => undefined,
    };
  }

  flush(): Promise<void> {
    return this.inOrder(() => this.writeNow());
  }

  private async writeNow(q: Queryable = this.db): Promise<void> {
    try {
      await appendLines(q, this.account, this.db.holder, this.pending.splice(0));
    } catch (e) {
      this.failed ??= e as Error;
      throw e;
    }
  }

  /** In one transaction under the account's advisory lock; the primary key refuses a reference's second holder whatever was read. */
  async reserve(o: ReserveOptions): Promise<Reservation> {
    const { db, account } = this;
    const fresh = new Set(o.fresh);
    const refs = [...new Set([...fresh, ...(o.settling ?? [])])];
    await this.flush();
    await db.tx(
      async (q) => {
        await clearDeadHolders(q, account);
        const run = await runOf(q, account, o.batchId);
        if (run && run.holder !== db.holder) throw batchInProgress(run);
        const held = await heldElsewhere(q, account, o.batchId, [...fresh]);
        if (held[0])
          throw referencesBeingSent(
            held.map((h) => h.reference),
            await runOf(q, account, held[0].batch_id),
          );
        await refuseReferencesSentBefore(this, o, fresh);
        try {
          await reserve(q, db, { ...o, account, host: hostname(), pid: process.pid, refs });
        } catch (e) {
          if ((e as { code?: string }).code !== '23505') throw e;
          throw new BatchRefused(
            'references of this file were reserved by another batch at the same moment. Nothing was sent. Run again.',
            'references-being-sent',
          );
        }
      },
      { lock: account },
    );
    let released: Promise<void> | undefined;
    return {
      guard: (ref, write) =>
        this.inOrder(() =>
          db.tx(
            async (q) => {
              if (this.failed)
                throw new ReservationLost(`the ledger ${db.where} could not be written (${this.failed.message}): nothing more is sent`);
              if (released || !(await stillHeld(q, db.holder, account, o.batchId, ref)))
                throw reservationLost(`the ledger ${db.where}`, released ? null : ref);
              write();
              await this.writeNow(q);
            },
            { lock: account },
          ),
        ),
      // (the rows of a holder that is gone are cleared by others)
      release: () =>
        (released ??= this.inOrder(async () => {
          await this.writeNow();
          const mine = [account, o.batchId, db.holder];
          for (const table of ['reservations', 'batch_runs'])
            await db.query(`DELETE FROM payout_batch.${table} WHERE account = $1 AND batch_id = $2 AND holder = $3`, mine);
        }).then(() => {
          if (this.failed) throw this.failed;
        })),
    };
  }

  async policy(): Promise<{ text: string } | undefined> {
    const r = await this.db.query<{ policy: string }>(
      'SELECT policy FROM payout_batch.account_policies WHERE account = $1 ORDER BY id DESC LIMIT 1',
      [this.account],
    );
    return r.rows[0] && { text: r.rows[0].policy };
  }

  /** On disk before it returns (tx: synchronous_commit on), as a policy that reverts in a crash would let payouts go unapproved. */
  async setPolicy(text: string): Promise<void> {
    await this.db.tx((q) => q.query('INSERT INTO payout_batch.account_policies (account, policy) VALUES ($1, $2)', [this.account, text]));
  }

  /** On the database's UTC day, not `day`: hosts whose clocks disagree share one day's allowance. */
  unapproved(_day: string, take?: UnapprovedTake): Promise<UnapprovedCount> {
    return this.db.tx(
      async (q) => {
        const recorded = await q.query<UnapprovedPayout>(
          `SELECT reference, currency, amount FROM payout_batch.unapproved_payouts WHERE account = $1 AND day = ${DAY} ORDER BY id`,
          [this.account],
        );
        const r = countUnapproved(recorded.rows, take);
        await q.query(
          `INSERT INTO payout_batch.unapproved_payouts (account, day, reference, currency, amount)
           SELECT $1, ${DAY}, r, c, a FROM unnest($2::text[], $3::text[], $4::text[]) AS u(r, c, a)`,
          [this.account, ...(['reference', 'currency', 'amount'] as const).map((k) => r.add.map((p) => p[k]))],
        );
        return r;
      },
      { lock: this.account },
    );
  }

  claim: Ledger['claim'] = (ask, o) => claimContent(this.db, ask, o);

  async claimAbandoned(sha256: string, claim: string): Promise<boolean | undefined> {
    try {
      const held = await claimOf(this.db, this.account, sha256);
      if (held?.claim !== claim) return undefined;
      return held.state !== 'running' || !(await this.db.holderAlive(held.holder));
    } catch (e) {
      if (e instanceof TeamLedgerError) return false; // (lost: the watch stops; the folder is left as it is)
      throw e;
    }
  }

  async endClaim(sha256: string, claim: string, state: 'done' | 'failed'): Promise<void> {
    await endClaim(this.db, { account: this.account, sha256, claim }, state);
  }

  lock<T>(name: string, job: () => Promise<T>): Promise<T> {
    return this.db.tx(job, { lock: `${this.account} ${name}` });
  }
}

const DAY = `to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD')`;

// The rows, as SQL: PgLedger decides what to check. A watch claim is one per content and account: the
// primary key gives it to exactly one process, and it changes hands only by a compare-and-set on the claim as read.
/** The lines after the id `after`, in order; `writtenAtMs` by this host's clock (the server's may differ). */
export async function linesOf(q: Queryable, account: string, batch: string, after: number) {
  const r = await q.query<{ id: string; line: string; age: number }>(
    `SELECT id, line, (extract(epoch FROM clock_timestamp() - written_at) * 1000)::float8 AS age FROM payout_batch.journal_lines
      WHERE account = $1 AND batch_id = $2 AND id > $3 ORDER BY id`,
    [account, batch, after],
  );
  const now = Date.now();
  return r.rows.map((x) => ({ id: Number(x.id), line: x.line, writtenAtMs: now - x.age }));
}

export async function batchesOf(q: Queryable, account: string): Promise<string[]> {
  const r = await q.query<{ batch_id: string }>('SELECT DISTINCT batch_id FROM payout_batch.journal_lines WHERE account = $1', [account]);
  return r.rows.map((x) => x.batch_id);
}

export async function appendLines(q: Queryable, account: string, origin: string, lines: { batch: string; line: string }[]): Promise<void> {
  if (!lines.length) return;
  await q.query(
    `INSERT INTO payout_batch.journal_lines (account, batch_id, origin, line)
     SELECT $1, b, $2, l FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS u(b, l, n) ORDER BY n`,
    [account, origin, lines.map((x) => x.batch), lines.map((x) => x.line)],
  );
}

/** Removes the run and reservation rows of processes that are gone (their session lock went with them). */
export async function clearDeadHolders(q: Queryable, account: string): Promise<void> {
  for (const table of ['reservations', 'batch_runs'])
    await q.query(`DELETE FROM payout_batch.${table} r WHERE r.account = $1 AND NOT ${ALIVE('r.holder')}`, [account]);
}

type BatchRun = BatchRunner & { holder: string; results: string | null };

/** The live process sending this batch, when another one is. */
export async function runOf(q: Queryable, account: string, batchId: string): Promise<BatchRun | undefined> {
  const r = await q.query<Omit<BatchRun, 'batchId' | 'startedAt'> & { batch_id: string; started_at: Date }>(
    'SELECT * FROM payout_batch.batch_runs WHERE account = $1 AND batch_id = $2',
    [account, batchId],
  );
  const x = r.rows[0];
  return x && { ...x, batchId: x.batch_id, startedAt: x.started_at.toISOString() };
}

export async function heldElsewhere(q: Queryable, account: string, batchId: string, refs: string[]) {
  if (!refs.length) return [];
  const r = await q.query<{ reference: string; batch_id: string }>(
    'SELECT reference, batch_id FROM payout_batch.reservations WHERE account = $1 AND batch_id <> $2 AND reference = ANY($3::text[])',
    [account, batchId, refs],
  );
  return r.rows;
}

/** A reference held by another live batch violates the primary key: the whole transaction fails. */
export async function reserve(
  q: Queryable,
  db: Pick<TeamDb, 'holder'>,
  o: { account: string; batchId: string; file: string; results?: string; command: string; host: string; pid: number; refs: string[] },
): Promise<void> {
  await q.query('DELETE FROM payout_batch.reservations WHERE account = $1 AND batch_id = $2', [o.account, o.batchId]);
  await q.query(
    `INSERT INTO payout_batch.batch_runs (account, batch_id, holder, file, results, command, host, pid)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (account, batch_id) DO UPDATE SET holder = EXCLUDED.holder, file = EXCLUDED.file, results = EXCLUDED.results,
       command = EXCLUDED.command, host = EXCLUDED.host, pid = EXCLUDED.pid, started_at = now()`,
    [o.account, o.batchId, db.holder, o.file, o.results ?? null, o.command, o.host, o.pid],
  );
  await q.query(
    `INSERT INTO payout_batch.reservations (account, reference, batch_id, holder)
     SELECT $1, ref, $2, $3 FROM unnest($4::text[]) AS ref`,
    [o.account, o.batchId, db.holder, o.refs],
  );
}

/** Whether this holder still sends the batch and holds `ref` (null: the batch alone). */
export async function stillHeld(q: Queryable, holder: string, account: string, batchId: string, ref: string | null): Promise<boolean> {
  const r = await q.query(
    `SELECT 1 FROM payout_batch.batch_runs WHERE account = $1 AND batch_id = $2 AND holder = $3 AND ($4::text IS NULL OR EXISTS (
       SELECT 1 FROM payout_batch.reservations WHERE account = $1 AND reference = $4 AND batch_id = $2 AND holder = $3))`,
    [account, batchId, holder, ref],
  );
  return !!r.rowCount;
}

type Db = Pick<TeamDb, 'holder' | 'query' | 'holderAlive'>;

type Row = Omit<WatchClaim, 'claimedAt' | 'endedAt'> & { claimed_at: Date; ended_at: Date | null };

const COLUMNS = 'account, sha256, claim, name, holder, host, state, claimed_at, ended_at';

const claimOfRow = ({ claimed_at, ended_at, ...r }: Row): WatchClaim => ({
  ...r,
  claimedAt: claimed_at.toISOString(),
  ...(ended_at ? { endedAt: ended_at.toISOString() } : {}),
});

export async function claimOf(db: Db, account: string, sha256: string): Promise<WatchClaim | undefined> {
  const r = await db.query<Row>(`SELECT ${COLUMNS} FROM payout_batch.watch_claims WHERE account = $1 AND sha256 = $2`, [account, sha256]);
  return r.rows[0] && claimOfRow(r.rows[0]);
}

/** A running claim whose holder is gone is taken over; an ended one only when `mayRetake` says so. */
export async function claimContent(db: Db, c: ClaimRequest, o: Parameters<Ledger['claim']>[1] = {}): Promise<ClaimAnswer> {
  // (a few rounds at most: each lost round means another process changed the row in between)
  for (let round = 0; ; round++) {
    const inserted = await db.query(
      `INSERT INTO payout_batch.watch_claims (account, sha256, claim, name, holder, host, state)
       VALUES ($1, $2, $3, $4, $5, $6, 'running') ON CONFLICT (account, sha256) DO NOTHING`,
      [c.account, c.sha256, c.claim, c.name, db.holder, c.host],
    );
    if (inserted.rowCount === 1) return { held: true };
    const by = await claimOf(db, c.account, c.sha256);
    if (!by) continue; // (deleted in between, by hand: insert again)
    if (by.holder === db.holder && by.claim === c.claim) return { held: true };
    const free = by.state === 'running' ? !(await db.holderAlive(by.holder)) : ((await o.mayRetake?.(by)) ?? false);
    if (!free || round >= 3) return { held: false, by };
    const replaced = await db.query(
      `UPDATE payout_batch.watch_claims
          SET claim = $3, name = $4, holder = $5, host = $6, state = 'running', claimed_at = now(), ended_at = NULL
        WHERE account = $1 AND sha256 = $2 AND holder = $7 AND claim = $8 AND state = $9`,
      [c.account, c.sha256, c.claim, c.name, db.holder, c.host, by.holder, by.claim, by.state],
    );
    if (replaced.rowCount === 1) return { held: true, replaced: by };
  }
}

/** False when the claim is not (or no longer) this process's. */
export async function endClaim(db: Db, c: Pick<ClaimRequest, 'account' | 'sha256' | 'claim'>, state: 'done' | 'failed'): Promise<boolean> {
  const r = await db.query(
    `UPDATE payout_batch.watch_claims SET state = $4, ended_at = now()
      WHERE account = $1 AND sha256 = $2 AND claim = $3 AND holder = $5 AND state = 'running'`,
    [c.account, c.sha256, c.claim, state, db.holder],
  );
  return r.rowCount === 1;
}

// The key's request pace for every host on the team ledger (spec §8: 5 starts in any rolling second,
// whoever sends them; client/pace.ts waitBeforeStart), one transaction per take under the pace's
// lock. Every time is the database's clock, so hosts whose clocks disagree share one window; a start
// is dated again once sent, so it counts no earlier than it should. A lost database grants every
// start: the process's own limiter still paces it.
/** Longer than any window and margin. */
const KEEP_MS = 10_000;

const NOW_MS = `(extract(epoch FROM clock_timestamp()) * 1000)::float8`;

const READ_WINDOW = `
  WITH clock AS MATERIALIZED (SELECT ${NOW_MS} AS now),
  old AS (DELETE FROM payout_batch.pace_starts s USING clock WHERE s.pace = $1 AND s.t < clock.now - $4),
  counted AS (
    -- (a start after now: the server's clock stepped back; counted as now, not as a wait of the step)
    SELECT least(clock.now, CASE WHEN s.pending THEN greatest(s.t, least(clock.now, s.t + $2)) ELSE s.t END) AS at
      FROM payout_batch.pace_starts s, clock WHERE s.pace = $1)
  SELECT clock.now,
         coalesce((SELECT array_agg(at ORDER BY at) FROM counted WHERE at > clock.now - $3), '{}') AS times
    FROM clock`;

export class TeamPace implements PaceShare {
  private seq = 0;
  /** This process's starts (tests run several TeamPaces in one). */
  private readonly tag: string;
  failed: Error | undefined;

  constructor(
    private readonly db: TeamDb,
    /** paceName(baseUrl, fingerprint): never the key */
    readonly pace: string,
    private readonly onError?: (e: Error) => void,
  ) {
    this.tag = `${db.holder}.${randomBytes(3).toString('hex')}`;
  }

  /** Never rejects: once the ledger fails, every start is granted. */
  take(limit: number, spanMs: number): Take | Promise<Take> {
    if (this.failed) return ALONE;
    return this.db
      .tx((q) => this.takeIn(q, limit, spanMs), { lock: this.pace })
      .catch((e: unknown) => {
        failOnce(this, e, this.onError);
        return ALONE;
      });
  }

  private async takeIn(q: Queryable, limit: number, spanMs: number): Promise<Take> {
    const r = await q.query<{ now: number; times: number[] }>(READ_WINDOW, [this.pace, PENDING_MS, spanMs, KEEP_MS]);
    const { now, times } = r.rows[0]!;
    const waitMs = waitBeforeStart(times, limit, spanMs, now);
    if (waitMs !== undefined) return { ok: false, waitMs };
    const id = `${this.tag}-${++this.seq}`;
    await q.query('INSERT INTO payout_batch.pace_starts (pace, id, t, pending) VALUES ($1, $2, $3, true)', [this.pace, id, now]);
    return { ok: true, id };
  }

  markSent(id: string): void {
    this.update(id, `t = greatest(t, ${NOW_MS}), pending = false`);
  }

  unsent(id: string): void {
    this.update(id, 'pending = false');
  }

  private update(id: string, set: string): void {
    if (!id || this.failed) return;
    void this.db
      .query(`UPDATE payout_batch.pace_starts SET ${set} WHERE pace = $1 AND id = $2`, [this.pace, id])
      .catch((e: unknown) => failOnce(this, e, this.onError));
  }
}

// The key's monthly count for every host (spec §8: 10,000 requests a month per key, whoever sends
// them). Each hand-over adds, never overwrites, so two hosts flushing at once both count. Keys are
// named by their fingerprint, never themselves.
export class TeamUsage implements UsageStore {
  readonly where: string;

  constructor(private readonly db: TeamDb) {
    this.where = `the team ledger ${db.where}`;
  }

  async add(...[counts, labels, at]: Parameters<UsageStore['add']>): Promise<void> {
    await this.db.tx(async (q) => {
      for (const [fingerprint, months] of counts)
        for (const [month, n] of months)
          await q.query(
            `INSERT INTO payout_batch.usage (fingerprint, month, requests, last_used_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (fingerprint, month) DO UPDATE
               SET requests = usage.requests + EXCLUDED.requests,
                   last_used_at = greatest(usage.last_used_at, EXCLUDED.last_used_at)`,
            [fingerprint, month, n, at],
          );
      for (const [fingerprint, environment] of labels)
        await q.query(
          `INSERT INTO payout_batch.key_environments (fingerprint, environment) VALUES ($1, $2)
           ON CONFLICT (fingerprint) DO UPDATE SET environment = EXCLUDED.environment`,
          [fingerprint, environment],
        );
    });
  }

  async requests(fingerprint: string, month: string): Promise<number> {
    const sql = 'SELECT requests FROM payout_batch.usage WHERE fingerprint = $1 AND month = $2';
    return Number((await this.db.query<{ requests: string }>(sql, [fingerprint, month])).rows[0]?.requests ?? 0);
  }

  async environmentOf(fingerprint: string): Promise<string | undefined> {
    const sql = 'SELECT environment FROM payout_batch.key_environments WHERE fingerprint = $1';
    return (await this.db.query<{ environment: string }>(sql, [fingerprint])).rows[0]?.environment;
  }
}

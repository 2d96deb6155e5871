// The team ledger's rows, as SQL: postgres.ts decides what to check; this file only reads and writes.
// A watch claim is one per content and account: the primary key gives it to exactly one process,
// and it changes hands only by a compare-and-set on the claim as read.
import { ALIVE, type TeamDb } from './pg-db.ts';
import type { Queryable } from './schema.ts';
import type { ClaimAnswer, ClaimRequest, WatchClaim } from './account-ledger.ts';

export interface StoredLine {
  id: number;
  line: string;
  writtenAtMs: number;
}

/** The lines after the id `after`, in order. */
export async function linesOf(q: Queryable, account: string, batch: string, after: number): Promise<StoredLine[]> {
  const r = await q.query<{ id: string; line: string; ms: number }>(
    `SELECT id, line, (extract(epoch FROM written_at) * 1000)::float8 AS ms FROM payout_batch.journal_lines
      WHERE account = $1 AND batch_id = $2 AND id > $3 ORDER BY id`,
    [account, batch, after],
  );
  return r.rows.map((x) => ({ id: Number(x.id), line: x.line, writtenAtMs: x.ms }));
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
  await q.query(`DELETE FROM payout_batch.reservations r WHERE r.account = $1 AND NOT ${ALIVE('r.holder')}`, [account]);
  await q.query(`DELETE FROM payout_batch.batch_runs r WHERE r.account = $1 AND NOT ${ALIVE('r.holder')}`, [account]);
}

export interface BatchRun {
  batchId: string;
  holder: string;
  file: string;
  results: string | null;
  command: string;
  host: string;
  pid: number;
  startedAt: string;
}

/** The live process sending this batch, when another one is. */
export async function runOf(q: Queryable, account: string, batchId: string): Promise<BatchRun | undefined> {
  const r = await q.query<Omit<BatchRun, 'batchId' | 'startedAt'> & { batch_id: string; started_at: Date }>(
    'SELECT * FROM payout_batch.batch_runs WHERE account = $1 AND batch_id = $2',
    [account, batchId],
  );
  const x = r.rows[0];
  return x && { ...x, batchId: x.batch_id, startedAt: x.started_at.toISOString() };
}

/** The live reservations of other batches among `refs`, with their batch's run. */
export async function heldElsewhere(
  q: Queryable,
  account: string,
  batchId: string,
  refs: string[],
): Promise<{ reference: string; run: BatchRun | undefined }[]> {
  if (!refs.length) return [];
  const r = await q.query<{ reference: string; batch_id: string }>(
    'SELECT reference, batch_id FROM payout_batch.reservations WHERE account = $1 AND batch_id <> $2 AND reference = ANY($3::text[])',
    [account, batchId, refs],
  );
  const out = [];
  for (const x of r.rows) out.push({ reference: x.reference, run: await runOf(q, account, x.batch_id) });
  return out;
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
  const run = await q.query('SELECT 1 FROM payout_batch.batch_runs WHERE account = $1 AND batch_id = $2 AND holder = $3', [
    account,
    batchId,
    holder,
  ]);
  if (!run.rowCount) return false;
  if (ref === null) return true;
  const r = await q.query(
    'SELECT 1 FROM payout_batch.reservations WHERE account = $1 AND reference = $2 AND batch_id = $3 AND holder = $4',
    [account, ref, batchId, holder],
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
export async function claimContent(
  db: Db,
  c: ClaimRequest,
  o: { mayRetake?: (ended: WatchClaim) => boolean | Promise<boolean> } = {},
): Promise<ClaimAnswer> {
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

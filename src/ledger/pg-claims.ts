// The team ledger's watch claims, one per content and account: the primary key gives it to exactly
// one process, and it changes hands only by a compare-and-set on the claim as read.
import type { ClaimAnswer, ClaimRequest, WatchClaim } from './account-ledger.ts';
import type { TeamDb } from './pg-db.ts';

type Db = Pick<TeamDb, 'holder' | 'query' | 'holderAlive'>;

type Row = Omit<WatchClaim, 'claimedAt' | 'endedAt'> & { claimed_at: Date; ended_at: Date | null };

const COLUMNS = 'account, sha256, claim, name, holder, host, state, claimed_at, ended_at';

const claimOfRow = (r: Row): WatchClaim => ({
  account: r.account,
  sha256: r.sha256,
  claim: r.claim,
  name: r.name,
  holder: r.holder,
  host: r.host,
  state: r.state,
  claimedAt: r.claimed_at.toISOString(),
  ...(r.ended_at ? { endedAt: r.ended_at.toISOString() } : {}),
});

export async function claimOf(db: Db, account: string, sha256: string): Promise<WatchClaim | undefined> {
  const r = await db.query<Row>(`SELECT ${COLUMNS} FROM payout_batch.watch_claims WHERE account = $1 AND sha256 = $2`, [account, sha256]);
  return r.rows[0] && claimOfRow(r.rows[0]);
}

async function insertClaim(db: Db, c: ClaimRequest): Promise<boolean> {
  const r = await db.query(
    `INSERT INTO payout_batch.watch_claims (account, sha256, claim, name, holder, host, state)
     VALUES ($1, $2, $3, $4, $5, $6, 'running') ON CONFLICT (account, sha256) DO NOTHING`,
    [c.account, c.sha256, c.claim, c.name, db.holder, c.host],
  );
  return r.rowCount === 1;
}

async function replaceClaim(db: Db, c: ClaimRequest, from: WatchClaim): Promise<boolean> {
  const r = await db.query(
    `UPDATE payout_batch.watch_claims
        SET claim = $3, name = $4, holder = $5, host = $6, state = 'running', claimed_at = now(), ended_at = NULL
      WHERE account = $1 AND sha256 = $2 AND holder = $7 AND claim = $8 AND state = $9`,
    [c.account, c.sha256, c.claim, c.name, db.holder, c.host, from.holder, from.claim, from.state],
  );
  return r.rowCount === 1;
}

/** A running claim whose holder is gone is taken over; an ended one only when `mayRetake` says so. */
export async function claimContent(
  db: Db,
  c: ClaimRequest,
  o: { mayRetake?: (ended: WatchClaim) => boolean | Promise<boolean> } = {},
): Promise<ClaimAnswer> {
  // (a few rounds at most: each lost round means another process changed the row in between)
  for (let round = 0; ; round++) {
    if (await insertClaim(db, c)) return { held: true };
    const by = await claimOf(db, c.account, c.sha256);
    if (!by) continue; // (deleted in between, by hand: insert again)
    if (by.holder === db.holder && by.claim === c.claim) return { held: true };
    const free = by.state === 'running' ? !(await db.holderAlive(by.holder)) : ((await o.mayRetake?.(by)) ?? false);
    if (!free || round >= 3) return { held: false, by };
    if (await replaceClaim(db, c, by)) return { held: true, replaced: by };
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

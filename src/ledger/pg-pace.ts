// The key's request pace on the team ledger (issue 30): the promise of the pace file of one host
// (client/pace.ts SharedPace, the same rule: waitBeforeStart), kept for every process and host on one database. The service
// allows a key 5 request starts in any rolling second whoever sends them (spec §8), so the starts
// of every host are in one table, `pace_starts`, under the pace's name (a hash of the service's
// base URL and the key's fingerprint, never the key).
//
// A take is one short transaction under the transaction advisory lock of the pace (TeamDb.tx):
// the takes of one pace run one at a time, every host together. It reads the starts still in the
// window, deletes the old ones, and records a new start (pending) when fewer than N lie in it.
// Every time is the database's clock (clock_timestamp(), epoch milliseconds), never the host's:
// hosts whose clocks disagree still share one window. A start is dated again when it is sent
// (markSent), by the database's clock when that update arrives: a moment after it left, so it
// counts no earlier than it should. Until then it counts as starting now, for PENDING_MS at most.
//
// When the database cannot be used (lost mid-run: the engine stops before recording another
// initiate), the pace says so once (onError) and grants every start: the limiter of the process
// (client/throttle.ts) still paces it alone.
import { randomBytes } from 'node:crypto';
import { PENDING_MS, waitBeforeStart, type PaceShare, type Take } from '../client/pace.ts';
import type { Queryable } from './schema.ts';
import type { TeamDb } from './pg-db.ts';

/** Starts older than this are deleted as takes go: longer than any window and margin (1 s + 5 s at most). */
const KEEP_MS = 10_000;

const NOW_MS = `(extract(epoch FROM clock_timestamp()) * 1000)::float8`;

/** Deletes the old starts of a pace; returns the database's now and the counted times of the starts in the window. */
const READ_WINDOW = `
  WITH clock AS MATERIALIZED (SELECT ${NOW_MS} AS now),
  old AS (DELETE FROM payout_batch.pace_starts s USING clock WHERE s.pace = $1 AND s.t < clock.now - $4),
  counted AS (
    SELECT CASE WHEN s.pending THEN greatest(s.t, least(clock.now, s.t + $2)) ELSE s.t END AS at
      FROM payout_batch.pace_starts s, clock WHERE s.pace = $1)
  SELECT clock.now,
         coalesce((SELECT array_agg(at ORDER BY at) FROM counted WHERE at > clock.now - $3), '{}') AS times
    FROM clock`;

export class TeamPace implements PaceShare {
  private seq = 0;
  /** Names this process's starts (its holder, and which TeamPace of it: tests run several). */
  private readonly tag: string;
  /** The ledger could not be used: this process paces alone (its own limiter still holds). */
  failed: Error | undefined;

  constructor(
    private readonly db: TeamDb,
    /** paceName(baseUrl, fingerprint) */
    readonly pace: string,
    private readonly onError?: (e: Error) => void,
  ) {
    this.tag = `${db.holder}.${randomBytes(3).toString('hex')}`;
  }

  /**
   * Takes a start when fewer than `limit` starts of every process lie in the last `spanMs`: records
   * it (pending) and returns its id; otherwise says how long to wait. Never rejects: once the
   * ledger fails, every start is granted at once (see `failed`).
   */
  take(limit: number, spanMs: number): Take | Promise<Take> {
    if (this.failed) return { ok: true, id: '' };
    return this.db
      .tx((q) => this.takeIn(q, limit, spanMs), { lock: this.pace })
      .catch((e: unknown) => {
        this.fail(e);
        return { ok: true, id: '' } as const;
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

  /** The start was sent: dated now by the database's clock (a later mark moves it later, never earlier). */
  markSent(id: string): void {
    this.update(id, `t = greatest(t, ${NOW_MS}), pending = false`);
  }

  /** The request ended without being sent: the start keeps its grant time. */
  unsent(id: string): void {
    this.update(id, 'pending = false');
  }

  private update(id: string, set: string): void {
    if (!id || this.failed) return;
    void this.db
      .query(`UPDATE payout_batch.pace_starts SET ${set} WHERE pace = $1 AND id = $2`, [this.pace, id])
      .catch((e: unknown) => this.fail(e));
  }

  private fail(e: unknown): void {
    if (this.failed) return;
    this.failed = e instanceof Error ? e : new Error(String(e));
    this.onError?.(this.failed);
  }
}

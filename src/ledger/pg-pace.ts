// The key's request pace for every host on the team ledger (spec §8: 5 starts in any rolling second,
// whoever sends them; client/pace.ts waitBeforeStart), one transaction per take under the pace's
// lock. Every time is the database's clock, so hosts whose clocks disagree share one window; a start
// is dated again once sent, so it counts no earlier than it should. A lost database grants every
// start: the process's own limiter still paces it.
import { randomBytes } from 'node:crypto';
import { PENDING_MS, waitBeforeStart, type PaceShare, type Take } from '../client/pace.ts';
import type { UsageStore } from '../client/quota.ts';
import type { Queryable } from './schema.ts';
import type { TeamDb } from './pg-db.ts';

/** Longer than any window and margin. */
const KEEP_MS = 10_000;

const NOW_MS = `(extract(epoch FROM clock_timestamp()) * 1000)::float8`;

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
      .catch((e: unknown) => this.fail(e));
  }

  private fail(e: unknown): void {
    if (this.failed) return;
    this.failed = e instanceof Error ? e : new Error(String(e));
    this.onError?.(this.failed);
  }
}

// The key's monthly count for every host (spec §8: 10,000 requests a month per key, whoever sends
// them). Each hand-over adds, never overwrites, so two hosts flushing at once both count. Keys are
// named by their fingerprint, never themselves.
export class TeamUsage implements UsageStore {
  constructor(private readonly db: TeamDb) {}

  get where(): string {
    return `the team ledger ${this.db.where}`;
  }

  /** `counts`: fingerprint → month → requests; `labels`: where keys answered 2xx. */
  async add(counts: ReadonlyMap<string, ReadonlyMap<string, number>>, labels: ReadonlyMap<string, string>, at: Date): Promise<void> {
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
    const r = await this.db.query<{ requests: string }>('SELECT requests FROM payout_batch.usage WHERE fingerprint = $1 AND month = $2', [
      fingerprint,
      month,
    ]);
    return Number(r.rows[0]?.requests ?? 0);
  }

  async environmentOf(fingerprint: string): Promise<string | undefined> {
    const r = await this.db.query<{ environment: string }>('SELECT environment FROM payout_batch.key_environments WHERE fingerprint = $1', [
      fingerprint,
    ]);
    return r.rows[0]?.environment;
  }
}

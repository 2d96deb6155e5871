// The key's monthly count on the team ledger (issue 30): the service counts 10,000 requests a month
// per key whoever sends them (spec §8), so with a team ledger every process and host adds its
// requests to one row per key and month (`usage`), and reads the sum of all. The client's counter
// (client/quota.ts UsageCounter) keeps the requests in memory and hands them here about once a
// second: each hand-over adds (INSERT ... ON CONFLICT DO UPDATE requests = requests + n), never
// overwrites, so two hosts flushing at once both count. Where a key answered 2xx (production or
// sandbox) is kept beside it (`key_environments`), so that no host uses it in the other one.
// Keys are named by their fingerprint, never themselves.
import type { UsageStore } from '../client/quota.ts';
import type { TeamDb } from './pg-db.ts';

export class TeamUsage implements UsageStore {
  constructor(private readonly db: TeamDb) {}

  /** For messages: the ledger, without its password. */
  get where(): string {
    return `the team ledger ${this.db.where}`;
  }

  /** Adds requests (fingerprint -> month -> requests) and records where keys worked, in one transaction. */
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

  /** The requests of a key in a month ('YYYY-MM', UTC), every process and host together. */
  async requests(fingerprint: string, month: string): Promise<number> {
    const r = await this.db.query<{ requests: string }>('SELECT requests FROM payout_batch.usage WHERE fingerprint = $1 AND month = $2', [
      fingerprint,
      month,
    ]);
    return Number(r.rows[0]?.requests ?? 0);
  }

  /** The environment a key was last seen working in, if any. */
  async environmentOf(fingerprint: string): Promise<string | undefined> {
    const r = await this.db.query<{ environment: string }>('SELECT environment FROM payout_batch.key_environments WHERE fingerprint = $1', [
      fingerprint,
    ]);
    return r.rows[0]?.environment;
  }
}

// The key's monthly count for every host on the team ledger (spec §8: 10,000 requests a month per
// key, whoever sends them). Each hand-over adds, never overwrites, so two hosts flushing at once
// both count. Keys are named by their fingerprint, never themselves.
import type { UsageStore } from '../client/quota.ts';
import type { TeamDb } from './pg-db.ts';

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

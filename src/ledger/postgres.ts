// The team ledger: every account's in one PostgreSQL database (README.md beside this file). An
// `initiating` line, with every line before it, is committed in the transaction that checks, under
// the account's advisory lock, that this process still holds the batch and the reference.
import { hostname } from 'node:os';
import type { SharedStore } from '../client/connect.ts';
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
  type ClaimAnswer,
  type ClaimRequest,
  type JournalAppender,
  type Ledger,
  type LinesRead,
  type Reservation,
  type ReserveOptions,
  type UnapprovedPayout,
  type UnapprovedTake,
  type WatchClaim,
} from './account-ledger.ts';
import { TeamLedgerError, type TeamDb } from './pg-db.ts';
import { TeamPace, TeamUsage } from './pg-pace.ts';
import * as store from './pg-store.ts';

export class PgLedgers implements SharedStore {
  readonly usage: TeamUsage;
  private readonly ledgers = new Map<string, PgLedger>();

  constructor(readonly db: TeamDb) {
    this.usage = new TeamUsage(db);
  }

  get where(): string {
    return this.db.where;
  }

  pace(name: string, onError: (e: Error) => void): TeamPace {
    return new TeamPace(this.db, name, onError);
  }

  /** One per account in this process, so that its lines are written in order. */
  of(account: string): PgLedger {
    let l = this.ledgers.get(account);
    if (!l) this.ledgers.set(account, (l = new PgLedger(this.db, account)));
    return l;
  }

  async all(): Promise<PgLedger[]> {
    const r = await this.db.query<{ account: string }>('SELECT DISTINCT account FROM payout_batch.journal_lines');
    return r.rows.map((x) => this.of(x.account));
  }

  /** Ends the connection, once this process's lines are written. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.ledgers.values()].map((l) => l.flush()));
    await this.db.close();
  }
}

class PgLedger implements Ledger {
  readonly ephemeral = false;
  /** Appended, not in the database yet. */
  private pending: { batch: string; line: string }[] = [];
  /** This process's writes, one at a time, in order. */
  private chain: Promise<void> = Promise.resolve();
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
    return store.batchesOf(this.db, this.account);
  }

  /** `from`: a line's id. */
  async read(batchId: string, onEvent: (e: JournalEvent) => void, from = 0): Promise<LinesRead> {
    await this.flush().catch(() => undefined);
    const lines = await store.linesOf(this.db, this.account, batchKey(batchId), from);
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

  private async writeNow(): Promise<void> {
    try {
      await store.appendLines(this.db, this.account, this.db.holder, this.pending.splice(0));
    } catch (e) {
      this.failed ??= e as Error;
      throw e;
    }
  }

  private inOrder<T>(job: () => Promise<T>): Promise<T> {
    const run = this.chain.then(job);
    this.chain = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** In one transaction under the account's advisory lock; the primary key refuses a reference's second holder whatever was read. */
  async reserve(o: ReserveOptions): Promise<Reservation> {
    const { db, account } = this;
    const fresh = new Set(o.fresh);
    const refs = [...new Set([...fresh, ...(o.settling ?? [])])];
    await this.flush();
    await db.tx(
      async (q) => {
        await store.clearDeadHolders(q, account);
        const run = await store.runOf(q, account, o.batchId);
        if (run && run.holder !== db.holder) throw batchInProgress(run);
        const held = await store.heldElsewhere(q, account, o.batchId, [...fresh]);
        if (held.length)
          throw referencesBeingSent(
            held.map((h) => h.reference),
            held[0]!.run,
          );
        await refuseReferencesSentBefore(this, o, fresh);
        try {
          await store.reserve(q, db, {
            account,
            batchId: o.batchId,
            file: o.file,
            results: o.results,
            command: o.command,
            host: hostname(),
            pid: process.pid,
            refs,
          });
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
              if (released || !(await store.stillHeld(q, db.holder, account, o.batchId, ref)))
                throw reservationLost(`the ledger ${db.where}`, released ? null : ref);
              write();
              await store.appendLines(q, account, db.holder, this.pending.splice(0));
            },
            { lock: account },
          ),
        ),
      // (the rows of a holder that is gone are cleared by others)
      release: () =>
        (released ??= this.inOrder(async () => {
          await this.writeNow();
          for (const table of ['reservations', 'batch_runs'])
            await db.query(`DELETE FROM payout_batch.${table} WHERE account = $1 AND batch_id = $2 AND holder = $3`, [
              account,
              o.batchId,
              db.holder,
            ]);
        }).then(() => {
          if (this.failed) throw this.failed;
        })),
    };
  }

  async policy(): Promise<{ text: string; where: string } | undefined> {
    const r = await this.db.query<{ policy: string }>(
      'SELECT policy FROM payout_batch.account_policies WHERE account = $1 ORDER BY id DESC LIMIT 1',
      [this.account],
    );
    const text = r.rows[0]?.policy;
    return text === undefined ? undefined : { text, where: `of ${this.account} in the ledger ${this.db.where}` };
  }

  async setPolicy(text: string): Promise<void> {
    await this.db.query('INSERT INTO payout_batch.account_policies (account, policy) VALUES ($1, $2)', [this.account, text]);
  }

  unapproved(day: string, take?: UnapprovedTake): Promise<{ totals: Record<string, string>; taken: boolean }> {
    return this.db.tx(
      async (q) => {
        const recorded = await q.query<UnapprovedPayout>(
          'SELECT reference, currency, amount FROM payout_batch.unapproved_payouts WHERE account = $1 AND day = $2 ORDER BY id',
          [this.account, day],
        );
        const r = countUnapproved(recorded.rows, take);
        await q.query(
          `INSERT INTO payout_batch.unapproved_payouts (account, day, reference, currency, amount)
           SELECT $1, $2, r, c, a FROM unnest($3::text[], $4::text[], $5::text[]) AS u(r, c, a)`,
          [this.account, day, ...(['reference', 'currency', 'amount'] as const).map((k) => r.add.map((p) => p[k]))],
        );
        return r;
      },
      { lock: this.account },
    );
  }

  claim(ask: ClaimRequest, o?: { mayRetake?: (ended: WatchClaim) => boolean | Promise<boolean> }): Promise<ClaimAnswer> {
    return store.claimContent(this.db, ask, o);
  }

  async claimAbandoned(sha256: string, claim: string): Promise<boolean | undefined> {
    try {
      const held = await store.claimOf(this.db, this.account, sha256);
      if (held?.claim !== claim) return undefined;
      return held.state !== 'running' || !(await this.db.holderAlive(held.holder));
    } catch (e) {
      if (e instanceof TeamLedgerError) return false; // (lost: the watch stops; the folder is left as it is)
      throw e;
    }
  }

  async endClaim(sha256: string, claim: string, state: 'done' | 'failed'): Promise<void> {
    await store.endClaim(this.db, { account: this.account, sha256, claim }, state);
  }
}

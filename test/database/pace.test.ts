// The key's pace and monthly count on the team ledger (issue 30), against a real database. Each
// TeamDb here stands for a process (a host): they share nothing but the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TeamDb, TeamLedgerError } from '../../src/ledger/pg-db.ts';
import { PENDING_MS, SlidingWindowLimiter, paceName, type PaceShare, type Take } from '../../src/client/pace.ts';
import { TeamPace, TeamUsage } from '../../src/ledger/postgres.ts';
import { UsageCounter, monthOf } from '../../src/client/quota.ts';
import { mostInWindow, startThrough } from '../client/starts.ts';
import { ledgerProcesses, withPostgres } from '../pg/database.ts';
import { until } from '../ops/helpers.ts';

describe('the limiter over a shared pace that answers later (the team ledger’s)', () => {
  /** A shared pace whose takes are answered by the test. */
  function laterPace() {
    const takes: ((t: Take) => void)[] = [];
    const unsent: string[] = [];
    const share: PaceShare = {
      take: () => new Promise<Take>((resolve) => takes.push(resolve)),
      markSent: () => undefined,
      unsent: (id) => void unsent.push(id),
    };
    return { share, takes, unsent };
  }

  it('one take at a time, one grant per granted take; a grant nobody waits for any more is given back', async () => {
    const { share, takes, unsent } = laterPace();
    const limiter = new SlidingWindowLimiter({ perWindow: 5, shared: share });
    const gone = new AbortController();
    const first = limiter.acquire();
    const second = limiter.acquire(gone.signal);
    const third = limiter.acquire(gone.signal);
    // three waiters, one question to the ledger
    expect(takes).toHaveLength(1);
    takes[0]!({ ok: true, id: 's1' });
    await first;
    await until(() => takes.length === 2, 2000, 'the next take');
    expect(limiter.waiting).toBe(2);
    // both leave while the answer is on its way: the start granted is not used, and given back
    gone.abort(new Error('left'));
    await expect(second).rejects.toThrow('left');
    await expect(third).rejects.toThrow('left');
    takes[1]!({ ok: true, id: 's2' });
    await until(() => unsent.length === 1, 2000, 'the start given back');
    expect(unsent).toEqual(['s2']);
    expect(takes).toHaveLength(2);
    // a refusal: the waiter asks again once told to wait
    const fourth = limiter.acquire();
    expect(takes).toHaveLength(3);
    takes[2]!({ ok: false, waitMs: 5 });
    await until(() => takes.length === 4, 2000, 'the take after the wait');
    takes[3]!({ ok: true, id: 's4' });
    await fourth;
    expect(limiter.waiting).toBe(0);
  });
});

describe.runIf(withPostgres)('the team ledger: pace and month of a key (ledger/postgres.ts)', () => {
  const processes = ledgerProcesses();
  const processOf = processes.connect;
  let a: TeamDb;
  let b: TeamDb;
  beforeAll(async () => {
    await processes.init();
    [a, b] = [await processOf(), await processOf()];
  });
  afterAll(processes.closeAll);

  /** The rows of a pace: its starts as the database holds them. */
  const rowsOf = async (pace: string) =>
    (
      await a.query<{ id: string; t: number; pending: boolean }>('SELECT id, t, pending FROM payout_batch.pace_starts WHERE pace = $1', [
        pace,
      ])
    ).rows;
  /** Puts a start of another process in the window, `ago` ms before the database's now. */
  const otherStart = (pace: string, ago: number, pending: boolean) =>
    a.query(
      `INSERT INTO payout_batch.pace_starts (pace, id, t, pending)
       VALUES ($1, gen_random_uuid()::text, (extract(epoch FROM clock_timestamp()) * 1000)::float8 - $2, $3)`,
      [pace, ago, pending],
    );

  it('names the pace by the service and the key fingerprint, never the key', () => {
    const name = paceName('https://gw.example', 'fp1');
    expect(name).toMatch(/^[0-9a-f]{24}$/);
    expect(paceName('https://gw.example/', 'fp1')).toBe(name);
    // one account however its URL is spelled: two jobs on one key share its 5 a second
    expect(paceName('HTTPS://GW.example:443', 'fp1')).toBe(name);
    expect(paceName('http://localhost:4010', 'fp1')).toBe(paceName('http://127.0.0.1:4010/', 'fp1'));
    expect(paceName('https://other.example', 'fp1')).not.toBe(name);
    expect(paceName('https://gw.example', 'fp2')).not.toBe(name);
  });

  it('two processes, each with its limiter: at most N starts in any window, one row per start granted', async () => {
    const pace = paceName('http://127.0.0.1:1', 'two-processes');
    const windowMs = 200;
    const limiters = [a, b].map(
      (db) => new SlidingWindowLimiter({ perWindow: 3, windowMs, safetyMarginMs: 10, shared: new TeamPace(db, pace) }),
    );
    const sent = await startThrough(limiters, 6);
    expect(sent).toHaveLength(12);
    // when they were sent, as each process saw it: at most 3 in any 200 ms
    expect(mostInWindow(sent, windowMs)).toBeLessThanOrEqual(3);
    // every grant was one take: no start taken twice for one waiter, none left pending once sent
    await until(async () => (await rowsOf(pace)).every((r) => !r.pending), 5000, 'every start marked sent');
    const rows = await rowsOf(pace);
    expect(rows).toHaveLength(12);
    // and as the database dated them (its own clock, when each was marked sent): the same promise
    expect(
      mostInWindow(
        rows.map((r) => r.t),
        windowMs,
      ),
    ).toBeLessThanOrEqual(3);
  });

  it('a start not sent yet counts as now (PENDING_MS at most), a sent one from when it left; old starts are deleted', async () => {
    const pace = paceName('http://127.0.0.1:2', 'pending');
    const taker = new TeamPace(b, pace);
    await otherStart(pace, 600, true);
    const pending = await taker.take(1, 1000);
    expect(!pending.ok && pending.waitMs).toBeGreaterThan(900);
    await a.query('UPDATE payout_batch.pace_starts SET pending = false WHERE pace = $1', [pace]);
    const sent = await taker.take(1, 1000);
    // counted from when it left (600 ms before the take, by the database's clock): at most about 400 ms
    // more, or none if the take came late on a busy machine; never the second a pending start costs
    expect(sent.ok ? 0 : sent.waitMs).toBeLessThanOrEqual(402);
    // a pending start left by a process that died before sending: it stops counting as now after PENDING_MS
    await a.query('DELETE FROM payout_batch.pace_starts WHERE pace = $1', [pace]);
    await otherStart(pace, PENDING_MS + 1100, true);
    // and a start of long ago: deleted by the next take
    await otherStart(pace, 60_000, false);
    const granted = await taker.take(1, 1000);
    expect(granted.ok).toBe(true);
    const rows = await rowsOf(pace);
    expect(rows).toHaveLength(2);
    expect(rows.some((r) => granted.ok && r.id === granted.id && r.pending)).toBe(true);
  });

  it("a start dated after the database's now (its clock stepped back) counts as now, not as a wait of the step", async () => {
    const pace = paceName('http://127.0.0.1:2', 'stepped');
    for (const pending of [false, true]) await otherStart(pace, -3_600_000, pending);
    const r = await new TeamPace(b, pace).take(2, 1000);
    expect(r.ok ? 0 : r.waitMs).toBeLessThanOrEqual(1001); // (two starts counted at now: one span at most)
  });

  it('a ledger lost mid-run: told once, and the process paces alone (its own limiter still holds)', async () => {
    const db = await processOf();
    const errors: Error[] = [];
    const pace = new TeamPace(db, paceName('http://127.0.0.1:3', 'lost'), (e) => errors.push(e));
    expect((await pace.take(1, 1000)).ok).toBe(true);
    await db.close();
    expect((await pace.take(1, 1000)).ok).toBe(true);
    expect((await pace.take(1, 1000)).ok).toBe(true);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(TeamLedgerError);
    // the limiter over it: 2 a window, the third waits for this process's own window
    const limiter = new SlidingWindowLimiter({ perWindow: 2, windowMs: 60_000, shared: pace });
    await limiter.acquire();
    await limiter.acquire();
    const stop = new AbortController();
    const third = limiter.acquire(stop.signal);
    expect(limiter.waiting).toBe(1);
    stop.abort(new Error('enough'));
    await expect(third).rejects.toThrow('enough');
  });

  it('the month: two processes add up exactly, and a third reads the sum; where the key worked is shared', async () => {
    const counters = [a, b].map((db) => new UsageCounter({ store: new TeamUsage(db), flushMs: 0 }));
    const rounds = 20;
    await Promise.all(
      counters.map(async (c, k) => {
        for (let i = 0; i < rounds; i++) {
          c.count('fp-month', k + 1);
          await c.flush();
        }
      }),
    );
    counters[0]!.label('fp-month', 'production');
    await counters[0]!.close();
    const third = new UsageCounter({ store: new TeamUsage(await processOf()) });
    expect(third.path).toBeUndefined();
    const usage = await third.usage('fp-month');
    expect(usage).toMatchObject({ month: monthOf(new Date()), used: rounds * 3 });
    // plus what this process has not written yet
    third.count('fp-month', 2);
    expect((await third.usage('fp-month')).used).toBe(rounds * 3 + 2);
    expect(await third.environmentOf('fp-month')).toBe('production');
    expect(await third.environmentOf('fp-other')).toBeUndefined();
  });
});

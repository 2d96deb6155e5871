// A shared processing/ with a team ledger: another host's claim folder is taken over when the
// database says its process is gone (its session lock released), at once, and never while that
// process lives, whatever its heartbeat says. In process, against the sandbox over HTTP.
import { mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TeamDb } from '../../src/ledger/pg-db.ts';
import { PgLedgers, claimContent, claimOf, endClaim } from '../../src/ledger/postgres.ts';
import { fileSha256 } from '../../src/engine/identity.ts';
import { accountOf } from '../../src/ledger/account-ledger.ts';
import { WatchConfig } from '../../src/watch/config.ts';
import { watchFolder } from '../../src/watch/watcher.ts';
import { claimFile, readClaim, writeClaim } from '../../src/watch/claim-folder.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { generateCsv, initiates, tempDirs } from '../engine/helpers.ts';
import { testDatabase, withPostgres } from '../pg/database.ts';
import { allPayouts, connectionTo, startSb, until } from './helpers.ts';

describe.runIf(withPostgres)('a claim folder of another host, with a team ledger', () => {
  let sb: LocalSandbox;
  let url: string;
  const dirs = tempDirs('pb-watch-takeover-');
  const open: TeamDb[] = [];
  beforeAll(async () => {
    [sb, url] = await Promise.all([startSb({ monthlyQuota: null }), testDatabase()]);
  });
  afterAll(async () => {
    await Promise.all(open.map((d) => d.close()));
    await sb?.close();
    await dirs.remove();
  });
  const proc = async () => {
    const db = await TeamDb.open(url, { command: 'watch' });
    open.push(db);
    return db;
  };
  const watchWith = (dir: string, team: TeamDb, fetchImpl?: typeof fetch) =>
    watchFolder({
      dir,
      config: WatchConfig.parse({ environment: 'sandbox', settleSeconds: 0, claimStaleSeconds: 10 }),
      conn: { ...connectionTo(sb, fetchImpl), shared: new PgLedgers(team) },
      once: true,
      crashWaitMs: 0,
    });

  /** A claim folder `id` holding `name`, written by pid 1 of "other-host" long ago. */
  const otherHostsClaim = async (id: string, name: string, csv: string) => {
    const dir = await dirs.make();
    const claimDir = join(dir, 'processing', id);
    mkdirSync(claimDir, { recursive: true });
    const file = join(claimDir, name);
    writeFileSync(file, csv);
    const [st, sha256] = [statSync(file), await fileSha256(file)];
    writeClaim(claimDir, {
      name,
      pid: 1,
      host: 'other-host',
      claimedAt: new Date(0).toISOString(),
      sha256,
      size: st.size,
      mtimeMs: st.mtimeMs,
    });
    return { dir, claimDir, sha256 };
  };

  it('is left while its process lives (stale heartbeat or not), taken over and resumed once it is gone', async () => {
    const id = '20250101T000000Z-abcdef-payroll.csv';
    const { dir, claimDir, sha256 } = await otherHostsClaim(
      id,
      'payroll.csv',
      generateCsv({ rows: 2, currencies: ['GBP'], prefix: 'TAKE' }),
    );
    utimesSync(claimFile(claimDir), new Date(0), new Date(0)); // no heartbeat for decades
    const other = await proc();
    expect(await claimContent(other, { account: accountOf(sb.url), sha256, claim: id, name: 'payroll.csv', host: 'other-host' })).toEqual({
      held: true,
    });

    const team = await proc();
    const watch = () => watchWith(dir, team);
    const alive = await watch();
    expect(alive.files).toEqual([]);
    expect(readdirSync(join(dir, 'processing'))).toEqual([id]);
    expect(initiates(sb)).toHaveLength(0);

    // killed: its session ends, its lock with it
    await team.query(`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = $1::bigint::oid`, [
      other.lockId,
    ]);
    await until(async () => !(await team.holderAlive(other.holder)));
    const gone = await watch();
    expect(gone.files).toMatchObject([{ name: 'payroll.csv', claim: id, outcome: 'done', resumed: true }]);
    expect(initiates(sb)).toHaveLength(2);
    expect(await claimOf(team, accountOf(sb.url), sha256)).toMatchObject({ claim: id, holder: team.holder, state: 'done' });
  });

  it('two watches on one folder: the claim one took over is not taken over again before it holds it in the ledger', async () => {
    const id = '20250101T000000Z-fedcba-twice.csv';
    const csv = generateCsv({ rows: 2, currencies: ['GBP'], prefix: 'TWICE', amount: (i) => `${271 + i}.00` });
    const { dir, claimDir, sha256 } = await otherHostsClaim(id, 'twice.csv', csv);
    const other = await proc();
    await claimContent(other, { account: accountOf(sb.url), sha256, claim: id, name: 'twice.csv', host: 'other-host' });
    const team = await proc();
    await team.query(`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = $1::bigint::oid`, [
      other.lockId,
    ]);
    await until(async () => !(await team.holderAlive(other.holder)));
    const before = initiates(sb).length;

    // the first watch takes the folder over, then is slow to claim it in the ledger (once it has written its claim record)
    const slow = new PgLedgers(await proc());
    const ledger = slow.of(accountOf(sb.url));
    const claim = ledger.claim.bind(ledger);
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    ledger.claim = async (...a) => {
      if (readClaim(claimDir)?.takenOverAt) await gate;
      return claim(...a);
    };
    const first = watchFolder({
      dir,
      config: WatchConfig.parse({ environment: 'sandbox', settleSeconds: 0, claimStaleSeconds: 10 }),
      conn: { ...connectionTo(sb), shared: slow },
      once: true,
      crashWaitMs: 0,
    });
    await until(() => readClaim(claimDir)?.takenOverAt !== undefined);
    const second = await watchWith(dir, await proc());
    expect(second.files).toEqual([]);
    release();
    expect((await first).files).toMatchObject([{ name: 'twice.csv', claim: id, outcome: 'done', resumed: true }]);
    expect(initiates(sb).length - before).toBe(2);
  });

  it('refuses content whose claim ended done, naming it; runs again content whose claim failed with nothing sent', async () => {
    const dir = await dirs.make();
    mkdirSync(join(dir, 'inbox'));
    const other = await proc();
    const drop = async (name: string, prefix: string, state: 'done' | 'failed') => {
      const file = join(dir, 'inbox', name);
      // (an amount of its own: the payee and amount the test before paid are a probable duplicate)
      writeFileSync(file, generateCsv({ rows: 1, currencies: ['GBP'], prefix, amount: () => '77.00' }));
      const c = { account: accountOf(sb.url), sha256: await fileSha256(file), claim: `elsewhere-${name}`, name, host: 'other-host' };
      await claimContent(other, c);
      await endClaim(other, c, state);
    };
    await drop('paid.csv', 'ENDED', 'done');
    await drop('refused.csv', 'AGAIN', 'failed'); // (no journal of it: nothing was sent)
    const before = initiates(sb).length;
    const r = await watchWith(dir, await proc());
    const byName = new Map(r.files.map((f) => [f.name, f]));
    expect(byName.get('paid.csv')).toMatchObject({ outcome: 'failed', kind: 'refused' });
    expect(byName.get('paid.csv')!.reason).toMatch(/claimed on host other-host \(claim elsewhere-paid\.csv, done /);
    const summary = JSON.parse(readFileSync(join(byName.get('paid.csv')!.folder, 'paid.summary.json'), 'utf8'));
    expect(summary.claimedElsewhere).toMatchObject({ host: 'other-host', claim: 'elsewhere-paid.csv', state: 'done' });
    expect(byName.get('refused.csv')).toMatchObject({ outcome: 'done', kind: 'ok' });
    expect(initiates(sb).length - before).toBe(1);
  });

  it('the database lost mid-run: the file is left in processing/ (halted, exit 4), then resumed once it is back', async () => {
    const dir = await dirs.make();
    mkdirSync(join(dir, 'inbox'));
    writeFileSync(
      join(dir, 'inbox', 'lost.csv'),
      generateCsv({ rows: 6, currencies: ['GBP'], prefix: 'LOST', amount: (i) => `${161 + i}.00` }),
    );
    const before = initiates(sb).length;
    const team = await proc();
    // the server ends every session of this process once two payouts went out
    const killing: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (init?.method === 'POST' && initiates(sb).length - before === 2 && !team.lost) {
        await (
          await proc()
        ).query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database() AND application_name = $1',
          ['payout-batch watch'],
        );
        await until(() => team.lost !== undefined);
      }
      return res;
    };
    const lost = await watchWith(dir, team, killing);
    expect(lost.kind).toBe('halted');
    expect(lost.files).toMatchObject([{ name: 'lost.csv', outcome: 'processing', kind: 'halted' }]);
    expect(lost.files[0]!.reason).toMatch(/was lost .*left in processing\/, resumed on the next run/);
    expect(readdirSync(join(dir, 'processing'))).toHaveLength(1);

    const again = await watchWith(dir, await proc());
    expect(again.files).toMatchObject([{ name: 'lost.csv', outcome: 'done', resumed: true }]);
    const paid = (await allPayouts(sb)).filter((p) => Number(p.sourceAmount) >= 161 && Number(p.sourceAmount) < 167);
    expect(paid.map((p) => Number(p.sourceAmount)).sort()).toEqual([161, 162, 163, 164, 165, 166]);
  });
});

// `listen --watch-dir W` where W's payout-batch.json names a team ledger: the watch journals its
// batches there, so the listener records each change there too (a run still in processing/ writes
// its results from that journal), whatever $PAYOUT_BATCH_LEDGER_URL says; and watch folders naming
// two ledgers are refused, nothing listened to. --register's requests count in that ledger too.
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { runBatch } from '../../src/engine/pipeline.ts';
import { startListener } from '../../src/follow-up/webhook-receiver.ts';
import { accountOf, foldBatch } from '../../src/ledger/account-ledger.ts';
import { TeamDb } from '../../src/ledger/pg-db.ts';
import { PgLedgers } from '../../src/ledger/postgres.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { tempDirs } from '../engine/helpers.ts';
import { testDatabase, withPostgres } from '../pg/database.ts';
import { cleanEnv, connectionTo, postStatusChange, startSb, unattended, until, writeBatch } from './helpers.ts';

const SECRET = 'whsec_watch_ledger_0123456789abcdef';

/** `listen --port 0` in this process, until `stop()`. */
function listen(args: string[], env: Record<string, string>, cwd: string) {
  let stop = () => {};
  const stopSignal = new Promise<void>((r) => (stop = r));
  let out = '';
  let err = '';
  const stdout = new PassThrough().on('data', (c: Buffer) => (out += c.toString()));
  const stderr = new PassThrough().on('data', (c: Buffer) => (err += c.toString()));
  const stdin = Readable.from([]);
  const secretFile = join(cwd, 'secret');
  writeFileSync(secretFile, SECRET, { mode: 0o600 });
  const code = main(['listen', '--port', '0', '--secret-file', secretFile, ...args], { stdout, stderr, stdin, env, cwd, stopSignal });
  const l = { code, stop, out: () => out, err: () => err, ended: false };
  void code.finally(() => (l.ended = true));
  return l;
}
/** Once listening (its address) or ended (undefined). */
async function listening(l: ReturnType<typeof listen>): Promise<string | undefined> {
  await until(() => l.ended || l.out().includes('Listening on'), 10_000, 'the listener');
  return /Listening on (\S+) /.exec(l.out())?.[1];
}

describe.runIf(withPostgres)('listen --watch-dir, the watch on a team ledger', () => {
  let sb: LocalSandbox;
  let url: string;
  let team: TeamDb;
  const dirs = tempDirs('pb-listen-watch-ledger-');
  beforeAll(async () => {
    [sb, url] = await Promise.all([startSb(), testDatabase()]);
    team = await TeamDb.open(url, { command: 'test' });
    // (the driver reads the password of a URL without one from this process's environment, not the command's)
    process.env.PGPASSWORD = decodeURIComponent(new URL(url).password);
  });
  afterAll(async () => {
    delete process.env.PGPASSWORD;
    await team?.close();
    await sb?.close();
    await dirs.remove();
  });

  /** A watch folder whose configuration names `ledger` (no password: PGPASSWORD gives it). */
  const watchFolder = async (ledger?: string) => {
    const dir = await dirs.make();
    for (const sub of ['inbox', 'processing', 'done', 'failed']) mkdirSync(join(dir, sub));
    writeFileSync(join(dir, 'payout-batch.json'), JSON.stringify({ environment: 'sandbox', baseUrl: sb.url, ledger }));
    return dir;
  };
  const noPassword = () => {
    const u = new URL(url);
    u.password = '';
    return u.toString();
  };

  let runs = 0;
  /** A payout the team ledger journals, of a run with no results file listen reads (still under way); its status there. */
  const sentPayout = async (dir: string) => {
    const file = await writeBatch(await dirs.make(), 'payroll.csv', {
      rows: 1,
      currencies: ['GBP'],
      prefix: `P${++runs}`,
      amount: () => `${20 + runs}.00`,
    });
    const conn = { ...connectionTo(sb), shared: new PgLedgers(team) };
    const r = await runBatch({ file, conn, stateDir: join(dir, '.state'), ...unattended({ settleDelayMs: 10 }) });
    expect(r.kind).toBe('ok');
    const ledger = new PgLedgers(team).of(accountOf(sb.url));
    const payout = async () => [...(await foldBatch(ledger, r.batchId)).folded.rows.values()][0]!.payout!;
    const { id } = await payout();
    return { id, status: async () => (await payout()).status };
  };
  const listenersGone = () =>
    team.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'payout-batch listen'`,
    );

  it("records a change of a payout the watch's run holds in the configuration's ledger", async () => {
    const ledger = noPassword();
    const dir = await watchFolder(ledger);
    const elsewhere = await dirs.make();
    const { id, status } = await sentPayout(dir);

    // $PAYOUT_BATCH_LEDGER_URL unset: the configuration alone names the ledger
    const l = listen(['--watch-dir', dir], cleanEnv({ HOME: elsewhere }), elsewhere);
    const at = await listening(l);
    expect(at, l.err()).toBeDefined();
    expect((await postStatusChange(at!, SECRET, id, ['PENDING', 'PROCESSING'])).status).toBe(200);
    l.stop();
    expect(await l.code, l.err()).toBe(0);
    expect(l.out()).toContain('1 applied');
    expect(await status()).toBe('PROCESSING');
  });

  it('takes $PAYOUT_BATCH_LEDGER_URL, password and all, for a configuration naming no ledger or its ledger (--ledger holds none)', async () => {
    const [dir, named] = [await watchFolder(), await watchFolder(noPassword())];
    const { id, status } = await sentPayout(dir);
    const l = listen(['--watch-dir', dir, '--watch-dir', named], cleanEnv({ HOME: dir, PAYOUT_BATCH_LEDGER_URL: url }), dir);
    const at = await listening(l);
    expect(at, l.err()).toBeDefined();
    expect((await postStatusChange(at!, SECRET, id, ['PENDING', 'PROCESSING'])).status).toBe(200);
    l.stop();
    expect(await l.code, l.err()).toBe(0);
    expect(await status()).toBe('PROCESSING');
  });

  it("--register: the subscription's requests are counted in the configuration's ledger, the team's quota", async () => {
    const dir = await watchFolder(noPassword());
    const used = async () =>
      (await team.query<{ n: number }>('SELECT coalesce(sum(requests), 0)::int AS n FROM payout_batch.usage')).rows[0]!.n;
    const before = await used();
    const l = listen(['--watch-dir', dir, '--register', 'http://127.0.0.1:9/hooks', '--base-url', sb.url], cleanEnv({ HOME: dir }), dir);
    expect(await listening(l), l.err()).toBeDefined();
    await until(() => l.ended || l.out().includes('Subscription'), 10_000, 'the subscription');
    l.stop();
    expect(await l.code, l.err()).toBe(0);
    expect(await used()).toBeGreaterThan(before);
  });

  it('stops (exit 4) once the team ledger is lost: it is never reconnected', async () => {
    const dir = await watchFolder(noPassword());
    const l = listen(['--watch-dir', dir], cleanEnv({ HOME: dir }), dir);
    expect(await listening(l), l.err()).toBeDefined();
    await listenersGone();
    try {
      await until(() => l.ended, 10_000, 'listen to stop');
    } finally {
      l.stop();
    }
    expect(await l.code).toBe(4);
    expect(l.err()).toContain('was lost');
  });

  it('keeps a delivery accepted once the team ledger is lost: the next start records it there', async () => {
    const dir = await dirs.make();
    const { id, status } = await sentPayout(dir);
    const start = async () => {
      const db = await TeamDb.open(url, { command: 'listen' });
      const listener = await startListener({ port: 0, secret: SECRET, stateDir: join(dir, 'listen'), shared: new PgLedgers(db) });
      return { db, listener };
    };
    const first = await start();
    await listenersGone();
    await until(() => first.db.lost !== undefined, 5000, 'the ledger lost');
    expect((await postStatusChange(first.listener.url, SECRET, id, ['PENDING', 'PROCESSING'])).status).toBe(200);
    await first.listener.close();
    await first.db.close();
    expect(await status()).toBe('PENDING');

    const second = await start();
    await second.listener.idle();
    await second.listener.close();
    await second.db.close();
    expect(await status()).toBe('PROCESSING');
  });

  it('refuses watch folders naming two ledgers', async () => {
    const ledger = noPassword();
    const one = await watchFolder(ledger);
    const other = await watchFolder(ledger.replace(/\/[^/]*$/, '/another'));
    const l = listen(['--watch-dir', one, '--watch-dir', other], cleanEnv({ HOME: one }), one);
    const at = await listening(l);
    l.stop();
    expect(at).toBeUndefined();
    expect(await l.code).toBe(2);
    expect(l.err()).toContain('two team ledgers');
    expect(l.out()).not.toContain('Listening on');
  });
});

it('refuses a state folder another user could write (exit 3): a line put in its inbox would be applied unverified', async () => {
  const dirs = tempDirs('pb-listen-state-');
  try {
    const dir = await dirs.make();
    const state = join(dir, 'listen');
    mkdirSync(state);
    chmodSync(state, 0o770);
    const l = listen(['--state-dir', state], cleanEnv({ HOME: dir }), dir);
    const at = await listening(l);
    l.stop();
    expect(at).toBeUndefined();
    expect(await l.code).toBe(3);
    expect(l.err()).toMatch(/state folder .*listen is writable by its group/);
    expect(existsSync(join(state, 'inbox.jsonl'))).toBe(false);
  } finally {
    await dirs.remove();
  }
});

// A team ledger whose host vanishes mid-run (power cut, network gone: no reset, no end) is lost
// once a statement gets no answer in $PAYOUT_BATCH_LEDGER_TIMEOUT seconds: the run stops with 4, not
// a hang a cron job never ends, and the same command run again finishes the batch, no payout twice.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TeamDb } from '../../src/ledger/pg-db.ts';
import { allPayouts, cleanEnv, initiates, runCli, tempDirs, writeBatch } from '../engine/helpers.ts';
import { startSb, until } from '../ops/helpers.ts';
import { testDatabase, withPostgres } from '../pg/database.ts';

const dirs = tempDirs('pb-vanish-');

/**
 * A TCP proxy to `port` that can go silent: it stops forwarding bytes, ends and closes, either way, and keeps both sockets open
 * (half-open: a client's end is forwarded, never answered here, as a silent host answers none).
 */
async function vanishingProxy(port: number) {
  let silent = false;
  let at: Buffer | undefined;
  const open = new Set<Socket>();
  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    const server = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    for (const [from, to] of [
      [client, server],
      [server, client],
    ] as const) {
      open.add(from);
      from.on('data', (d: Buffer) => (silent ||= from === client && !!at && d.includes(at)) || to.write(d));
      from.on('end', () => silent || to.end());
      from.on('close', () => (open.delete(from), silent || to.destroy()));
      from.on('error', () => undefined);
    }
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return {
    port: (server.address() as { port: number }).port,
    vanish: () => (silent = true),
    /** Goes silent once a client sends these bytes (not forwarded). */
    vanishAt: (bytes: string | Buffer) => (at = Buffer.from(bytes)),
    /** The network is back: the connections it held are gone (the server's ends too), new ones are forwarded. */
    restore: () => {
      [silent, at] = [false, undefined];
      for (const s of open) s.destroy();
    },
    close: () => new Promise((r) => server.close(r)),
  };
}

describe.runIf(withPostgres)('a team ledger whose host vanishes mid-run', () => {
  let sb: LocalSandbox;
  let dir: string;
  beforeAll(async () => {
    sb = await startSb({ monthlyQuota: null });
    dir = await dirs.make();
  });
  afterAll(async () => {
    await sb?.close();
    await dirs.remove();
  });

  it('stops the run with 4 once a statement gets no answer in $PAYOUT_BATCH_LEDGER_TIMEOUT s; run again, it finishes, none twice', async () => {
    const rows = 12;
    await writeBatch(dir, 'payroll.csv', { rows, prefix: 'VANISH' });
    const url = await testDatabase();
    const proxy = await vanishingProxy(Number(new URL(url).port));
    const through = new URL(url);
    through.port = String(proxy.port);
    // (1 request a second: the run is still sending, 11 s more, when the first initiate is seen, on a busy machine too)
    const env = (extra: Record<string, string>) =>
      cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state'), HOME: dir, PAYOUT_BATCH_LEDGER_URL: through.toString(), ...extra });
    const run = (extra: Record<string, string>, timeoutMs: number) =>
      runCli(['run', 'payroll.csv', '--yes', '--base-url', sb.url], { cwd: dir, env: env(extra), timeoutMs });
    const before = { initiates: initiates(sb).length, payouts: (await allPayouts(sb)).length };
    try {
      let ended = false;
      // a hang is killed after 60 s (and fails below): the bound is 3 s
      const lost = run({ PAYOUT_BATCH_LEDGER_TIMEOUT: '3', PAYOUT_BATCH_RATE: '1' }, 60_000).finally(() => (ended = true));
      await until(() => ended || initiates(sb).length > before.initiates, 60_000, 'the first initiate');
      proxy.vanish();
      const first = await lost;
      expect(first.signal, first.stderr).toBeNull();
      expect(first.code, first.stderr).toBe(4);
      expect(first.stderr).toMatch(
        /the ledger postgres:\/\/[^ ]* was lost \(no answer in 3 s\): nothing more is sent; run the command again/,
      );
      expect(first.stderr + first.stdout).not.toContain(decodeURIComponent(through.password));
      expect(initiates(sb).length - before.initiates).toBeLessThan(rows);

      // the network is back; the server has ended the vanished run's sessions (their locks with them)
      proxy.restore();
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      const others = async () =>
        (
          await c.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
          )
        ).rows[0]!.n;
      await until(async () => (await others()) === 0, 30_000, 'the vanished run to leave the server');
      await c.end();
      const again = await run({}, 120_000);
      expect(again.code, again.stderr).toBe(0);
      // every row paid once (the sandbox's list has no reference: a second payout of a row is one more); a row the lost run sent
      // but never recorded the answer of is sent again under its idempotency key, and the service answers the same payout
      expect((await allPayouts(sb)).length - before.payouts).toBe(rows);
      expect(initiates(sb).length - before.initiates).toBeGreaterThanOrEqual(rows);
    } finally {
      proxy.restore();
      await proxy.close();
    }
  });
});

// A command closes its ledger at its end: a host gone silent then (no FIN, no reset) never answers the connections' ends, and a
// cron job that had done its work waited on them until TCP gave up (many minutes), holding its process.
describe.runIf(withPostgres)('a team ledger whose host goes silent as the command ends', () => {
  let url: URL;
  let proxy: Awaited<ReturnType<typeof vanishingProxy>>;
  beforeAll(async () => {
    url = new URL(await testDatabase());
    proxy = await vanishingProxy(Number(url.port));
    url.port = String(proxy.port);
  });
  afterAll(async () => {
    proxy?.restore();
    await proxy?.close();
    await dirs.remove();
  });

  const terminate = Buffer.from([0x58, 0, 0, 0, 4]); // (the protocol's goodbye, which an end sends once the holder row is deleted)
  it.each([
    ['before it', () => proxy.vanish()],
    ['with a statement pending', () => proxy.vanish()],
    ['from its goodbye on', () => proxy.vanishAt(terminate)],
  ])(
    'close() ends, the host silent %s',
    async (when, vanish) => {
      proxy.restore();
      const db = await TeamDb.open(url.toString(), { command: 'test', timeout: 2 });
      await db.query('SELECT 1'); // (a connection of the pool too, idle)
      vanish();
      const pending = when.includes('pending') ? expect(db.query('SELECT 1')).rejects.toMatchObject({ code: 'LEDGER_LOST' }) : undefined;
      // (a hang fails by this test's timeout)
      await expect(db.close()).resolves.toBeUndefined();
      await pending;
    },
    60_000,
  );

  it('a command whose host goes silent once its work is done exits with its exit code', async () => {
    const dir = await dirs.make();
    proxy.restore();
    proxy.vanishAt('DELETE FROM payout_batch.holders'); // (its holder row, deleted as it closes the ledger)
    const env = cleanEnv({ HOME: dir, PAYOUT_BATCH_LEDGER_URL: url.toString(), PAYOUT_BATCH_LEDGER_TIMEOUT: '2' });
    // (a hang is killed after 60 s, with a signal)
    const status = await runCli(['ledger', 'status'], { cwd: dir, env, timeoutMs: 60_000 });
    expect(status.signal, status.stderr).toBeNull();
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('schema version');
  });
});

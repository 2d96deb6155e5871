// A team ledger whose host vanishes mid-run (power cut, network gone: no reset, no end) is lost
// once a statement gets no answer in $PAYOUT_BATCH_LEDGER_TIMEOUT seconds: the run stops with 4, not
// a hang a cron job never ends, and the same command run again finishes the batch, no payout twice.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, cleanEnv, initiates, runCli, tempDirs, writeBatch } from '../engine/helpers.ts';
import { startSb, until } from '../ops/helpers.ts';
import { testDatabase, withPostgres } from '../pg/database.ts';

const dirs = tempDirs('pb-vanish-');

/** A TCP proxy to `port` that can go silent: it stops forwarding bytes, and closes, either way, and keeps both sockets open. */
async function vanishingProxy(port: number) {
  let silent = false;
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    const server = connect(port, '127.0.0.1');
    for (const [from, to] of [
      [client, server],
      [server, client],
    ] as const) {
      open.add(from);
      from.on('data', (d: Buffer) => silent || to.write(d));
      from.on('close', () => (open.delete(from), silent || to.destroy()));
      from.on('error', () => undefined);
    }
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return {
    port: (server.address() as { port: number }).port,
    vanish: () => (silent = true),
    /** The network is back: the connections it held are gone (the server's ends too), new ones are forwarded. */
    restore: () => {
      silent = false;
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
    const rows = 6;
    await writeBatch(dir, 'payroll.csv', { rows, prefix: 'VANISH' });
    const url = await testDatabase();
    const proxy = await vanishingProxy(Number(new URL(url).port));
    const through = new URL(url);
    through.port = String(proxy.port);
    // (2 requests a second: the run is still sending when the first initiate is seen)
    const env = (extra: Record<string, string>) =>
      cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state'), HOME: dir, PAYOUT_BATCH_LEDGER_URL: through.toString(), ...extra });
    const run = (extra: Record<string, string>, timeoutMs: number) =>
      runCli(['run', 'payroll.csv', '--yes', '--base-url', sb.url], { cwd: dir, env: env(extra), timeoutMs });
    const before = { initiates: initiates(sb).length, payouts: (await allPayouts(sb)).length };
    try {
      let ended = false;
      // a hang is killed after 60 s (and fails below): the bound is 3 s
      const lost = run({ PAYOUT_BATCH_LEDGER_TIMEOUT: '3', PAYOUT_BATCH_RATE: '2' }, 60_000).finally(() => (ended = true));
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

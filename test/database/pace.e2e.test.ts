// Issue 30: one pace and one monthly count per key for every host on a team ledger. Two hosts
// (separate HOME and state folders: nothing shared but the database) run two payrolls at once
// with one key against a sandbox at the spec's real limit (5 requests per rolling second per key):
// no 429, at most 5 arrivals in any rolling second at the sandbox and at most 5 of both hosts'
// `sentAt` (the JSON logs' send times) in any second; then a third host reads the key's month
// (`account --json`): every request of the three. The margin is raised to 300 ms as in
// test/client/pace.e2e.test.ts: the sandbox dates arrivals in this test's worker, on a machine
// shared with other test files, and the margin is what absorbs a stall of its event loop.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyFingerprint } from '../../src/client/api-key.ts';
import { paceName } from '../../src/client/pace.ts';
import { TeamDb } from '../../src/ledger/pg-db.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { KEY, cleanEnv, runCli, tempDirs, writeBatch } from '../engine/helpers.ts';
import { mostInWindow, sentTimes } from '../client/starts.ts';
import { testDatabase, withPostgres } from '../pg/database.ts';

const ROWS = 10;

describe.runIf(withPostgres)('two hosts with one key on one team ledger, the sandbox at 5 requests a second', () => {
  let sb: LocalSandbox;
  let ledger: string;
  const dirs = tempDirs('pb-team-pace-');
  beforeAll(async () => {
    [sb, ledger] = await Promise.all([startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: 5, monthlyQuota: null }), testDatabase()]);
  });
  afterAll(async () => {
    await sb?.close();
    await dirs.remove();
  });

  /** A host of its own: HOME and state folder; the same key and ledger; the spec's 5 a second. */
  const host = async (name: string, args: string[]) => {
    const home = join(await dirs.make(), name);
    await mkdir(home);
    const env = cleanEnv({
      HOME: home,
      PAYOUT_BATCH_STATE_DIR: join(home, 'state'),
      PAYOUT_BATCH_LEDGER_URL: ledger,
      // the default pace, the spec's 5 a second (an empty $PAYOUT_BATCH_RATE is no rate)
      PAYOUT_BATCH_RATE: '',
    });
    return { home, run: () => runCli([...args, '--base-url', sb.url, '--safety-margin', '300'], { cwd: home, env }) };
  };

  it('no 429, at most 5 starts in any rolling second of both; a third host reads both in the month', async () => {
    const [alice, bob] = await Promise.all([
      host('alice', ['run', 'a.csv', '--yes', '--log-level', 'debug']),
      host('bob', ['run', 'b.csv', '--yes', '--log-level', 'debug']),
    ]);
    await writeBatch(alice.home, 'a.csv', { rows: ROWS, currencies: ['GBP'], prefix: 'TEAM-A' });
    await writeBatch(bob.home, 'b.csv', { rows: ROWS, currencies: ['GBP'], prefix: 'TEAM-B', amount: (i) => `${300 + i}.00` });
    const [a, b] = await Promise.all([alice.run(), bob.run()]);
    expect(a.code, a.stderr.slice(-2000)).toBe(0);
    expect(b.code, b.stderr.slice(-2000)).toBe(0);

    const mine = () => sb.requestLog().filter((e) => e.apiKey === KEY);
    const both = mine();
    expect(both.filter((e) => e.status === 429)).toEqual([]);
    expect(
      mostInWindow(
        both.map((e) => e.at),
        1000,
      ),
    ).toBeLessThanOrEqual(5);
    const sent = [...sentTimes(a), ...sentTimes(b)];
    // every request of both hosts is in their records, each dated when it was sent
    expect(sent).toHaveLength(both.length);
    expect(mostInWindow(sent, 1000)).toBeLessThanOrEqual(5);
    // the pace they shared is the ledger's, named by the service and the key's fingerprint
    const db = await TeamDb.open(ledger);
    try {
      const starts = await db.query('SELECT 1 FROM payout_batch.pace_starts WHERE pace = $1', [paceName(sb.url, keyFingerprint(KEY))]);
      expect(starts.rowCount).toBeGreaterThan(0);
    } finally {
      await db.close();
    }

    // a third host, with a state folder of its own, reads the month of the key: both hosts' requests and its own
    const carol = await host('carol', ['account', '--json']);
    const c = await carol.run();
    expect(c.code, c.stderr.slice(-2000)).toBe(0);
    const quota = (JSON.parse(c.stdout) as { quota: { used: number; ledger?: string; file?: string } }).quota;
    expect(quota.used).toBe(mine().length);
    expect(quota.used).toBeGreaterThan(both.length);
    // named without its password (in the URL of $PAYOUT_BATCH_LEDGER_URL here)
    expect(quota.ledger).toMatch(/^postgres:\/\/payout@127\.0\.0\.1:/);
    expect(quota.file).toBeUndefined();
  });
});

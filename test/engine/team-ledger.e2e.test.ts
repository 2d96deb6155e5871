// Issue 30: a team's ledger on PostgreSQL. Two "hosts" are two HOMEs and state folders of their
// own, one ledger database, one sandbox; the CLI spawned as a user runs it, over real HTTP (the
// steps before and after a test's own by main() in this process).
import { existsSync, mkdirSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import pg from 'pg';
import { startCluster } from '../pg/cluster.ts';
import { testDatabase, withPostgres } from '../pg/database.ts';
import { eventually } from '../sandbox/helpers.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { readResults } from '../../src/results/read.ts';
import { writeResults } from '../../src/results/write.ts';
import { allPayouts, cleanEnv, initiates, runCli, runMain, tempDirs, writeBatch, type CliRun } from './helpers.ts';

const dirs = tempDirs('pb-team-ledger-');

/** A host: its own HOME and state folder, the team's ledger, the shared folder as working folder. */
function host(shared: string, name: string, ledger: string, url: string, extra: Record<string, string> = {}) {
  const home = join(shared, `.home-${name}`);
  mkdirSync(home, { recursive: true });
  const env = cleanEnv({ HOME: home, PAYOUT_BATCH_STATE_DIR: join(home, 'state'), PAYOUT_BATCH_LEDGER_URL: ledger, ...extra });
  const cli = (...args: string[]): Promise<CliRun> => runCli([...args, '--base-url', url], { cwd: shared, env });
  // a step that only sets the scene or follows the one under test, run in this process
  cli.inProcess = (...args: string[]): Promise<CliRun> => runMain([...args, '--base-url', url], { cwd: shared, env });
  cli.env = env;
  return cli;
}

/** The payouts the sandbox holds (its list has no reference: a second payout of a row is one more). */
const payoutCount = async (sb: LocalSandbox) => (await allPayouts(sb)).length;

describe.runIf(withPostgres)('a team ledger on PostgreSQL', () => {
  let sb: LocalSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null, monthlyQuota: null });
  });
  afterAll(async () => {
    await sb?.close();
    await dirs.remove();
  });

  it('two hosts run the same payroll at once: one payout per reference', async () => {
    const ledger = await testDatabase();
    const shared = await dirs.make();
    await writeBatch(shared, 'payroll.csv', { rows: 6, currencies: ['GBP'], prefix: 'TWOHOST' });
    const before = await payoutCount(sb);
    const sent = initiates(sb).length;
    const alice = host(shared, 'alice', ledger, sb.url);
    const bob = host(shared, 'bob', ledger, sb.url);
    const [a, b] = await Promise.all([alice('run', 'payroll.csv', '--yes'), bob('run', 'payroll.csv', '--yes')]);
    // one sends, the other is refused while it does (exit 3, nothing sent) or finds every row paid
    const codes = [a.code, b.code].sort();
    expect(codes[0], a.stderr + b.stderr).toBe(0);
    expect([0, 3]).toContain(codes[1]);
    expect((await payoutCount(sb)) - before).toBe(6);
    // the ledger stopped the loser before the service: six initiates in all, not twelve
    expect(initiates(sb).length - sent).toBe(6);
    // no copy of the ledger (beneficiaries, accounts) on the host: the lines are read from the database
    expect(existsSync(join(shared, '.home-alice', 'state', 'team'))).toBe(false);
    expect(existsSync(join(shared, '.home-alice', 'state', 'ledgers'))).toBe(false);

    // the same rows in a re-saved copy on the other host: refused as paid, nothing sent
    await writeFile(join(shared, 'payroll-copy.csv'), (await readFile(join(shared, 'payroll.csv'), 'utf8')) + '\n');
    const copy = await (codes[1] === 3 ? bob : alice).inProcess('run', 'payroll-copy.csv', '--yes');
    expect(copy.code, copy.stderr).toBe(3);
    expect(copy.stderr).toMatch(/already (sent|paid)/);
    expect(initiates(sb).length - sent).toBe(6);
  });

  it("Bob's status and retry on the batch Alice ran, from his own host", async () => {
    const ledger = await testDatabase();
    const shared = await dirs.make();
    const file = await writeBatch(shared, 'payroll.csv', { rows: 3, currencies: ['EUR'], prefix: 'BOBALICE' });
    await writeFile(file, (await readFile(file, 'utf8')).replace(',EUR,EUR,', ',EURO,EUR,'));
    const alice = host(shared, 'alice', ledger, sb.url);
    const bob = host(shared, 'bob', ledger, sb.url);
    const sent = initiates(sb).length;
    const first = await alice.inProcess('run', file, '--yes', '--json');
    expect(first.code, first.stderr).toBe(1);
    expect(initiates(sb).length - sent).toBe(2);
    const batchId = (JSON.parse(first.stdout) as { batchId: string }).batchId;

    // by the batch's id: the results file Alice's journal names, found in the team's ledger
    const status = await bob('status', batchId.slice(0, 16), '--json');
    expect(status.stderr).not.toMatch(/no journal|not found/i);
    expect(JSON.parse(status.stdout)).toMatchObject({ rows: 3, asked: 2 });
    // and the report of that batch, named by its id (a report sends nothing: in process)
    const report = await runMain(['report', batchId.slice(0, 16)], { cwd: shared, env: bob.env });
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).toContain(`Report of the results written to ${join(shared, 'payroll.results.html')}`);

    const results = join(shared, 'payroll.results.csv');
    const table = await readResults(results);
    table.rows.find((r) => r.result.status === 'INVALID')!.cells.sourceCurrency = 'EUR';
    await writeResults(results, table);
    const retried = await bob('retry', 'payroll.results.csv', '--yes', '--json');
    expect(retried.code, retried.stderr).toBe(0);
    expect(JSON.parse(retried.stdout).summary.byStatus).toEqual({ PENDING: 3 });
    expect(initiates(sb).length - sent).toBe(3);
  });

  it("a batch id on another host: status, report, reconcile and retry work beside the caller, never in the run's folder (issue 43, item 1)", async () => {
    const ledger = await testDatabase();
    const [aliceDir, bobDir, carolDir] = [await dirs.make(), await dirs.make(), await dirs.make()];
    const file = await writeBatch(aliceDir, 'payroll.csv', { rows: 3, currencies: ['EUR'], prefix: 'HOSTID' });
    const alice = host(aliceDir, 'alice', ledger, sb.url);
    const bob = host(bobDir, 'bob', ledger, sb.url);
    const first = await alice.inProcess('run', file, '--yes', '--json');
    expect(first.code, first.stderr).toBe(0);
    const id = (JSON.parse(first.stdout) as { batchId: string }).batchId.slice(0, 16);
    const aliceFiles = async () =>
      Object.fromEntries(
        await Promise.all(
          (await readdir(aliceDir)).filter((f) => !f.startsWith('.')).map(async (f) => [f, await readFile(join(aliceDir, f), 'utf8')]),
        ),
      );
    const before = await aliceFiles();

    const copy = join(bobDir, `${id}.results.csv`);
    const status = await bob('status', id, '--json');
    // 5: payouts still in progress, as on Alice's host
    expect([0, 5], status.stderr).toContain(status.code);
    expect(status.stderr).toContain(`working on ${copy}, a copy of the run's results file`);
    expect(JSON.parse(status.stdout)).toMatchObject({ rows: 3 });
    const report = await runMain(['report', id], { cwd: bobDir, env: bob.env });
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).toContain(`written to ${join(bobDir, `${id}.results.html`)}`);
    // (reconcile and retry by main() in this process, as the report: status is the process)
    const reconcile = await bob.inProcess('reconcile', id, '--rate', '100');
    expect(reconcile.stderr).not.toMatch(/unexpected error|ENOENT/);
    const retry = await bob.inProcess('retry', id, '--yes');
    expect([0, 5], retry.stderr).toContain(retry.code);
    expect(await aliceFiles(), "nothing written into the run's folder").toEqual(before);
    expect(existsSync(copy)).toBe(true);

    // the run's folder is not on this host: the results are rebuilt from the team ledger's lines
    const carol = host(carolDir, 'carol', ledger, sb.url);
    await rm(join(aliceDir, 'payroll.results.csv'));
    const rebuilt = await carol('status', id, '--json');
    expect([0, 5], rebuilt.stderr).toContain(rebuilt.code);
    expect(rebuilt.stderr).toContain(`working on ${join(carolDir, `${id}.ledger.results.csv`)}, rebuilt from the ledger`);
    expect(JSON.parse(rebuilt.stdout)).toMatchObject({ rows: 3 });
    const rows = (await readResults(join(carolDir, `${id}.ledger.results.csv`))).rows;
    expect(rows.map((r) => [r.cells.reference, r.cells.sourceCurrency, r.result.payoutId !== undefined])).toEqual(
      ['HOSTID-0001', 'HOSTID-0002', 'HOSTID-0003'].map((ref) => [ref, 'EUR', true]),
    );
  });

  it('the database killed mid-run: no request left unrecorded, and the other host resumes to the end', async () => {
    const cluster = await startCluster();
    try {
      const ledger = await cluster.newDatabase();
      const shared = await dirs.make();
      await writeBatch(shared, 'payroll.csv', { rows: 30, currencies: ['GBP'], prefix: 'DBKILL' });
      const before = await payoutCount(sb);
      const sent = initiates(sb).length;
      // the spec's 5 a second, so that the run is still sending when the server goes
      const alice = host(shared, 'alice', ledger, sb.url, { PAYOUT_BATCH_RATE: '5' });
      const run = alice('run', 'payroll.csv', '--yes');
      await eventually(() => (initiates(sb).length - sent >= 3 ? true : undefined), 60_000);
      cluster.stop('immediate');
      const stopped = await run;
      expect(stopped.code, stopped.stderr).toBe(4);
      expect(stopped.stderr + stopped.stdout).not.toContain(cluster.password);
      cluster.start();
      // every initiate the service received had its line in the database before it left
      const db = new pg.Client({ connectionString: ledger });
      await db.connect();
      const recorded = await db.query('SELECT count(*)::int AS n FROM payout_batch.journal_lines WHERE line LIKE \'{"t":"initiating"%\'');
      await db.end();
      const received = initiates(sb).length - sent;
      expect(received).toBeGreaterThan(0);
      expect(received).toBeLessThanOrEqual(recorded.rows[0].n);
      expect(received).toBeLessThan(30);

      const resumed = await host(shared, 'bob', ledger, sb.url).inProcess('run', 'payroll.csv', '--yes');
      expect(resumed.code, resumed.stderr).toBe(0);
      expect((await payoutCount(sb)) - before).toBe(30);
    } finally {
      cluster.destroy();
    }
  });
});

// The team ledger as users meet it, with real processes: `ledger init`, `import` and `status`; a
// ledger that cannot be reached or is not initialised stops a run before anything is sent; the
// connection string's password ($PAYOUT_BATCH_LEDGER_URL's: --ledger takes none) is never written
// anywhere, and PGPASSWORD and ~/.pgpass are used when the URL leaves it out.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { ledgerDirFor } from '../../src/ledger/file.ts';
import { accountOf } from '../../src/ledger/account-ledger.ts';
import { SCHEMA_VERSION } from '../../src/ledger/schema.ts';
import { journalLines } from '../../src/ledger/import.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { cleanEnv, filesUnder, initiates, ledgerJournals, runCli, runMain, tempDirs, writeBatch } from '../engine/helpers.ts';
import { startSb } from '../ops/helpers.ts';
import { testDatabase, withPostgres } from '../pg/database.ts';

const dirs = tempDirs('pb-ledger-');

async function closedPort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

async function linesIn(url: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<{ line: string }>('SELECT line FROM payout_batch.journal_lines ORDER BY id')).rows.map((r) => r.line);
  } finally {
    await c.end();
  }
}

describe.runIf(withPostgres)('payout-batch ledger', () => {
  let sb: LocalSandbox;
  let dir: string;
  /** The CLI in `dir`, its own state folder and HOME, the sandbox as its service. */
  const cli = (args: string[], env: Record<string, string> = {}) =>
    runCli([...args, '--base-url', sb.url], { cwd: dir, env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state'), HOME: dir, ...env }) });
  /** The same, in this process: a step that only sets the scene or reads (the batch file by its absolute path). */
  const inProcess = (args: string[], env: Record<string, string> = {}) =>
    runMain([...args, '--base-url', sb.url], {
      cwd: dir,
      env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state'), HOME: dir, ...env }),
    });
  /** The ledger at `url` as a command takes it with its password: in the environment, never on its command line. */
  const team = (url: string) => ({ PAYOUT_BATCH_LEDGER_URL: url });
  const sent = () => sb.requestLog().length;

  beforeAll(async () => {
    sb = await startSb({ monthlyQuota: null });
    dir = await dirs.make();
    await writeBatch(dir, 'payroll.csv', { rows: 2, prefix: 'LEDGER' });
  });
  afterAll(async () => {
    await sb?.close();
    await dirs.remove();
  });

  it('an unreachable or uninitialised ledger stops a run before anything is sent (4, 2), naming it without its password', async () => {
    const port = await closedPort();
    const down = await cli(['run', 'payroll.csv', '--yes'], team(`postgres://payout:Sekrit-pw@127.0.0.1:${port}/team`));
    expect(down.code, down.stderr).toBe(4);
    expect(down.stderr).toContain(`postgres://payout@127.0.0.1:${port}/team`);
    expect(down.stderr + down.stdout).not.toContain('Sekrit-pw');
    const blank = await testDatabase({ init: false });
    const bare = await cli(['run', 'payroll.csv', '--yes'], team(blank));
    expect(bare.code, bare.stderr).toBe(2);
    expect(bare.stderr).toMatch(/not initialised: run `payout-batch ledger init/);
    expect(sent()).toBe(0);
  });

  it('a ledger lost before the first request stops the run with 4 (run it again), not as unusable input; the next run sends it', async () => {
    const url = await testDatabase();
    await writeBatch(dir, 'cut.csv', { rows: 2, prefix: 'CUT' });
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    // the connection that reserves the batch is cut, as when the server restarts
    await c.query(`CREATE FUNCTION payout_batch.cut() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NEW; END $$`);
    await c.query('CREATE TRIGGER cut BEFORE INSERT ON payout_batch.batch_runs FOR EACH ROW EXECUTE FUNCTION payout_batch.cut()');
    const before = initiates(sb).length;
    const lost = await cli(['run', 'cut.csv', '--yes'], team(url));
    expect(lost.code, lost.stderr).toBe(4);
    expect(lost.stderr).toMatch(/was lost \(.*\): nothing more is sent; run the command again/);
    expect(lost.stderr).not.toMatch(/unexpected error/);
    expect(initiates(sb).length).toBe(before);
    await c.query('DROP TRIGGER cut ON payout_batch.batch_runs');
    await c.end();
    const again = await inProcess(['run', join(dir, 'cut.csv'), '--yes'], team(url));
    expect(again.code, again.stderr).toBe(0);
    expect(initiates(sb).length - before).toBe(2);
  });

  it('ledger init takes the password from PGPASSWORD, ~/.pgpass or $PAYOUT_BATCH_LEDGER_URL when --ledger has none, and is harmless twice', async () => {
    const whole = await testDatabase({ init: false });
    const url = new URL(whole);
    const password = decodeURIComponent(url.password);
    url.password = '';
    const bare = ['ledger', 'init', '--ledger', url.toString()];
    const none = await cli(bare);
    expect(none.code).toBe(4); // (so those below owe their success to PGPASSWORD, .pgpass and the variable)
    expect(none.stderr).toMatch(/cannot be reached: .*password/);
    const first = await cli(bare, { PGPASSWORD: password });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`schema version 0 -> ${SCHEMA_VERSION}\n`);
    const home = await dirs.make();
    writeFileSync(join(home, '.pgpass'), `127.0.0.1:${url.port}:*:${url.username}:${password}\n`);
    chmodSync(join(home, '.pgpass'), 0o600);
    const again = await cli(bare, { HOME: home });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toBe(''); // (no notice of node-postgres's that its ~/.pgpass support is deprecated: stderr holds the logs)
    expect(again.stdout).toContain(`schema version ${SCHEMA_VERSION} -> ${SCHEMA_VERSION} (already up to date)`);
    // the variable's URL of the ledger --ledger names (as a printed `retry --ledger` names it): its password
    expect((await cli(bare, team(whole))).stdout).toContain('(already up to date)');
  });

  it('ledger init on a ledger a newer payout-batch migrated says to upgrade (2), as every other command does, never "up to date"', async () => {
    const url = await testDatabase();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query("INSERT INTO payout_batch.schema_version (version, tool) VALUES ($1, 'payout-batch 9.9.9')", [SCHEMA_VERSION + 1]);
    await c.end();
    const newer = `is at schema version ${SCHEMA_VERSION + 1}, newer than this tool's ${SCHEMA_VERSION}: upgrade payout-batch`;
    const status = await inProcess(['ledger', 'status'], team(url));
    expect(status.code, status.stderr).toBe(2);
    expect(status.stderr).toContain(newer);
    const init = await inProcess(['ledger', 'init'], team(url));
    expect(init.code, init.stdout).toBe(2);
    expect(init.stderr).toContain(newer);
    expect(init.stdout).not.toContain('up to date');
  });

  it('ledger import copies a file ledger line for line and refuses a reference another batch sent; status counts the batches', async () => {
    const url = await testDatabase();
    const state = join(dir, 'state');
    const run = await inProcess(['run', join(dir, 'payroll.csv'), '--yes']); // (the file ledger: no --ledger)
    expect(run.code, run.stderr).toBe(0);
    const journal = ledgerJournals(state)[0]!;
    const lines = journalLines(readFileSync(journal, 'utf8'));
    const imported = await cli(['ledger', 'import', '--from-state-dir', 'state'], team(url));
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain(`Imported 1 batch (${lines.length} lines); 0 batches already there`);
    expect(await linesIn(url)).toEqual(lines);

    // another state folder whose batch sent one of those references
    const other = join(dir, 'other');
    const folder = ledgerDirFor(other, accountOf(sb.url));
    mkdirSync(folder, { recursive: true });
    const id = 'f'.repeat(64);
    const at = new Date().toISOString();
    const header = {
      t: 'batch',
      v: 1,
      batchId: id,
      batchIdSource: 'content',
      env: 'custom',
      file: '/elsewhere.csv',
      fileSha256: id,
      createdAt: at,
    };
    const init = { t: 'initiating', ref: 'LEDGER-0001', row: 1, attempt: 1, key: 'k', body: '{}', at };
    const damaged = join(folder, `${id.slice(0, 16)}.journal.jsonl`);
    writeFileSync(damaged, [JSON.stringify(header), '{"t":"creat', JSON.stringify(init), ''].join('\n'));
    const refused = await inProcess(['ledger', 'import', '--from-state-dir', 'other'], team(url));
    expect(refused.code, refused.stderr).toBe(3);
    const mine = (JSON.parse(lines[0]!) as { batchId: string }).batchId;
    expect(refused.stdout).toContain(`Imported 0 batches (0 lines); 0 batches already there\n1 conflict, whose batches were not imported:`);
    expect(refused.stdout).toContain(
      `reference LEDGER-0001 sent by batch ${id.slice(0, 16)} (/elsewhere.csv) and, in the ledger, by batch ${mine.slice(0, 16)}`,
    );
    expect(refused.stdout).toContain(`${damaged} line 2 is damaged: left out, as every command reads the journal`);
    expect(await linesIn(url)).toHaveLength(lines.length);
    // the same, as a script reads it
    const json = await inProcess(['ledger', 'import', '--from-state-dir', 'other', '--json'], team(url));
    expect(json.code, json.stderr).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({
      from: join(dir, 'other'),
      imported: [],
      alreadyThere: [],
      differing: [],
      conflicts: [{ ref: 'LEDGER-0001', batch: { batchId: id.slice(0, 16) }, other: { batchId: mine.slice(0, 16), phase: 'created' } }],
      damaged: [{ path: damaged, line: 2 }],
    });
    // a folder whose journals name no account this command can place: refused, naming it
    const stray = join(dir, 'stray', 'ledgers', 'f00d');
    mkdirSync(stray, { recursive: true });
    writeFileSync(join(stray, `${id.slice(0, 16)}.journal.jsonl`), [JSON.stringify(header), JSON.stringify(init), ''].join('\n'));
    const unknown = await inProcess(['ledger', 'import', '--from-state-dir', 'stray'], team(url));
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      `the account of ${stray} is not known (their journals do not name it): name its service with --base-url URL`,
    );
    expect(await linesIn(url)).toHaveLength(lines.length);

    const status = await inProcess(['ledger', 'status', '--json'], team(url));
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ version: SCHEMA_VERSION, accounts: [{ account: accountOf(sb.url), batches: 1 }] });
  });
  it('ledger import refuses a state folder another user could write (3), as every command does: nothing is imported', async () => {
    const url = await testDatabase();
    const shared = join(dir, 'shared');
    const folder = ledgerDirFor(shared, accountOf(sb.url));
    mkdirSync(folder, { recursive: true });
    const id = 'e'.repeat(64);
    const header = {
      t: 'batch',
      v: 1,
      batchId: id,
      batchIdSource: 'content',
      env: 'custom',
      file: '/x.csv',
      fileSha256: id,
      createdAt: 'now',
    };
    const init = { t: 'initiating', ref: 'PLANTED-1', row: 1, attempt: 1, key: 'k', body: '{}', at: 'now' };
    const damaged = join(folder, `${id.slice(0, 16)}.journal.jsonl`);
    writeFileSync(damaged, [JSON.stringify(header), '{"t":"creat', JSON.stringify(init), ''].join('\n'));
    chmodSync(shared, 0o777);
    const r = await inProcess(['ledger', 'import', '--from-state-dir', 'shared'], team(url));
    expect(r.code, r.stdout + r.stderr).toBe(3);
    expect(r.stderr).toMatch(/shared is writable by its group .*Nothing was imported/);
    expect(await linesIn(url)).toEqual([]);
  });

  it('ledger import refuses a ledger folder it cannot list (3), naming it: nothing is imported', async () => {
    const url = await testDatabase();
    const state = join(dir, 'unlistable');
    const folder = ledgerDirFor(state, accountOf(sb.url));
    mkdirSync(join(state, 'ledgers'), { recursive: true, mode: 0o700 });
    chmodSync(state, 0o700);
    writeFileSync(folder, ''); // (a file where the account's folder should be: ENOTDIR, as EACCES or EIO would be)
    const r = await inProcess(['ledger', 'import', '--from-state-dir', 'unlistable'], team(url));
    expect(r.code, r.stdout + r.stderr).toBe(3);
    expect(r.stderr).toContain(`refused: cannot list ${folder} (ENOTDIR)`);
    expect(r.stderr).not.toMatch(/unexpected/);
    expect(await linesIn(url)).toEqual([]);
  });

  it('a run on a ledger given with a password writes it nowhere: output, logs, results, state folder, journal', async () => {
    const url = await testDatabase();
    const password = decodeURIComponent(new URL(url).password);
    await writeBatch(dir, 'team.csv', { rows: 2, prefix: 'TEAM' });
    const before = sent();
    const run = await cli(['run', 'team.csv', '--yes', '--log-level', 'debug'], {
      ...team(url),
      PAYOUT_BATCH_STATE_DIR: join(dir, 'team-state'),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(sent()).toBeGreaterThan(before);
    expect(run.stdout + run.stderr).not.toContain(password);
    for (const f of await filesUnder(dir)) expect(readFileSync(f, 'latin1').includes(password), f).toBe(false);
    for (const line of await linesIn(url)) expect(line).not.toContain(password);
  });
});

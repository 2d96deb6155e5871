// Never pay twice outside one folder, one label and one process (issue 15): the CLI spawned as a
// user runs it (the steps around a case's own, and the journal's refusal of a retry, by main() in
// this process), against the sandbox over HTTP, concurrent cases with real concurrent processes.
// What counts is at the sandbox: exactly one payout per reference (each generated row has its own
// amount, so a reference's payouts are those of its amount).
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readResults } from '../../src/results/read.ts';
import { writeResults } from '../../src/results/write.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { allPayouts, cleanEnv, initiates, ledgerJournals, runCli, runMain, tempDirs, writeBatch, type CliRun } from './helpers.ts';
import { until } from '../ops/helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-twice-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

const ROWS = 8;
/** generateCsv's own amounts, one changed: an edited copy. */
const amount = (i: number) => `${10 + i}.${String(i % 100).padStart(2, '0')}`;
const edited = (i: number) => (i === 3 ? '77.77' : amount(i));

const setup = async () => {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
  const dir = await dirs.make();
  const env = cleanEnv(); // one state folder per test: every process of the test shares its ledger
  const run = (cwd: string, ...args: string[]) => runCli([...args, '--base-url', sb!.url, '--rate', '100'], { cwd, env });
  /** The same by main() in this process: a step after the one under test. */
  const inProcess = (cwd: string, ...args: string[]) => runMain([...args, '--base-url', sb!.url, '--rate', '100'], { cwd, env });
  /** A case's first run, which only sets the scene, in this process (the bin's main()): `run FILE --yes`. */
  const firstRun = (cwd: string, file: string) =>
    runMain(['run', join(cwd, file), '--yes', '--base-url', sb!.url, '--rate', '100'], { cwd, env });
  return { dir, env, run, firstRun, inProcess };
};

/** One payout per reference at the sandbox: as many as rows, no amount twice. */
const onePerReference = async (rows = ROWS) => {
  const payouts = await allPayouts(sb!);
  const amounts = payouts.map((p) => String(p.sourceAmount));
  expect(new Set(amounts).size, `amounts paid: ${amounts.join(', ')}`).toBe(payouts.length);
  expect(payouts).toHaveLength(rows);
};

const noConflict = (...runs: CliRun[]) => {
  for (const r of runs) expect(r.stdout + r.stderr).not.toMatch(/CONFLICT/);
};

describe('two edited copies, another folder, another label: the second batch is refused', () => {
  it('two edited copies run at the same time in one folder: one pays, the other exits 3 naming it', async () => {
    const { dir, run } = await setup();
    await writeBatch(dir, 'a.csv', { rows: ROWS, prefix: 'TWO', amount });
    await writeBatch(dir, 'b.csv', { rows: ROWS, prefix: 'TWO', amount: edited });
    sb!.setFaults({ latencyMs: [20, 60] }); // the two overlap
    const [a, b] = await Promise.all([run(dir, 'run', 'a.csv', '--yes'), run(dir, 'run', 'b.csv', '--yes')]);
    expect([a.code, b.code].sort(), a.stderr + b.stderr).toEqual([0, 3]);
    const [won, lost] = a.code === 0 ? ['a.csv', b] : ['b.csv', a];
    // named: the first batch's file and id
    expect(lost.stderr).toContain(join(dir, won));
    expect(lost.stderr).toMatch(/batch [0-9a-f]{16}/);
    expect(lost.stderr).toMatch(/Nothing was sent/);
    sb!.setFaults({});
    await onePerReference();
  });

  it('an edited copy in another folder is refused (exit 3, naming the first file): nothing sent', async () => {
    const { dir, run, firstRun } = await setup();
    const k1 = join(dir, 'k1');
    const k2 = join(dir, 'k2');
    await mkdir(k1);
    await mkdir(k2);
    await writeBatch(k1, 'payroll.csv', { rows: ROWS, prefix: 'FLD', amount });
    const first = await firstRun(k1, 'payroll.csv');
    expect(first.code, first.stderr).toBe(0);
    await writeBatch(k2, 'payroll.csv', { rows: ROWS, prefix: 'FLD', amount: edited });
    const sent = initiates(sb!).length;
    const copy = await run(k2, 'run', 'payroll.csv', '--yes');
    expect(copy.code, copy.stdout + copy.stderr).toBe(3);
    expect(copy.stderr).toContain(join(k1, 'payroll.csv'));
    expect(copy.stderr).toMatch(/already sent by another batch/);
    expect(initiates(sb!).length).toBe(sent);
    await onePerReference();
  });

  it('the same file under two environment labels is one batch: the second resumes, sends nothing', async () => {
    const { dir, env, firstRun } = await setup();
    await writeBatch(dir, 'payroll.csv', { rows: ROWS, prefix: 'LBL', amount });
    const custom = await firstRun(dir, 'payroll.csv'); // --base-url alone: label "custom"
    expect(custom.code, custom.stderr).toBe(0);
    const sent = initiates(sb!).length;
    const sandbox = await runCli(['run', 'payroll.csv', '--yes', '--base-url', sb!.url, '--rate', '100'], {
      cwd: dir,
      env: { ...env, PAYOUT_ENV: 'sandbox' },
    });
    expect(sandbox.code, sandbox.stderr).toBe(0);
    expect(sandbox.stdout).toMatch(/Resuming this batch.*8 rows already created/);
    expect(initiates(sb!).length).toBe(sent);

    // A watch configured with the other label and the same state folder (a watch keeps its own
    // ledger in DIR/.state unless told), the same file dropped in its inbox: already processed.
    const w = join(dir, 'watch');
    await mkdir(join(w, 'inbox'), { recursive: true });
    const config = { environment: 'sandbox', baseUrl: sb!.url, settleSeconds: 0, stateDir: env.PAYOUT_BATCH_STATE_DIR };
    await writeFile(join(w, 'payout-batch.json'), JSON.stringify(config));
    await copyFile(join(dir, 'payroll.csv'), join(w, 'inbox', 'payroll.csv'));
    // (by main() in this process: the run under the other label above is the process)
    const watched = await runMain(['watch', w, '--once'], { cwd: dir, env });
    expect(watched.code, watched.stdout + watched.stderr).toBe(3);
    expect(watched.stdout).toMatch(/payroll\.csv: failed: already processed/);
    expect(initiates(sb!).length).toBe(sent);
    await onePerReference();
  });
});

describe('two processes on one batch', () => {
  it('the same file twice at once: one pays, the other is refused or finds it done; nothing reported CONFLICT', async () => {
    const { dir, run } = await setup();
    // Documents: each process would upload its own copy, so the same key would carry another body.
    await writeBatch(dir, 'payroll.csv', { rows: ROWS, prefix: 'SAME', amount, documentsEvery: 1 });
    sb!.setFaults({ latencyMs: [20, 60] });
    const [a, b] = await Promise.all([run(dir, 'run', 'payroll.csv', '--yes'), run(dir, 'run', 'payroll.csv', '--yes')]);
    sb!.setFaults({});
    expect([a.code, b.code]).toContain(0);
    for (const r of [a, b]) expect([0, 3], r.stderr).toContain(r.code);
    const refused = [a, b].find((r) => r.code === 3);
    if (refused) expect(refused.stderr).toMatch(/being sent right now by another process/);
    noConflict(a, b);
    const statuses = (await readResults(join(dir, 'payroll.results.csv'))).rows.map((r) => r.result.status);
    expect(statuses).toEqual(Array(ROWS).fill('PENDING'));
    await onePerReference();
  });
});

describe('two files paying the same payees under other references', () => {
  it('at once: the second is refused while the first pays them, then finds them probable duplicates; each paid once', async () => {
    const { dir, run, inProcess } = await setup();
    const a = await writeBatch(dir, 'a.csv', { rows: 3, prefix: 'DUPA', amount });
    await writeFile(join(dir, 'b.csv'), (await readFile(a, 'utf8')).replaceAll('DUPA-', 'DUPB-'));
    // The first run stopped (SIGSTOP) while its first initiate is answered: its payees are being
    // paid, and its journal holds no payout yet for a check of recent payouts to find.
    sb!.setFaults({ latencyMs: [1500, 1500], routes: ['initiate'] });
    let child: ChildProcess | undefined;
    const first = runCli(['run', 'a.csv', '--yes', '--concurrency', '1', '--base-url', sb!.url, '--rate', '100'], {
      cwd: dir,
      env: cleanEnv(),
      onSpawn: (c) => (child = c),
    });
    const journal = () => ledgerJournals().find((j) => readFileSync(j, 'utf8').includes('"t":"initiating"'));
    await until(() => !!journal() && !existsSync(join(dirname(journal()!), 'ledger.lock')), 30_000, "the first run's first initiate");
    child!.kill('SIGSTOP');
    sb!.setFaults({});
    const second = await run(dir, 'run', 'b.csv', '--yes');
    child!.kill('SIGCONT');
    expect(second.code, second.stdout + second.stderr).toBe(3);
    expect(second.stderr).toMatch(/3 payees of this file .* are being paid right now by another batch/);
    expect((await first).code).toBe(0);
    // run again once the first ended (by main() in this process): the same payees and amounts are probable duplicates
    const again = await inProcess(dir, 'run', 'b.csv', '--yes');
    expect(again.stdout.match(/a probable duplicate, not sent/g)).toHaveLength(3);
    expect(initiates(sb!).length).toBe(3);
    await onePerReference(3);
  });
});

describe('the journal decides, not the results file', () => {
  it('retry of an UNKNOWN_OUTCOME row whose key cell was cleared and reference edited is refused; put back, it resends the journalled key: one payout', async () => {
    const { dir, firstRun, inProcess } = await setup();
    await writeBatch(dir, 'payroll.csv', { rows: 3, prefix: 'UNK', amount });
    // The service creates each payout and a gateway answers 408 instead, every time: unknown outcomes.
    sb!.setFaults({ gatewayAfterCreate: { probability: 1, status: 408, body: 'html' }, routes: ['initiate'] });
    const first = await firstRun(dir, 'payroll.csv');
    expect([1, 4], first.stderr).toContain(first.code);
    sb!.setFaults({});
    const results = join(dir, 'payroll.results.csv');
    const table = await readResults(results);
    const unknown = table.rows.find((r) => r.result.status === 'UNKNOWN_OUTCOME');
    expect(unknown, JSON.stringify(table.rows.map((r) => r.result.status))).toBeDefined();
    const created = (await allPayouts(sb!)).length;
    expect(created).toBeGreaterThanOrEqual(1);
    // A person clears the key and edits the reference of the unknown row.
    unknown!.result.idempotencyKey = '';
    unknown!.cells.reference = 'UNK-EDITED';
    await writeResults(results, { ...table, rows: table.rows });

    // Neither its key nor its reference names the row now (a row is never found by its line
    // number, issue 26): refused, nothing sent, naming the journalled reference.
    const before = initiates(sb!).length;
    const refused = await inProcess(dir, 'retry', 'payroll.results.csv', '--yes');
    expect(refused.code, refused.stdout + refused.stderr).toBe(3);
    expect(refused.stderr).toMatch(/no row names UNK-\d{4} \(key pb3-/);
    expect(initiates(sb!).length).toBe(before);
    // The reference put back: settled with its journalled key.
    unknown!.cells.reference = /no row names (UNK-\d{4})/.exec(refused.stderr)![1]!;
    await writeResults(results, { ...table, rows: table.rows });

    const again = await inProcess(dir, 'retry', 'payroll.results.csv', '--yes');
    expect(again.code, again.stdout + again.stderr).toBe(0);
    await onePerReference(3);
    // The journalled key went again, and no attempt 2 was made for that row.
    const lines = (await readFile(ledgerJournals()[0]!, 'utf8')).split('\n').filter(Boolean);
    const initiating = lines.map((l) => JSON.parse(l)).filter((e) => e.t === 'initiating');
    expect(initiating.every((e) => e.attempt === 1)).toBe(true);
  });
});

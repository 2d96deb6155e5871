// The run, plan and retry commands as a user runs them: the CLI spawned against the sandbox over
// real HTTP, PAYOUT_API_KEY in its environment. The same file dropped twice is about what the
// ledger and the service answer, not about a process: its runs are main() in this process.
import { copyFile, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { KEY, allPayouts, cleanEnv, filesUnder, initiates, runCli, runMain, workDir, writeBatch, type CliRun } from './helpers.ts';

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const setup = async (rows: number, o: Parameters<typeof writeBatch>[2] extends infer T ? Partial<T> : never = {}) => {
  const sandbox = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
  sb = sandbox;
  const dir = await workDir('pb-cli-');
  const file = await writeBatch(dir, 'payroll.csv', { rows, ...o });
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const service = ['--base-url', sandbox.url, '--rate', '100'];
  const run = (...args: string[]) => runCli([...args, ...service], { cwd: dir, env });
  /** The same by the bin's main() in this process. */
  const inProcess = (...args: string[]) => runMain([...args, ...service], { cwd: dir, env });
  return { dir, file, env, run, inProcess };
};

describe('I1/I4: the same file dropped twice under two names pays once', () => {
  /**
   * One first run of a 6-row payroll.csv, every row created, with JSON log lines: the state every
   * case starts from. Each case leaves it as it found it (refused or resumed runs write nothing
   * new), but the last, which loses the journal.
   */
  let first: { dir: string; run: (...args: string[]) => Promise<CliRun>; run1: CliRun; sent: number; sb: LocalSandbox };
  beforeAll(async () => {
    const ctx = await setup(6);
    const run1 = await ctx.inProcess('run', 'payroll.csv', '--yes', '--log-level', 'debug');
    expect(run1.code, run1.stderr).toBe(0);
    expect(await allPayouts(sb!)).toHaveLength(6);
    first = { dir: ctx.dir, run: ctx.inProcess, run1, sent: initiates(sb!).length, sb: sb! };
    sb = undefined; // kept for the whole describe (afterEach closes only a case's own)
  });
  afterAll(() => first?.sb.close());
  /** Secrets: the key is in no output, results or journal. */
  const keyNowhere = async (dir: string, runs: CliRun[]) => {
    for (const r of runs) expect(r.stdout + r.stderr).not.toContain(KEY);
    for (const f of await filesUnder(dir)) expect(await readFile(f, 'utf8'), f).not.toContain(KEY);
  };

  it('a first run logs each row as a JSON line with its key and request id, and the API key nowhere', async () => {
    const { dir, run1 } = first;
    expect(run1.stderr).toMatch(/"idempotencyKey":"pb3-/); // the JSON lines were there to search
    expect(run1.stderr).toMatch(/"batchId":"[0-9a-f]{16}","row":\d+,"reference":"GEN-\d+","status":"PENDING","requestId":"[0-9a-f-]{36}"/);
    await keyNowhere(dir, [run1]);
  });

  it('a second name is refused (exit 3, naming the first file and its results, saying a reference is paid once)', async () => {
    const { dir, run, sent } = first;
    await copyFile(join(dir, 'payroll.csv'), join(dir, 'payroll (1).csv'));
    const dropped = await run('run', 'payroll (1).csv', '--yes');
    expect(dropped.code).toBe(3);
    expect(dropped.stderr).toMatch(/same content as .*payroll\.csv/);
    expect(dropped.stderr).toMatch(/payroll\.results\.csv/);
    expect(dropped.stderr).toMatch(/a reference is paid once per account/);
    expect(initiates(first.sb).length).toBe(sent);
    await keyNowhere(dir, [dropped]);
  });

  it('the same name resumes: every row already created, nothing sent again', async () => {
    const { dir, run, sent } = first;
    const again = await run('run', 'payroll.csv', '--yes');
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/Resuming this batch.*6 rows already created/);
    expect(initiates(first.sb).length).toBe(sent);
    await keyNowhere(dir, [again]);
  });

  it('a new --batch-id only labels a batch: the references already paid are refused, nothing sent', async () => {
    const { dir, run, sent } = first;
    const again = await run('run', 'payroll.csv', '--yes', '--batch-id', 'payroll-2025-01-second-payment');
    expect(again.code, again.stdout + again.stderr).toBe(3);
    expect(again.stderr).toMatch(/already paid at this account/);
    expect(initiates(first.sb).length).toBe(sent);
    expect(await allPayouts(first.sb)).toHaveLength(6);
    await keyNowhere(dir, [again]);
  });

  it('an edited copy of a batch (other content, same references already sent) is refused', async () => {
    const { dir, run, sent } = first;
    await writeFile(join(dir, 'payroll-fixed.csv'), (await readFile(join(dir, 'payroll.csv'), 'utf8')) + '\n');
    const r = await run('run', 'payroll-fixed.csv', '--yes');
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/already sent by another batch/);
    expect(initiates(first.sb).length).toBe(sent);
    expect(await allPayouts(first.sb)).toHaveLength(6);
  });

  it('without the journal, under a second name, the keys find the originals: reported already paid, not created', async () => {
    const { dir, run, sent } = first;
    await copyFile(join(dir, 'payroll.csv'), join(dir, 'payroll (1).csv'));
    // The journal lost: the deterministic keys make the service answer with the original payouts,
    // which this ledger no longer knows it created (issue 26: never reported as created by this run).
    await rm(join(dir, 'state', 'ledgers'), { recursive: true });
    const lost = await run('run', 'payroll (1).csv', '--yes');
    expect(lost.code, lost.stderr).toBe(1);
    expect(lost.stdout).toMatch(/ALREADY_PAID +6 /);
    expect(initiates(first.sb).length).toBe(sent + 6);
    expect(await allPayouts(first.sb)).toHaveLength(6);
    await keyNowhere(dir, [lost]);
  });
});

// The mismatched control totals (--expect-rows, --expect-total, --max-total: exit 3, each named,
// not one initiate, no results file): test/cli/dry-run-totals.e2e.test.ts; `run` off a terminal
// without --yes: test/cli/conventions.e2e.test.ts.
describe('approval guards and control totals', () => {
  it('matching control totals, under --max-total: sent', async () => {
    const { run } = await setup(2, { currencies: ['GBP'], amount: (i) => ['100.00', '250.50'][i]! });
    const good = await run('run', 'payroll.csv', '--yes', '--expect-rows', '2', '--expect-total', 'GBP:350.50', '--max-total', 'GBP:400');
    expect(good.code, good.stderr).toBe(0);
    expect(initiates(sb!)).toHaveLength(2);
  });

  // GBP wallet 400,000.00: three rows of 150,000 (+ fees) do not fit, two do.
  it('a wallet shortfall stops the batch before the first payout; with --allow-partial the rows that fit are sent', async () => {
    const { run } = await setup(3, { currencies: ['GBP'], amount: (i) => `15000${i}.00` });
    const refused = await run('run', 'payroll.csv', '--yes');
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/insufficient funds: GBP short by/);
    expect(initiates(sb!)).toHaveLength(0);

    const partial = await run('run', 'payroll.csv', '--yes', '--allow-partial', '--json');
    expect(partial.code).toBe(1);
    const summary = JSON.parse(partial.stdout);
    expect(summary.summary.byStatus).toEqual({ PENDING: 2, NOT_SENT: 1 });
    expect(initiates(sb!)).toHaveLength(2);
  });
});

describe('plan --out, then run --plan', () => {
  it("runs exactly the plan, with the plan's quotes", async () => {
    const { dir, file, run, inProcess } = await setup(3, { documentsEvery: 2 });
    const planned = await inProcess('plan', file, '--out', join(dir, 'payroll.plan.json'));
    expect(planned.code, planned.stderr).toBe(0);
    expect(initiates(sb!)).toHaveLength(0);
    const plan = JSON.parse(await readFile(join(dir, 'payroll.plan.json'), 'utf8'));
    expect(plan.rows).toHaveLength(3);
    expect(plan.rows[0].fee).toMatch(/^\d+\.\d\d$/);
    const quotes = sb!.requestLog().filter((r) => r.route === 'quote').length;
    expect(quotes).toBe(plan.requests.quotes);

    const ok = await run('run', '--plan', 'payroll.plan.json', '--yes', '--json');
    expect(ok.code, ok.stderr).toBe(0);
    expect(initiates(sb!)).toHaveLength(3);
    expect(sb!.requestLog().filter((r) => r.route === 'quote')).toHaveLength(quotes); // the plan's, not again
  });

  it('refuses a plan run at another service account, or whose batch file changed since: exit 3, nothing sent', async () => {
    const { dir, env, run, inProcess } = await setup(1);
    const file2 = await writeBatch(dir, 'second.csv', { rows: 2, prefix: 'SECOND' });
    expect((await inProcess('plan', file2, '--out', join(dir, 'second.plan.json'), '--no-quote')).code).toBe(0);
    // the same environment label (custom), another base URL: another account than the one planned
    // (another port: localhost would be the same account, every loopback name is one)
    const elsewhere = sb!.url.replace(/:(\d+)$/, (_, port: string) => `:${Number(port) + 1}`);
    const other = await runCli(['run', '--plan', 'second.plan.json', '--yes', '--base-url', elsewhere], { cwd: dir, env });
    expect(other.code).toBe(3);
    expect(other.stderr).toMatch(new RegExp(`--base-url ${elsewhere}, but the plan was made for custom .*${sb!.url}`));
    await writeFile(file2, (await readFile(file2, 'utf8')).replace('SECOND-0002', 'SECOND-0099'));
    const changed = await run('run', '--plan', 'second.plan.json', '--yes');
    expect(changed.code).toBe(3);
    expect(changed.stderr).toMatch(/changed since the plan/);
    expect(initiates(sb!)).toHaveLength(0);
  });
});

describe('retry RESULTS from the command line', () => {
  it('an invalid row fixed in the results file is sent by retry into a new results file; created rows are not sent again', async () => {
    const { dir, file, run, inProcess } = await setup(3, { currencies: ['EUR'] });
    await writeFile(file, (await readFile(file, 'utf8')).replace(',EUR,EUR,', ',EURO,EUR,'));
    const first = await inProcess('run', file, '--yes');
    expect(first.code).toBe(1);
    expect(initiates(sb!)).toHaveLength(2);
    const { readResults } = await import('../../src/results/read.ts');
    const { writeResults } = await import('../../src/results/write.ts');
    const results = join(dir, 'payroll.results.csv');
    const table = await readResults(results);
    const bad = table.rows.find((r) => r.result.status === 'INVALID')!;
    expect(bad.result.errorCode).toBe('INVALID_CURRENCY');
    bad.cells.sourceCurrency = 'EUR';
    await writeResults(results, table);
    const retried = await run('retry', 'payroll.results.csv', '--yes', '--json');
    expect(retried.code, retried.stderr).toBe(0);
    expect(JSON.parse(retried.stdout).summary.byStatus).toEqual({ PENDING: 3 });
    expect(initiates(sb!)).toHaveLength(3);
    const after = await readResults(join(dir, 'payroll.results.retry-1.csv'));
    expect(after.rows.map((r) => r.result.status)).toEqual(['PENDING', 'PENDING', 'PENDING']);
    expect(retried.stdout + retried.stderr).not.toContain(KEY);
  });
});

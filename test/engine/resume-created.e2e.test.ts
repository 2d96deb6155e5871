// A resumed run validates every row again, but a row its journal shows created (loadBatch's
// journal lookup) is never sent again and never reported invalid, whatever the file says of it
// now. The probable-duplicate rule still sees it. The CLI against the sandbox over real HTTP, as a
// user runs it.
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { ROOT, allPayouts, cleanEnv, ledgerJournals, generateCsv, initiates, runCli, runMain, tempDirs } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-resume-created-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

const setup = async () => {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
  const dir = await dirs.make();
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const run = (...args: string[]) => runCli([...args, '--base-url', sb!.url, '--rate', '100'], { cwd: dir, env });
  /** A case's first run, which only sets the scene, in this process (the bin's main()). */
  const firstRun = (...flags: string[]) =>
    runMain(['run', join(dir, 'payroll.csv'), '--yes', ...flags, '--base-url', sb!.url, '--rate', '100'], { cwd: dir, env });
  /** validate, and a plan, by main() in this process: what they say is not about a process. */
  const offline = (...args: string[]) => runMain(args, { cwd: dir, env });
  const inProcess = (...args: string[]) => runMain([...args, '--base-url', sb!.url, '--rate', '100'], { cwd: dir, env });
  // run keeps the journal in the account's ledger of the state folder (PAYOUT_BATCH_STATE_DIR)
  const journalFile = async () => ledgerJournals(join(dir, 'state'))[0]!;
  const journalLines = async () =>
    (await readFile(await journalFile(), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const results = async (name = 'payroll.results.csv') =>
    parse<Record<string, string>>(await readFile(join(dir, name), 'utf8'), { columns: true, bom: true });
  return { dir, run, firstRun, offline, inProcess, journalLines, journalFile, results };
};

describe('a resumed run and the rows created before', () => {
  /**
   * GBP rows of the sample, the first with a supporting document copied beside the batch; a first
   * run creates all three, then the document is moved away: validated again, that row would now
   * be invalid.
   */
  const createdThenDocumentGone = async () => {
    const ctx = await setup();
    const { dir, firstRun, journalLines } = ctx;
    await cp(join(ROOT, 'samples', 'documents'), join(dir, 'documents'), { recursive: true });
    const csv = generateCsv({ rows: 3, currencies: ['GBP'], documentsEvery: 3 }).replaceAll(join(ROOT, 'samples'), dir);
    expect(csv).toContain(join(dir, 'documents'));
    await writeFile(join(dir, 'payroll.csv'), csv);

    const first = await firstRun();
    expect(first.code, first.stderr).toBe(0);
    const sent = initiates(sb!).length;
    expect(sent).toBe(3);
    const initiating = (await journalLines()).filter((l) => l.t === 'initiating');
    expect(initiating).toHaveLength(3);

    await rm(join(dir, 'documents'), { recursive: true });
    return { ...ctx, sent };
  };

  it('a created row whose document was moved away since: invalid to validate, created to plan (which reads the journal), and on a resume stays created (not INVALID), nothing sent', async () => {
    const { run, offline, inProcess, results, sent } = await createdThenDocumentGone();
    const check = await offline('validate', 'payroll.csv');
    expect(check.code, check.stdout + check.stderr).toBe(1);
    expect(check.stdout).toMatch(/row 2\b.*documents/i);

    const plan = await inProcess('plan', 'payroll.csv', '--no-quote');
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/to send now\s+0; 3 already created/);
    expect(plan.stdout).toMatch(/3 valid, 0 invalid/);

    const again = await run('run', 'payroll.csv', '--yes');
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toMatch(/3 rows already created/);
    expect(initiates(sb!).length).toBe(sent);
    const rows = await results();
    expect(rows.map((r) => r.status)).toEqual(['PENDING', 'PENDING', 'PENDING']);
    expect(rows[0]!.errorCode).toBe('');
    expect(rows[0]!.payoutId).toMatch(/^[0-9a-f-]{36}$/);
  });

  {
    it('--batch-id: a row added later that repeats a created one is a probable duplicate and not sent', async () => {
      const { dir, run, firstRun, results } = await setup();
      const csv = generateCsv({ rows: 3 });
      await writeFile(join(dir, 'payroll.csv'), csv);
      const first = await firstRun('--batch-id', 'payroll-2025-01');
      expect(first.code, first.stderr).toBe(0);
      expect(await allPayouts(sb!)).toHaveLength(3);

      // the same rows, and a fourth that repeats the first under a new reference
      const lines = csv.trim().split('\n');
      const copy = lines[1]!.replace('GEN-0001', 'GEN-0004');
      await writeFile(join(dir, 'payroll.csv'), [...lines, copy].join('\n') + '\n');
      const again = await run('run', 'payroll.csv', '--yes', '--batch-id', 'payroll-2025-01');
      expect(again.code, again.stdout + again.stderr).toBe(1);
      expect(await allPayouts(sb!)).toHaveLength(3);
      const rows = await results();
      expect(rows.map((r) => r.status)).toEqual(['PENDING', 'PENDING', 'PENDING', 'INVALID']);
      expect(rows[3]!.errorCode).toBe('PROBABLE_DUPLICATE');
      expect(rows[3]!.errorMessage).toMatch(/as row 2\b/);
    });
  }
});

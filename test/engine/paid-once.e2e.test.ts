// A payment's identity is the payment (issue 26): the key is the reference's and the attempt's, so
// the same reference at the same account carries the same key whatever file, folder, state folder
// or --batch-id it comes with, and a reference is paid once per account. Against the sandbox over
// HTTP, the CLI spawned as users run it in the first case; the others, about what the ledger and the
// keys make of a payment, not about a process, run the bin's main() in this process. What counts is
// at the sandbox: one payout per reference (each generated row has its own amount).
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as XLSX from 'xlsx';
import { readResults } from '../../src/results/read.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { allPayouts, cleanEnv, generateCsv, initiates, runCli, runMain, tempDirs } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-paid-once-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

const ROWS = 6;

const setup = async () => {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
  const dir = await dirs.make();
  const env = cleanEnv();
  /** The CLI in `cwd`, with the state folder `state` when one is given (else the test's own). */
  const flags = (state: string | undefined) => ['--base-url', sb!.url, '--rate', '100', ...(state ? ['--state-dir', state] : [])];
  const run = (cwd: string, state: string | undefined, ...args: string[]) => runCli([...args, ...flags(state)], { cwd, env });
  /** A case's first run, which only sets the scene, in this process (the bin's main()): `run FILE --yes`. */
  const firstRun = (cwd: string, state: string | undefined, file: string) =>
    runMain(['run', join(cwd, file), '--yes', ...flags(state)], { cwd, env });
  /** The same by main() in this process. */
  const inProcess = (cwd: string, state: string | undefined, ...args: string[]) => runMain([...args, ...flags(state)], { cwd, env });
  return { dir, run, firstRun, inProcess };
};

/** One payout per reference at the sandbox: as many as rows, no amount twice. */
const onePerReference = async (rows = ROWS) => {
  const payouts = await allPayouts(sb!);
  const amounts = payouts.map((p) => String(p.sourceAmount));
  expect(new Set(amounts).size, `amounts paid: ${amounts.join(', ')}`).toBe(payouts.length);
  expect(payouts).toHaveLength(rows);
};

/** reference → payoutId of a results file. */
const payoutIds = async (path: string) => new Map((await readResults(path)).rows.map((r) => [r.cells.reference!, r.result.payoutId]));

/** Every row of a results file says already paid, with the payout the first run created. */
const alreadyPaid = async (path: string, first: Map<string, string | undefined>) => {
  const rows = (await readResults(path)).rows;
  expect(rows).toHaveLength(first.size);
  for (const r of rows) {
    expect(r.result.status, JSON.stringify(r.result)).toBe('ALREADY_PAID');
    expect(r.result.payoutId).toBe(first.get(r.cells.reference!));
    expect(r.result.errorMessage).toMatch(/already paid at this account: payout .* was created 20\d\d-/);
  }
};

/** The CSV as a workbook re-typed by hand: text cells, amounts as numbers. */
const asXlsx = (csv: string): Buffer => {
  const lines = csv
    .trim()
    .split('\n')
    .map((l) => l.split(','));
  const amountAt = lines[0]!.indexOf('sourceAmount');
  const aoa = lines.map((cells, i) => cells.map((c, j) => (i > 0 && j === amountAt ? Number(c) : c)));
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(aoa), 'Payroll');
  return XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer;
};

describe('the same reference at the same account is paid once, whatever the file and the state folder', () => {
  it('two state folders, the payroll re-saved (a trailing newline): one payout per row; the second run says already paid', async () => {
    const { dir, run, firstRun, inProcess } = await setup();
    const alice = join(dir, 'alice');
    const bob = join(dir, 'bob');
    await mkdir(alice);
    await mkdir(bob);
    const csv = generateCsv({ rows: ROWS, prefix: 'SAVED' });
    await writeFile(join(alice, 'payroll.csv'), csv);
    const first = await firstRun(alice, join(alice, 'state'), 'payroll.csv');
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const paid = await payoutIds(join(alice, 'payroll.results.csv'));

    await writeFile(join(bob, 'payroll.csv'), csv + '\n'); // re-saved by Excel: other bytes, same payroll
    const second = await run(bob, join(bob, 'state'), 'run', 'payroll.csv', '--yes');
    expect(second.code, second.stdout + second.stderr).toBe(1);
    expect(second.stdout).toMatch(new RegExp(`ALREADY_PAID +${ROWS} `));
    expect(second.stdout + second.stderr).not.toMatch(/payouts? created/);
    expect(second.stdout + second.stderr).toMatch(/paid before at this account/);
    await onePerReference();
    await alreadyPaid(join(bob, 'payroll.results.csv'), paid);

    // Bob's ledger now knows them: his next run of it sends nothing.
    const sent = initiates(sb!).length;
    const third = await inProcess(bob, join(bob, 'state'), 'run', 'payroll.csv', '--yes');
    expect(third.code, third.stdout + third.stderr).toBe(1);
    expect(initiates(sb!).length).toBe(sent);
    await alreadyPaid(join(bob, 'payroll.results.csv'), paid);
  });

  it('the CSV converted to XLSX and renamed, run from another folder: refused by the ledger, else already paid by the keys', async () => {
    const { dir, firstRun, inProcess } = await setup();
    const state = join(dir, 'state');
    const csv = generateCsv({ rows: ROWS, prefix: 'XLS' });
    await writeFile(join(dir, 'payroll.csv'), csv);
    const first = await firstRun(dir, state, 'payroll.csv');
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const paid = await payoutIds(join(dir, 'payroll.results.csv'));
    const other = join(dir, 'elsewhere');
    await mkdir(other);
    await writeFile(join(other, 'january-final.xlsx'), asXlsx(csv));
    const sent = initiates(sb!).length;

    // The same state folder: its ledger shows the references paid.
    const refused = await inProcess(other, state, 'run', 'january-final.xlsx', '--yes');
    expect(refused.code, refused.stdout + refused.stderr).toBe(3);
    expect(refused.stderr).toMatch(/already paid at this account/);
    expect(initiates(sb!).length).toBe(sent);

    // Another state folder (another user, another host): the service answers each key with its payout.
    const elsewhere = await inProcess(other, join(other, 'state'), 'run', 'january-final.xlsx', '--yes');
    expect(elsewhere.code, elsewhere.stdout + elsewhere.stderr).toBe(1);
    await onePerReference();
    await alreadyPaid(join(other, 'january-final.results.xlsx'), paid);
  });

  it('its results file run as a batch: a reference the results file wrote with a leading apostrophe ("-PAY") is paid once', async () => {
    const { dir, firstRun, inProcess } = await setup();
    await writeFile(join(dir, 'payroll.csv'), generateCsv({ rows: 2, prefix: '-SAL' }));
    const first = await firstRun(dir, undefined, 'payroll.csv');
    expect(first.code, first.stdout + first.stderr).toBe(0);
    // the results file neutralises "-SAL-0001" as "'-SAL-0001", against spreadsheet formulas
    expect(await readFile(join(dir, 'payroll.results.csv'), 'utf8')).toContain("'-SAL-0001");
    const sent = initiates(sb!).length;
    const again = await inProcess(dir, undefined, 'run', 'payroll.results.csv', '--yes');
    expect(again.code, again.stdout + again.stderr).toBe(3);
    expect(again.stderr).toMatch(/2 references of this file .* already paid at this account/);
    expect(initiates(sb!).length).toBe(sent);
    await onePerReference(2);
  });

  it('a row with a document sent again from another state folder: 409 on a first attempt, reference used before', async () => {
    const { dir, firstRun, inProcess } = await setup();
    const csv = generateCsv({ rows: 2, prefix: 'DOC', documentsEvery: 1 });
    await writeFile(join(dir, 'payroll.csv'), csv);
    const first = await firstRun(dir, join(dir, 'a'), 'payroll.csv');
    expect(first.code, first.stdout + first.stderr).toBe(0);
    // The document is uploaded again: another documentUrl, so the same key comes with another body.
    const second = await inProcess(dir, join(dir, 'b'), 'run', 'payroll.csv', '--yes', '--results', 'again.results.csv');
    expect(second.code, second.stdout + second.stderr).toBe(1);
    await onePerReference(2);
    for (const r of (await readResults(join(dir, 'again.results.csv'))).rows) {
      expect(r.result.status).toBe('CONFLICT');
      expect(r.result.payoutId).toBeUndefined();
      expect(r.result.errorMessage).toMatch(/^reference used before with other content/);
    }
  });
});

describe('--batch-id labels a batch: a re-plan of a paid file pays nothing', () => {
  it('plan paid.csv --batch-id again-1, then run --plan: nothing paid, the plan says why', async () => {
    const { dir, firstRun, inProcess } = await setup();
    await writeFile(join(dir, 'paid.csv'), generateCsv({ rows: ROWS, prefix: 'PLAN' }));
    const first = await firstRun(dir, undefined, 'paid.csv');
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const sent = initiates(sb!).length;

    const plan = await inProcess(dir, undefined, 'plan', 'paid.csv', '--batch-id', 'again-1', '--out', 'again.plan.json');
    expect(plan.code, plan.stdout + plan.stderr).toBe(1);
    expect(plan.stdout).toMatch(/to send now\s+0/);
    expect(plan.stdout).toMatch(
      new RegExp(`${ROWS} rows left out, the reference already sent at this account: row 2: already paid at this account`),
    );
    const file = JSON.parse(await readFile(join(dir, 'again.plan.json'), 'utf8')) as {
      rows: unknown[];
      notSent: { code: string; message: string }[];
    };
    expect(file.rows).toEqual([]);
    expect(file.notSent).toHaveLength(ROWS);
    for (const n of file.notSent) {
      expect(n.code).toBe('ALREADY_PAID');
      expect(n.message).toMatch(/already paid at this account \(payout .*paid\.csv/);
    }
    // `run --dry-run` shows the same: it never approves what `run` would refuse.
    const dry = await inProcess(dir, undefined, 'run', 'paid.csv', '--batch-id', 'again-1', '--dry-run');
    expect(dry.code).toBe(1);
    expect(dry.stdout).toMatch(/already paid at this account/);

    const again = await inProcess(dir, undefined, 'run', '--plan', 'again.plan.json', '--yes');
    expect([0, 1], again.stdout + again.stderr).toContain(again.code);
    expect(initiates(sb!).length).toBe(sent);
    await onePerReference();
    const statuses = (await readResults(join(dir, 'paid.results.csv'))).rows.map((r) => r.result.status);
    expect(statuses).toEqual(Array(ROWS).fill('ALREADY_PAID'));
  });

  it('run paid.csv --batch-id again-1 is refused: nothing paid', async () => {
    const { dir, firstRun, inProcess } = await setup();
    await writeFile(join(dir, 'paid.csv'), generateCsv({ rows: 3, prefix: 'LBL' }));
    expect((await firstRun(dir, undefined, 'paid.csv')).code).toBe(0);
    await appendFile(join(dir, 'paid.csv'), ''); // the same bytes: only the label differs
    const sent = initiates(sb!).length;
    const again = await inProcess(dir, undefined, 'run', 'paid.csv', '--yes', '--batch-id', 'again-1');
    expect(again.code, again.stdout + again.stderr).toBe(3);
    expect(again.stderr).toMatch(/3 references of this file .* already paid at this account/);
    expect(initiates(sb!).length).toBe(sent);
    await onePerReference(3);
  });
});

// Issue 26, items 7 and 9: a row of a results file is identified by its reference (or its key or
// payout id), never by its line number, and `retry` and `status` read the ledger's latest state
// of every row whatever results file they are given. The CLI against the sandbox over real HTTP: the
// retry each case is about a process; the runs that set it up, a repeat and the status reads by
// main() in this process.
import { existsSync } from 'node:fs';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { setStatus } from '../ops/helpers.ts';
import { HEADER, allPayouts, cleanEnv, cliIn, generateCsv, initiates, runMain, tempDirs } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-rows-by-ref-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

const col = (name: string) => HEADER.indexOf(name);

/**
 * Three GBP rows, the third turned into EUR -> EUR in DEU by FASTER_PAYMENTS: valid offline (a
 * warning), refused by preflight as METHOD_NOT_AVAILABLE (the methods route offers SEPA, SWIFT).
 * A blank line between the first and the second row.
 */
function batchWithBlankLine(): string {
  const lines = generateCsv({ rows: 3, currencies: ['GBP'], prefix: 'BL' })
    .trim()
    .split('\n');
  const third = lines[3]!.split(',');
  for (const c of ['sourceCurrency', 'destinationCurrency', 'accountCurrency']) third[col(c)] = 'EUR';
  third[col('destinationCountryCode')] = 'DEU';
  lines[3] = third.join(',');
  return [lines[0], lines[1], '', lines[2], lines[3]].join('\n') + '\n';
}

/** A step that sets the scene or repeats the one under test, in this process (the bin's main()), as cliIn's CLI runs it. */
const inProcess = (dir: string, url: string, ...args: string[]) =>
  runMain([...args, '--base-url', url, '--rate', '100'], { cwd: dir, env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') }) });

const paid = async (s: LocalSandbox, id: string) => {
  await setStatus(s, id, 'PROCESSING');
  await setStatus(s, id, 'SUCCESSFUL');
};

describe('a row is identified by its reference, never by its line number', () => {
  it('the blank-line batch with its third row refused: retry keeps each row its own payout, status no debit that never was', async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    await writeFile(join(dir, 'pay.csv'), batchWithBlankLine());
    const { cli, results } = cliIn(dir, sb.url);

    const run = await inProcess(dir, sb.url, 'run', join(dir, 'pay.csv'), '--yes');
    expect(run.code, run.stdout + run.stderr).toBe(1);
    const first = await results('pay.results.csv');
    expect(first.map((r) => [r.reference, r.status, r.errorCode])).toEqual([
      ['BL-0001', 'PENDING', ''],
      ['BL-0002', 'PENDING', ''],
      ['BL-0003', 'INVALID', 'METHOD_NOT_AVAILABLE'],
    ]);
    const ids = first.map((r) => r.payoutId);
    const sent = initiates(sb).length;

    const retry = await cli('retry', 'pay.results.csv', '-y');
    expect(retry.code, retry.stdout + retry.stderr).toBe(1); // one row is still refused
    expect(retry.stdout).not.toContain('All 3 payouts created');
    // Nothing sent and every row as the file shows it (each its own payout): no retry-1 file.
    expect(existsSync(join(dir, 'pay.results.retry-1.csv'))).toBe(false);
    expect((await results('pay.results.csv')).map((r) => [r.reference, r.status, r.payoutId, r.errorCode])).toEqual([
      ['BL-0001', 'PENDING', ids[0], ''],
      ['BL-0002', 'PENDING', ids[1], ''],
      ['BL-0003', 'INVALID', '', 'METHOD_NOT_AVAILABLE'],
    ]);
    expect(first[2]!.fee).toBe('');

    await copyFile(join(dir, 'pay.results.csv'), join(dir, 'checked.results.csv'));
    const status = await inProcess(dir, sb.url, 'status', 'checked.results.csv', '--json');
    expect(status.code, status.stdout + status.stderr).toBe(1);
    const s = JSON.parse(status.stdout) as { money: Record<string, unknown>; outcomes: Record<string, number> };
    expect(Object.keys(s.money)).toEqual(['GBP']); // no EUR debit: the EUR row was never sent
    expect(s.outcomes).toMatchObject({ inProgress: 2, notCreated: 1 });

    // Rows sorted the other way, and a blank line between them: still each row its own payout.
    const text = (await readFile(join(dir, 'pay.results.csv'), 'utf8')).trim().split('\n');
    await writeFile(join(dir, 'sorted.results.csv'), [text[0], text[3], '', text[2], text[1]].join('\n') + '\n');
    const sorted = await inProcess(dir, sb.url, 'retry', 'sorted.results.csv', '-y');
    expect(sorted.code, sorted.stdout + sorted.stderr).toBe(1);
    const back = await results('sorted.results.retry-1.csv');
    expect(back.map((r) => [r.reference, r.status, r.payoutId])).toEqual([
      ['BL-0003', 'INVALID', ''],
      ['BL-0002', 'PENDING', ids[1]],
      ['BL-0001', 'PENDING', ids[0]],
    ]);
    expect(initiates(sb).length).toBe(sent);
    expect(await allPayouts(sb)).toHaveLength(2);
  });
});

describe('retry and status read the ledger’s latest state, whatever results file they are given', () => {
  it('after retry --resend-failed paid the failed row again, the older results file shows it paid with its new payout id', async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    await writeFile(join(dir, 'pay.csv'), generateCsv({ rows: 3, currencies: ['GBP'], prefix: 'RS' }));
    const { cli, results } = cliIn(dir, sb.url);
    expect((await inProcess(dir, sb.url, 'run', join(dir, 'pay.csv'), '--yes')).code).toBe(0);
    const ids = (await results('pay.results.csv')).map((r) => r.payoutId!);

    // The second payout FAILS (the sandbox refunds it); status records it and its refund.
    await setStatus(sb, ids[1]!, 'FAILED', { reason: 'Beneficiary bank closed the account' });
    expect((await inProcess(dir, sb.url, 'status', join(dir, 'pay.results.csv'))).code).toBe(1);
    const failed = await results('pay.results.csv');
    expect(failed[1]).toMatchObject({ status: 'FAILED', nextStep: expect.stringContaining('--resend-failed') });
    for (const older of ['older-a.results.csv', 'older-b.results.csv']) await copyFile(join(dir, 'pay.results.csv'), join(dir, older));

    const resend = await inProcess(dir, sb.url, 'retry', 'pay.results.csv', '--resend-failed', '-y', '--out', 'resent.results.csv');
    expect(resend.code, resend.stdout + resend.stderr).toBe(0);
    const newId = (await results('resent.results.csv'))[1]!.payoutId!;
    expect(newId).not.toBe(ids[1]);
    for (const id of [ids[0]!, newId, ids[2]!]) await paid(sb, id);
    const sent = initiates(sb).length;

    // status on an older results file: the row shows its new payout, paid; every row paid: exit 0
    const status = await inProcess(dir, sb.url, 'status', 'older-a.results.csv', '--json');
    expect(status.code, status.stdout + status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ finished: true, outcomes: { paid: 3, failed: 0 }, failed: [] });
    const a = await results('older-a.results.csv');
    expect(a.map((r) => [r.status, r.payoutId])).toEqual([
      ['SUCCESSFUL', ids[0]],
      ['SUCCESSFUL', newId],
      ['SUCCESSFUL', ids[2]],
    ]);
    expect(a[1]!.nextStep ?? '').toBe(''); // (the column is gone when no row has a next step)
    expect(JSON.parse(a[1]!.earlierPayouts!)).toEqual([expect.objectContaining({ payoutId: ids[1], status: 'FAILED' })]);

    // the same retry on the other older copy: paid with the new payout id, no "pays it again", nothing sent
    const retry = await cli('retry', 'older-b.results.csv', '--resend-failed', '-y');
    expect(retry.code, retry.stdout + retry.stderr).toBe(0);
    expect(retry.stdout + retry.stderr).not.toMatch(/pays it again|--resend-failed/);
    const b = await results('older-b.results.retry-1.csv');
    expect(b.map((r) => [r.status, r.payoutId])).toEqual([
      ['SUCCESSFUL', ids[0]],
      ['SUCCESSFUL', newId],
      ['SUCCESSFUL', ids[2]],
    ]);
    expect(b.every((r) => !r.nextStep)).toBe(true);
    expect(initiates(sb).length).toBe(sent);
    expect(await allPayouts(sb)).toHaveLength(4); // three rows, one of them paid twice after its first payout failed
  });
});

// A row whose outcome is unknown is resent with its journalled key and body (I2), whatever its cells
// say now: the plan a person approves, its control totals and the policy's amounts are that body's,
// and an edit of the row says it is not applied.
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { planBatch } from '../../src/engine/plan-command.ts';
import { execute, prepareRun, runBatch } from '../../src/engine/pipeline.ts';
import { initiateBody } from '../../src/engine/execute.ts';
import { loadBatch } from '../../src/engine/prepare.ts';
import { prepareRetry } from '../../src/engine/retry-batch.ts';
import { readResults } from '../../src/results/read.ts';
import { writeResults } from '../../src/results/write.ts';
import { Dec } from '../../src/money.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { allPayouts, connectionTo, setStatus, startSb, unattended } from '../ops/helpers.ts';
import { retryResults, tempDirs, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-settle-as-sent-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

/** A fetch whose first initiate never reaches the service, nor its resends while `lose`: that row's outcome is unknown. */
function losingFirst(o = { lose: true }): typeof fetch {
  let lost: string | undefined;
  return async (input, init) => {
    const body = Buffer.from((init?.body as Uint8Array | undefined) ?? []).toString();
    if (o.lose && (input as string).endsWith('/initiate') && (lost ??= body) === body) throw new TypeError('fetch failed');
    return fetch(input, init);
  };
}

describe('an unsettled row edited in the results file before a retry', () => {
  it('is planned, totalled and resent as first sent: the edit is said not applied', async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const file = await writeBatch(dir, 'pay.csv', { rows: 2, currencies: ['GBP'], prefix: 'ASS' });
    const via = losingFirst();
    const run = await runBatch({ file, conn: connectionTo(sb, via), ...unattended({ settleDelayMs: 10 }) });
    const table = await readResults(run.resultsPath);
    expect(table.rows.map((r) => r.result.status)).toEqual(['UNKNOWN_OUTCOME', 'PENDING']);
    const [first, second] = table.rows.map((r) => r.cells.sourceAmount!);
    const payee = table.rows[0]!.cells.accountName;

    table.rows[0]!.cells.sourceAmount = '9999.00';
    table.rows[0]!.cells.accountName = 'Someone Else';
    await writeResults(run.resultsPath, table);
    const total = new Dec(first!).plus(second!);
    const o = { ...unattended({ settleDelayMs: 10 }, { expectTotals: [{ currency: 'GBP', amount: total }] }), conn: connectionTo(sb) };
    const prepared = await prepareRetry({ ...o, resultsFile: run.resultsPath, here: dirname(run.resultsPath) });
    expect(prepared.plan!.currencies.map((c) => [c.currency, c.amount])).toEqual([['GBP', new Dec(first!).toFixed(2)]]);
    expect(prepared.plan!.warnings.join('\n')).toMatch(/row 2 .*not applied/);
    expect(prepared.refused).toBeUndefined();
    const done = await prepared.go({});
    // the journalled body went: no payout of the edited amount
    expect((await allPayouts(sb)).map((p) => String(p.sourceAmount)).sort()).toEqual([first, second].map((a) => String(Number(a))).sort());
    // (the results row shows the edited cells: it says they are not what was paid)
    const row = (await readResults(done.resultsPath)).rows[0]!;
    expect([row.cells.sourceAmount, row.result.status, row.result.errorCode]).toEqual(['9999.00', 'PENDING', 'EDIT_NOT_APPLIED']);
    expect(row.result.errorMessage).toBe(
      `the payout was sent as first journalled, ${new Dec(first!).toFixed(2)} GBP to ${payee}: the edit of this row is not paid`,
    );
  });
});

describe('an unsettled row edited in the batch file, then planned (--out) under its --batch-id', () => {
  it('the plan file holds the journalled body, and run --plan settles it with that body', async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const file = await writeBatch(dir, 'pay.csv', { rows: 2, currencies: ['GBP'], prefix: 'ASP' });
    const run = await runBatch({ file, batchId: 'payroll-7', conn: connectionTo(sb, losingFirst()), ...unattended({ settleDelayMs: 10 }) });
    expect((await readResults(run.resultsPath)).rows.map((r) => r.result.status)).toEqual(['UNKNOWN_OUTCOME', 'PENDING']);
    const csv = await readFile(file, 'utf8');
    await writeFile(file, csv.replace(',10.00,', ',9999.00,'));

    const out = join(dir, 'plan.json');
    const flags = { mergeDocuments: false, allowPartial: false, enablePairs: false, quote: false };
    const planned = await planBatch({ file, batchId: 'payroll-7', conn: connectionTo(sb), out, ...flags });
    expect(planned.planFile!.rows.map((r) => [r.rowNumber, r.body.sourceAmount])).toEqual([[2, 10]]);
    expect(planned.plan.warnings.join('\n')).toMatch(/row 2 \(10\.00 GBP to .*\).*not applied/);
    const settled = await runBatch({ planFile: out, conn: connectionTo(sb), ...unattended({ settleDelayMs: 10 }) });
    expect(settled.kind).toBe('ok');
    expect((await allPayouts(sb)).map((p) => p.sourceAmount).sort()).toEqual([10, 11.01]);
  });
});

describe('an unsettled row edited into an invalid one in the batch run again under its --batch-id', () => {
  it('is reported of unknown outcome with its key, never INVALID (never sent)', async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const file = await writeBatch(dir, 'pay.csv', { rows: 2, currencies: ['GBP'], prefix: 'ASI' });
    const run = await runBatch({ file, batchId: 'payroll-8', conn: connectionTo(sb, losingFirst()), ...unattended({ settleDelayMs: 10 }) });
    const key = (await readResults(run.resultsPath)).rows[0]!.result.idempotencyKey;
    await writeFile(file, (await readFile(file, 'utf8')).replace(',10.00,', ',ten,'));
    const again = await runBatch({ file, batchId: 'payroll-8', conn: connectionTo(sb), ...unattended({ settleDelayMs: 10 }) });
    const row = (await readResults(again.resultsPath)).rows[0]!.result;
    expect([row.status, row.idempotencyKey]).toEqual(['UNKNOWN_OUTCOME', key]);
    expect(await allPayouts(sb)).toHaveLength(1);
  });
});

describe('an unsettled row edited to another amount, its first amount moved to a new row', () => {
  it('the new row repeats what the unsettled one resends: a probable duplicate, not sent', async () => {
    sb = await startSb();
    const dir = await dirs.make();
    const file = await writeBatch(dir, 'pay.csv', { rows: 2, currencies: ['GBP'], prefix: 'ASM' });
    const run = await runBatch({ file, batchId: 'payroll-9', conn: connectionTo(sb, losingFirst()), ...unattended({ settleDelayMs: 10 }) });
    expect((await readResults(run.resultsPath)).rows.map((r) => r.result.status)).toEqual(['UNKNOWN_OUTCOME', 'PENDING']);
    const [head, first, ...rest] = (await readFile(file, 'utf8')).trim().split('\n');
    await writeFile(file, [head, first!.replace(',10.00,', ',12.00,'), ...rest, first!.replace('ASM-0001', 'ASM-0003')].join('\n') + '\n');
    const again = await runBatch({ file, batchId: 'payroll-9', conn: connectionTo(sb), ...unattended({ settleDelayMs: 10 }) });
    const rows = (await readResults(again.resultsPath)).rows.map((r) => [r.result.status, r.result.errorCode]);
    expect(rows).toEqual([
      ['PENDING', 'EDIT_NOT_APPLIED'], // (its 12.00 is not what was paid)
      ['PENDING', undefined],
      ['INVALID', 'PROBABLE_DUPLICATE'],
    ]);
    expect(await allPayouts(sb)).toHaveLength(2);
  });
});

/**
 * A one-row batch the service refused and stored the refusal of (its GBP wallet emptied after the preflight), every answer
 * lost: UNKNOWN_OUTCOME; then the wallet refunded (the refusal's cause gone) and the row's cells edited as `cells`.
 */
async function refusedUnknownEdited(cells: Record<string, string>) {
  sb = await startSb({ storeRefusals: true });
  const dir = await dirs.make();
  const file = await writeBatch(dir, 'pay.csv', { rows: 1, currencies: ['GBP'], prefix: 'ASR' });
  const o = { lose: false };
  const losing: typeof fetch = async (input, init) => {
    const answer = await fetch(input, init);
    if (o.lose && (input as string).endsWith('/initiate')) throw new TypeError('fetch failed');
    return answer;
  };
  const conn = connectionTo(sb, losing);
  const prepared = await prepareRun({ file, conn, ...unattended({ settleDelayMs: 1 }, { yes: false, interactive: true }) });
  const gbp = (await conn.client.listWallets()).data.find((w) => w.currency === 'GBP')!;
  const row = (await loadBatch(file)).rows.at(0)!.payout!;
  const drain = await conn.client.initiate(initiateBody({ ...row, sourceAmount: new Dec(gbp.balance!).minus(5).floor() }), {
    idempotencyKey: 'test-drain-1',
  });
  o.lose = true;
  const run = await execute(prepared, { confirmed: true });
  expect((await readResults(run.resultsPath)).rows.map((r) => r.result.status)).toEqual(['UNKNOWN_OUTCOME']);
  o.lose = false;
  await setStatus(sb, drain.payout.id, 'REJECTED');
  const table = await readResults(run.resultsPath);
  Object.assign(table.rows[0]!.cells, cells);
  await writeResults(run.resultsPath, table);
  const paid = async () => (await allPayouts(sb!)).filter((p) => p.id !== drain.payout.id).map((p) => p.sourceAmount);
  const retry = (resultsFile: string) => retryResults({ ...unattended({ settleDelayMs: 1 }), resultsFile, conn: connectionTo(sb!) });
  return { results: run.resultsPath, paid, retry };
}

// (found by test/chaos/retry-fuzz.ts: a retry killed after it resent the refused key's body left it unknown)
describe('an unsettled row the service had refused (a service that stores refusals), edited before the retry that settles it', () => {
  it('is left refused once settled: the body the edit replaced never goes under a new key; the next retry sends the edit', async () => {
    const { results, paid, retry } = await refusedUnknownEdited({ accountName: 'Someone Else', sourceAmount: '7.00' });
    const first = await retry(results);
    expect(await paid()).toEqual([]);
    expect((await readResults(first.resultsPath)).rows[0]!.result).toMatchObject({
      status: 'FAILED_TO_SEND',
      errorCode: 'INSUFFICIENT_FUNDS',
    });
    const second = await retry(first.resultsPath);
    expect(second.kind).toBe('ok');
    expect(await paid()).toEqual([7]);
  });

  it('edited into an invalid row: settled with its journalled body, then never sent under a new key while invalid', async () => {
    const { results, paid, retry } = await refusedUnknownEdited({ sourceAmount: 'ten' });
    const first = await retry(results);
    expect(await paid()).toEqual([]);
    expect((await readResults(first.resultsPath)).rows[0]!.result).toMatchObject({
      status: 'FAILED_TO_SEND',
      errorCode: 'INSUFFICIENT_FUNDS',
    });
    const second = await retry(first.resultsPath);
    expect((await readResults(second.resultsPath)).rows[0]!.result.status).toBe('INVALID');
    expect(await paid()).toEqual([]);
  });
});

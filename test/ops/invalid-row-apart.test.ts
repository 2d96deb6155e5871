// A paid row's key and payout id on a row the run found invalid (its result columns sorted apart from
// the batch cells, or pasted): status, reconcile and attach refuse it as retry does, never showing,
// tying or attaching one payout to two rows; also once the batch file moved.
import { readFile, rename, writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { payoutIdOf } from '../../src/follow-up/attach-documents.ts';
import { reconcile } from '../../src/follow-up/reconciliation.ts';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import { readResults, writeResults } from '../../src/results/results.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { retryResults, tempDirs } from '../engine/helpers.ts';
import { allPayouts, connectionTo, sortApart, startSb, unattended, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-invalid-apart-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

/** A run of two rows, the second invalid (no payee name): its results file, the paid row's payout id. */
async function paidAndInvalid(prefix: string) {
  sb = await startSb();
  const dir = await dirs.make();
  const file = await writeBatch(dir, 'pay.csv', { rows: 2, currencies: ['GBP'], prefix });
  await writeFile(file, (await readFile(file, 'utf8')).replace('Amelia Jones', ''));
  const conn = connectionTo(sb);
  const run = await runBatch({ file, conn, ...unattended({ settleDelayMs: 10 }) });
  const table = await readResults(run.resultsPath);
  expect(table.rows.map((r) => r.result.status)).toEqual(['PENDING', 'INVALID']);
  return { dir, file, conn, results: run.resultsPath, id: table.rows[0]!.result.payoutId!, ledgers: [ledgerOf(conn)] };
}

describe("a row the run found invalid, given a paid row's result columns", () => {
  it('status: sorted apart, refused naming the row; the file left as it was', async () => {
    const b = await paidAndInvalid('IA');
    await sortApart(b.results);
    const before = await readFile(b.results);
    const status = refreshStatus({ client: b.conn.client, resultsFile: b.results, ledgers: b.ledgers });
    await expect(status).rejects.toMatchObject({ name: 'BatchRefused', message: expect.stringMatching(/ row 2: .*IA-0002.*IA-0001/) });
    expect((await readFile(b.results)).equals(before)).toBe(true);
  });

  it('reconcile: sorted apart, refused naming the row', async () => {
    const b = await paidAndInvalid('IB');
    await sortApart(b.results);
    const rc = reconcile({ client: b.conn.client, resultsFile: b.results, ledgers: b.ledgers });
    await expect(rc).rejects.toMatchObject({ name: 'BatchRefused', message: expect.stringMatching(/ row 2: .*IB-0002.*IB-0001/) });
  });

  it("attach by the invalid row's reference: sorted apart, refused, never the paid row's payout", async () => {
    const b = await paidAndInvalid('IC');
    await sortApart(b.results);
    const o = { resultsFile: b.results, ledgers: b.ledgers };
    await expect(payoutIdOf('IC-0002', o)).rejects.toMatchObject({ message: expect.stringMatching(/ row 2: .*IC-0002.*IC-0001/) });
  });

  it("attach by the invalid row's reference: the paid row's result columns pasted on it, refused", async () => {
    const b = await paidAndInvalid('ID');
    const table = await readResults(b.results);
    table.rows[1]!.result = { ...table.rows[0]!.result };
    await writeResults(b.results, table);
    const o = { resultsFile: b.results, ledgers: b.ledgers };
    await expect(payoutIdOf('ID-0002', o)).rejects.toMatchObject({ message: expect.stringMatching(/ row 3: .*ID-0002.*ID-0001/) });
    expect(await payoutIdOf('ID-0001', o)).toMatchObject({ payoutId: b.id });
  });

  it('retry: sorted apart once the batch file moved, refused naming the row; nothing sent', async () => {
    const b = await paidAndInvalid('IE');
    await sortApart(b.results);
    await rename(b.file, `${b.file}.moved`);
    const retry = retryResults({ ...unattended({ settleDelayMs: 10 }), resultsFile: b.results, conn: b.conn });
    await expect(retry).rejects.toMatchObject({ name: 'BatchRefused', message: expect.stringMatching(/ row 2: .*IE-0002.*IE-0001/) });
    expect(await allPayouts(sb!)).toHaveLength(1);
  });
});

// The month-end story of issue 16, over HTTP against the sandbox, as a treasurer lives it: a batch
// is run; some payouts are paid, one FAILS (the sandbox refunds amount + fee), one asks for a file
// and is answered with `attach`; `status` says the batch is not done (exit 1); the rest settles;
// `retry --resend-failed` pays exactly the failed row again (one initiate, attempt 2); the new
// payout is paid; `status` exits 0; `reconcile` ties every row out to the cent, the failed
// payout's debit and refund tied to the row that replaced it.
import { afterEach, describe, expect, it } from 'vitest';
import { Dec } from '../../src/money.ts';
import { readResults } from '../../src/results/results.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { cleanEnv, paidBatch, runCli, runMain, sampleDoc, setStatus, startSb } from './helpers.ts';

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const initiates = (s: LocalSandbox) => s.requestLog().filter((r) => r.route === 'initiate').length;
const paid = async (s: LocalSandbox, id: string) => {
  await setStatus(s, id, 'PROCESSING');
  await setStatus(s, id, 'SUCCESSFUL');
};

interface RowJson {
  rowNumber: number;
  payoutId: string;
  status: string;
  expected: string;
  debit: string;
  refund: string;
  net: string;
  ok: boolean;
  earlier: { payoutId: string; status: string; expected: string; debit: string; refund: string; net: string; ok: boolean }[];
}

describe('month end: run, status, attach, retry --resend-failed, reconcile', () => {
  it('ends with every row paid and every movement tied to its row, to the cent', async () => {
    sb = await startSb();
    const amounts = ['1250.10', '980.05', '480.10', '33.33', '0.07'];
    const { dir, results, ids } = await paidBatch(sb, { rows: 5, amount: (i) => amounts[i]! });
    const env = cleanEnv();
    const conn = ['--base-url', sb.url, '--rate', '100'];
    // (retry, the step that pays, is a process; status, attach and reconcile, which read and tie out, main() in this process)
    const status = (file: string) => runMain(['status', file, ...conn, '--json'], { cwd: dir, env });
    const first = (await readResults(results)).rows.map((r) => r.result);

    // The service moves them: 0 and 1 paid, 2 FAILED (refunded), 3 asks for a file, 4 still pending.
    await paid(sb, ids[0]!);
    await paid(sb, ids[1]!);
    await setStatus(sb, ids[2]!, 'FAILED', { reason: 'Beneficiary bank closed the account' });
    await setStatus(sb, ids[3]!, 'ADDITIONAL_INFO_REQUIRED', { informationRequests: [{ title: 'Invoice', type: 'FILE' }] });
    const midway = await status(results);
    expect(midway.code, midway.stderr).toBe(1);
    expect(JSON.parse(midway.stdout).outcomes).toEqual({ paid: 2, inProgress: 1, waiting: 1, failed: 1, notCreated: 0 });

    // The file is sent; the service reviews it and pays; row 4 is paid too.
    const attach = await runMain(['attach', ids[3]!, sampleDoc(), '--base-url', sb.url], { cwd: dir, env });
    expect(attach.code, attach.stderr).toBe(0);
    await paid(sb, ids[3]!);
    await paid(sb, ids[4]!);
    const settled = await status(results);
    expect(settled.code, settled.stderr).toBe(1); // the failed row is not paid yet
    expect(JSON.parse(settled.stdout).outcomes).toEqual({ paid: 4, inProgress: 0, waiting: 0, failed: 1, notCreated: 0 });

    // Pay the failed row again: one initiate, under attempt 2, for that row only.
    const before = initiates(sb);
    const out = `${dir}/batch.month-end.csv`;
    const retry = await runCli(['retry', results, '--resend-failed', '--yes', '--out', out, ...conn], { cwd: dir, env });
    expect(retry.code, retry.stderr + retry.stdout).toBe(0);
    expect(retry.stdout).toContain('Sent again after a failed, refunded payout: 1 row.');
    expect(initiates(sb) - before).toBe(1);
    const resent = (await readResults(out)).rows.map((r) => r.result);
    expect(resent.map((r) => r.payoutId)).toEqual([ids[0], ids[1], resent[2]!.payoutId, ids[3], ids[4]]);
    expect(resent[2]!.payoutId).not.toBe(ids[2]);
    expect(resent[2]!.idempotencyKey).toMatch(/-2$/);
    expect(first[2]!.idempotencyKey).toMatch(/-1$/);
    expect(JSON.parse(resent[2]!.earlierPayouts!)).toEqual([expect.objectContaining({ payoutId: ids[2], status: 'FAILED' })]);

    await paid(sb, resent[2]!.payoutId!);
    const done = await status(out);
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ finished: true, outcomes: { paid: 5, failed: 0 } });

    // Month end: every row ties out, the failed payout's debit and refund on the row that replaced it.
    const recon = await runMain(['reconcile', out, ...conn, '--json'], { cwd: dir, env });
    expect(recon.code, recon.stderr + recon.stdout).toBe(0);
    const j = JSON.parse(recon.stdout);
    expect(j.problems).toEqual([]);
    expect(j.tiesOut).toBe(true);
    expect(j.unexplained).toEqual([]);
    expect(j.counts).toMatchObject({ rows: 5, created: 5, tiedOut: 5, earlierRefunded: 1 });
    const total = (r: { totalDeductible?: string }) => r.totalDeductible!;
    const rows = j.rows as RowJson[];
    expect(rows.map((r) => [r.payoutId, r.status, r.expected, r.debit, r.refund, r.net, r.ok])).toEqual(
      resent.map((r) => [r.payoutId, 'SUCCESSFUL', total(r), `-${total(r)}`, '0.00', `-${total(r)}`, true]),
    );
    expect(rows.map((r) => r.earlier.length)).toEqual([0, 0, 1, 0, 0]);
    expect(rows[2]!.earlier[0]).toMatchObject({
      payoutId: ids[2],
      status: 'FAILED',
      expected: total(first[2]!),
      debit: `-${total(first[2]!)}`,
      refund: total(first[2]!),
      net: '0.00',
      ok: true,
    });
    // per currency: the six debits, the one refund, and a net of exactly the five rows paid
    const sum = (xs: string[]) => xs.reduce((a, x) => a.plus(x), new Dec(0)).toFixed(2);
    const paidTotal = sum(resent.map(total));
    expect(j.totals).toEqual([
      {
        currency: 'GBP',
        walletIds: [expect.any(String)],
        debited: `-${sum([paidTotal, total(first[2]!)])}`,
        refunded: total(first[2]!),
        net: `-${paidTotal}`,
        expectedNet: `-${paidTotal}`,
        ok: true,
      },
    ]);
  });
});

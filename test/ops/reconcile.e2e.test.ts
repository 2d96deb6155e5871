// `reconcile RESULTS` against the sandbox over real HTTP: a batch where one payout succeeds, one
// FAILED (refunded by the sandbox) and one is pending ties out to the cent; then a payout of
// another batch of the account is named as that batch's debit (that second reconcile by main() in
// this process: what it reads, not a process, is the case).
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { readResults } from '../../src/results/results.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { cleanEnv, paidBatch, runCli, runMain, setStatus, startSb } from './helpers.ts';

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

describe('payout-batch reconcile', () => {
  it("ties a batch with a FAILED (refunded) payout out to the cent, then names another batch's debit as that batch's", async () => {
    sb = await startSb();
    const { dir, results, ids } = await paidBatch(sb, { rows: 3, amount: (i) => ['100.10', '250.05', '0.30'][i]! });
    await setStatus(sb, ids[0]!, 'PROCESSING');
    await setStatus(sb, ids[0]!, 'SUCCESSFUL');
    await setStatus(sb, ids[1]!, 'FAILED', { reason: 'bank rejected the account' });
    const env = cleanEnv();
    const table = await readResults(results);
    const total = (i: number) => table.rows[i]!.result.totalDeductible!;

    const r = await runCli(['reconcile', results, '--base-url', sb.url, '--rate', '100', '--json'], { cwd: dir, env });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.tiesOut).toBe(true);
    expect(j.problems).toEqual([]);
    expect(j.requests).toEqual({ payoutPages: 1, getPayout: 0, transactionPages: 1, total: 2 }); // pages, not rows
    expect(j.quota).toMatchObject({ quota: 10000 });
    expect(j.rows.map((x: { status: string; debit: string; refund: string; net: string }) => [x.status, x.debit, x.refund, x.net])).toEqual(
      [
        ['SUCCESSFUL', `-${total(0)}`, '0.00', `-${total(0)}`],
        ['FAILED', `-${total(1)}`, total(1), '0.00'],
        ['PENDING', `-${total(2)}`, '0.00', `-${total(2)}`],
      ],
    );
    const [gbp] = j.totals;
    expect(gbp).toMatchObject({ currency: 'GBP', ok: true });
    expect(gbp.net).toBe(gbp.expectedNet);
    expect(j.unexplained).toEqual([]);
    const csv = readFileSync(j.reconciliationFile, 'utf8');
    expect(j.reconciliationFile).toMatch(/batch\.results\.reconciliation\.csv$/);
    expect(csv.split('\r\n')[0]).toBe(
      '\uFEFFkind,row,reference,payoutId,payoutRef,status,currency,walletId,totalDeductible,debit,refund,net,transactionIds,createdAt,tiesOut,problem,explainedBy',
    );
    expect(csv).toContain(`,FAILED,GBP,${gbp.walletIds[0]},${total(1)},-${total(1)},${total(1)},0.00,`);

    // Another batch of the account debits the same wallet after this one: named as that batch's, not a failure.
    const other = await paidBatch(sb, { rows: 1, prefix: 'OTHER', amount: () => '7.77' });
    const again = await runMain(['reconcile', results, '--base-url', sb.url, '--rate', '100'], { cwd: dir, env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`1 debit explained elsewhere: batch [0-9a-f]{16} \\(${other.file}\\) \\(1\\)`));
    expect(again.stdout).toMatch(
      /Used 2 requests \(1 payout page, 0 payout status, 1 transaction page\); this key has used \d+ of 10,000 this month/,
    );
    expect(again.stdout).toMatch(/Everything ties out/);
    expect(existsSync(j.reconciliationFile)).toBe(true);
  });
});

// After the payouts are created (issue 16): `status` says in a treasurer's words what became of each
// row, whether the batch is finished (exit 0 / 1 / 5), what was debited, refunded and net per
// currency; `retry --resend-failed` pays a failed, refunded row again under attempt 2, once.
import { afterEach, describe, expect, it } from 'vitest';
import { readResults } from '../../src/results/results.ts';
import { Dec } from '../../src/money.ts';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { runMain } from '../engine/helpers.ts';
import { cleanEnv, paidBatch, runCli, setStatus, startSb } from './helpers.ts';

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const initiates = (s: LocalSandbox) => s.requestLog().filter((r) => r.route === 'initiate').length;
/** `status --json` read by main() in this process (reading a status is not about a process; the text one below is a process). */
const status = (results: string, dir: string, env: Record<string, string>) =>
  runMain(['status', results, '--base-url', sb!.url, '--rate', '100', '--json'], { cwd: dir, env });

describe('status: finished or not, in words, with money per currency', () => {
  it('exits 5 while in progress, 1 with a failure, and gives debited, refunded and net exactly', async () => {
    sb = await startSb();
    const { dir, results, ids } = await paidBatch(sb, { rows: 3 });
    const env = cleanEnv();
    const created = (await readResults(results)).rows.map((r) => r.result);

    const pending = await status(results, dir, env);
    expect(pending.code, pending.stderr).toBe(5);
    const p = JSON.parse(pending.stdout);
    expect(p).toMatchObject({ exitCode: 5, finished: false, outcomes: { inProgress: 3, paid: 0, failed: 0, waiting: 0, notCreated: 0 } });
    expect(p.moved).toEqual([]); // nothing moved: no PENDING -> PENDING

    await setStatus(sb, ids[0]!, 'PROCESSING');
    await setStatus(sb, ids[0]!, 'SUCCESSFUL');
    await setStatus(sb, ids[1]!, 'FAILED', { reason: 'Beneficiary bank closed the account' });
    await setStatus(sb, ids[2]!, 'ADDITIONAL_INFO_REQUIRED', { informationRequests: [{ title: 'Invoice', type: 'FILE' }] });
    const r = await status(results, dir, env);
    expect(r.code, r.stderr).toBe(1);
    const j = JSON.parse(r.stdout);
    expect(j.outcomes).toEqual({ paid: 1, inProgress: 0, waiting: 1, failed: 1, notCreated: 0 });
    expect(j.moved.map((m: { from: string; to: string }) => `${m.from}->${m.to}`).sort()).toEqual([
      'PENDING->ADDITIONAL_INFO_REQUIRED',
      'PENDING->FAILED',
      'PENDING->SUCCESSFUL',
    ]);
    const debited = created.reduce((a, x) => a.plus(x.totalDeductible!), new Dec(0));
    const refunded = new Dec(created[1]!.totalDeductible!);
    expect(j.money.GBP).toEqual({
      payouts: 3,
      debited: debited.toFixed(2),
      refunded: refunded.toFixed(2),
      net: debited.minus(refunded).toFixed(2),
    });
    // (GET payout carries no reason, spec §2: only a webhook's data.reason fills statusReason, through `listen`)
    expect(j.failed).toEqual([expect.objectContaining({ payoutId: ids[1], status: 'FAILED', refunded: refunded.toFixed(2) })]);
    expect(j.waiting[0]).toMatchObject({ payoutId: ids[2], nextStep: expect.stringContaining(`payout-batch attach ${ids[2]}`) });

    const rows = (await readResults(results)).rows.map((x) => x.result);
    expect(rows[1]).toMatchObject({ status: 'FAILED', refunded: refunded.toFixed(2) });
    expect(rows[1]!.nextStep).toContain('--resend-failed');
    expect(rows[2]!.nextStep).toContain(`payout-batch attach ${ids[2]}`);

    // the text says it in words too
    const text = await runCli(['status', results, '--base-url', sb.url, '--rate', '100'], { cwd: dir, env });
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('failed after creation, refunded');
    expect(text.stdout).not.toMatch(/(\w+) -> \1\b/);
  });

  it('exits 0 only when every row is paid', async () => {
    sb = await startSb();
    const { dir, results, ids } = await paidBatch(sb, { rows: 2 });
    for (const id of ids) {
      await setStatus(sb, id, 'PROCESSING');
      await setStatus(sb, id, 'SUCCESSFUL');
    }
    const r = await status(results, dir, cleanEnv());
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ finished: true, outcomes: { paid: 2 } });
  });
});

describe('retry --resend-failed', () => {
  it('sends exactly the failed, refunded row once, under attempt 2, and says how much', async () => {
    sb = await startSb();
    const { dir, results, ids } = await paidBatch(sb, { rows: 3 });
    const env = cleanEnv();
    await setStatus(sb, ids[1]!, 'REJECTED', { reason: 'compliance' });
    // (the status that records the rejection in this process: the bin's main())
    expect((await runMain(['status', results, '--base-url', sb.url, '--rate', '100'], { cwd: dir, env })).code).toBe(1);
    const before = initiates(sb);
    const firstKey = (await readResults(results)).rows[1]!.result.idempotencyKey!;

    // without the flag nothing is sent again (this and the last retry by main() in this process)
    const plain = await runMain(['retry', results, '--yes', '--base-url', sb.url, '--rate', '100'], { cwd: dir, env });
    expect(plain.code, plain.stderr).toBe(1);
    expect(initiates(sb)).toBe(before);

    const out = `${dir}/again.csv`;
    const r = await runCli(['retry', results, '--resend-failed', '--yes', '--base-url', sb.url, '--rate', '100', '--out', out], {
      cwd: dir,
      env,
    });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(initiates(sb) - before).toBe(1);
    expect(r.stdout).toMatch(/sent again\s+1 row whose payout failed and was refunded: GBP /);
    expect(r.stdout).toContain('Sent again after a failed, refunded payout: 1 row.');
    const rows = (await readResults(out)).rows.map((x) => x.result);
    expect(rows[1]!.status).toBe('PENDING');
    expect(rows[1]!.payoutId).not.toBe(ids[1]);
    // attempt 2 of the same reference: a key of its own (keys come from the reference and the attempt)
    expect(rows[1]!.idempotencyKey).not.toBe(firstKey);
    expect(rows[1]!.idempotencyKey).toMatch(/^pb3-[0-9a-f]{32}-2$/);
    expect(JSON.parse(rows[1]!.earlierPayouts!)).toEqual([expect.objectContaining({ payoutId: ids[1], status: 'REJECTED' })]);
    expect([rows[0]!.payoutId, rows[2]!.payoutId]).toEqual([ids[0], ids[2]]);

    // once more: the new payout is in progress, nothing is sent
    const again = await runMain(['retry', out, '--resend-failed', '--yes', '--base-url', sb.url, '--rate', '100'], { cwd: dir, env });
    expect(again.code, again.stderr).toBe(0);
    expect(initiates(sb) - before).toBe(1);
  });
});

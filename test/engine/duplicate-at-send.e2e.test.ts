// Issue 39: a created row renamed in a results file (its reference changed, its key, payout id and
// status cleared) and retried is a probable duplicate of the payout the ledger shows minutes ago:
// refused PROBABLE_DUPLICATE, nothing sent; `--allow-duplicate REF` sends it. The same check in
// plan, run and watch (one place: pipeline.ts planStage), and outside its window no refusal.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readResults } from '../../src/results/read.ts';
import { writeResults } from '../../src/results/write.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { allPayouts, cleanEnv, cliIn, ledgerJournals, runCli, runMain, tempDirs, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
const dirs = tempDirs('pb-dup-send-');
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

describe('a created row renamed and retried', () => {
  it('is refused PROBABLE_DUPLICATE naming the earlier payout; paid with --allow-duplicate', async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    await writeBatch(dir, 'pay.csv', { rows: 3, currencies: ['GBP'], prefix: 'DUP' });
    const { cli, inProcess, results } = cliIn(dir, sb.url);
    const run = await inProcess('run', 'pay.csv', '--yes');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const paid = await results('pay.results.csv');

    const file = join(dir, 'pay.results.csv');
    const table = await readResults(file);
    const row = table.rows[1]!;
    row.cells.reference = 'DUP-0002-AGAIN';
    row.result = { ...row.result, status: '', payoutId: '', payoutRef: '', idempotencyKey: '' };
    await writeResults(file, table);

    const refused = await cli('retry', 'pay.results.csv', '--yes');
    expect(refused.code, refused.stdout + refused.stderr).toBe(1);
    const after = await results('pay.results.retry-1.csv');
    expect(after[1]).toMatchObject({ reference: 'DUP-0002-AGAIN', errorCode: 'PROBABLE_DUPLICATE', payoutId: '' });
    expect(after[1]!.errorMessage).toContain('DUP-0002');
    expect(after[1]!.errorMessage).toContain(paid[1]!.payoutRef!);
    expect(await allPayouts(sb)).toHaveLength(3);

    // (what the flag sends, by main() in this process: the refusal above is the process)
    const allowed = await inProcess('retry', 'pay.results.csv', '--yes', '--allow-duplicate', 'DUP-0002-AGAIN');
    expect(allowed.code, allowed.stdout + allowed.stderr).toBe(0);
    expect(await allPayouts(sb)).toHaveLength(4);
  }, 60_000);
});

/** Moves every `created` line of the state folder's journals `days` into the past: last week's payroll. */
async function ageCreated(state: string, days: number): Promise<void> {
  const then = new Date(Date.now() - days * 86_400_000).toISOString();
  for (const j of ledgerJournals(state)) {
    const lines = (await readFile(j, 'utf8')).split('\n');
    const aged = lines.map((l) => (l.includes('"t":"created"') ? l.replace(/"at":"[^"]*"/, `"at":"${then}"`) : l));
    await writeFile(j, aged.join('\n'));
  }
}

describe('a new file paying the same people the same amounts as a recent payout (run, plan, watch)', () => {
  /** The earlier batch, paid by main() in this process (a step, not what is tested): the ledger of `state` holds its payouts. */
  const paidEarlier = async (dir: string, name: string, state = join(dir, 'state')) => {
    const r = await runMain(['run', join(dir, name), '--yes', '--base-url', sb!.url], {
      cwd: dir,
      env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: state }),
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
  };
  it('plan and run say PROBABLE_DUPLICATE naming the earlier reference, payout and date; --allow-duplicate sends it', async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    await writeBatch(dir, 'monday.csv', { rows: 2, currencies: ['GBP'], prefix: 'MON' });
    await writeBatch(dir, 'again.csv', { rows: 2, currencies: ['GBP'], prefix: 'AGAIN' });
    const { cli, inProcess, results } = cliIn(dir, sb.url);
    await paidEarlier(dir, 'monday.csv');
    const paid = await results('monday.results.csv');

    const plan = await cli('plan', 'again.csv');
    expect(plan.code, plan.stdout + plan.stderr).toBe(1);
    for (const [i, p] of paid.entries()) {
      expect(plan.stdout).toContain(`row ${i + 2}: same beneficiary account, amount and currency as MON-000${i + 1}`);
      expect(plan.stdout).toContain(p.payoutRef!);
    }
    expect(plan.stdout).toMatch(new RegExp(`on ${new Date().toISOString().slice(0, 10)}T`));

    // (what the run writes, by main() in this process: the plan above is the process)
    const run = await inProcess('run', 'again.csv', '--yes');
    expect(run.code, run.stdout + run.stderr).toBe(1);
    const refused = await results('again.results.csv');
    expect(refused.map((r) => [r.errorCode, r.payoutId])).toEqual([
      ['PROBABLE_DUPLICATE', ''],
      ['PROBABLE_DUPLICATE', ''],
    ]);
    expect(refused[0]!.errorMessage).toContain(`MON-0001, paid at this account as payout ${paid[0]!.payoutRef}`);
    expect(await allPayouts(sb)).toHaveLength(2);

    const allowed = await inProcess('run', 'again.csv', '--yes', '--allow-duplicate', 'AGAIN-0001', '--allow-duplicate', 'MON-0002');
    expect(allowed.code, allowed.stdout + allowed.stderr).toBe(0);
    expect(await allPayouts(sb)).toHaveLength(4);
  }, 60_000);

  it("a payee whose payout's outcome is not known yet (its run killed after the request left) is a probable duplicate too", async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    await writeBatch(dir, 'monday.csv', { rows: 2, currencies: ['GBP'], prefix: 'MON' });
    await writeBatch(dir, 'again.csv', { rows: 2, currencies: ['GBP'], prefix: 'AGAIN' });
    const { inProcess, state, results } = cliIn(dir, sb.url);
    await paidEarlier(dir, 'monday.csv');
    // killed once MON-0002's request had left: the service created it, the journal holds its `initiating` line alone
    const [journal] = ledgerJournals(state);
    const lines = (await readFile(journal!, 'utf8')).split('\n');
    const answered = (l: string) => (l.includes('"t":"created"') && l.includes('"ref":"MON-0002"')) || l.includes('"t":"run-end"');
    await writeFile(journal!, lines.filter((l) => !answered(l)).join('\n'));
    expect(await allPayouts(sb)).toHaveLength(2);

    // a re-export under new references, run before that batch is settled (by main() in this process: what it refuses is the case)
    const run = await inProcess('run', 'again.csv', '--yes');
    expect(run.code, run.stdout + run.stderr).toBe(1);
    const refused = await results('again.results.csv');
    expect(refused.map((r) => r.errorCode)).toEqual(['PROBABLE_DUPLICATE', 'PROBABLE_DUPLICATE']);
    expect(refused[1]!.errorMessage).toContain('as MON-0002, sent at this account on');
    expect(await allPayouts(sb)).toHaveLength(2);
  }, 60_000);

  it("a weekly payroll: the same people and amounts as last week's are paid, outside the window", async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    await writeBatch(dir, 'week-1.csv', { rows: 2, currencies: ['GBP'], prefix: 'W1' });
    await writeBatch(dir, 'week-2.csv', { rows: 2, currencies: ['GBP'], prefix: 'W2' });
    const { inProcess, state } = cliIn(dir, sb.url);
    await paidEarlier(dir, 'week-1.csv');
    await ageCreated(state, 7);
    const week2 = await inProcess('run', 'week-2.csv', '--yes');
    expect(week2.code, week2.stdout + week2.stderr).toBe(0);
    expect(await allPayouts(sb)).toHaveLength(4);
    // with a window wider than the week, the same file would have been refused
    await writeBatch(dir, 'week-3.csv', { rows: 2, currencies: ['GBP'], prefix: 'W3' });
    await ageCreated(state, 7);
    const week3 = await inProcess('run', 'week-3.csv', '--yes', '--duplicate-window', '8d');
    expect(week3.code, week3.stdout + week3.stderr).toBe(1);
    expect(await allPayouts(sb)).toHaveLength(4);
  }, 60_000);

  it('a watch folder refuses the file, naming the earlier payout; its allowDuplicates key sends it', async () => {
    sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
    const dir = await dirs.make();
    await writeBatch(dir, 'monday.csv', { rows: 2, currencies: ['GBP'], prefix: 'MON' });
    // the run and the watch share one ledger: the watch's default state folder, DIR/.state
    await paidEarlier(dir, 'monday.csv', join(dir, '.state'));
    const config = { environment: 'sandbox', baseUrl: sb.url, settleSeconds: 0, rate: 200 };
    /** A file dropped, then `watch DIR --once`: spawned, or by main() in this process (`inProcess`). */
    const watch = async (name: string, prefix: string, extra: object = {}, inProcess = false) => {
      await writeFile(join(dir, 'payout-batch.json'), JSON.stringify({ ...config, ...extra }));
      await mkdir(join(dir, 'inbox'), { recursive: true });
      await writeBatch(join(dir, 'inbox'), name, { rows: 2, currencies: ['GBP'], prefix });
      await writeFile(join(dir, 'inbox', `${name}.ready`), '');
      return (inProcess ? runMain : runCli)(['watch', dir, '--once'], {
        cwd: dir,
        env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'usage') }),
      });
    };
    const refused = await watch('again.csv', 'AGAIN');
    expect(refused.stdout + refused.stderr).toContain('PROBABLE_DUPLICATE');
    expect(refused.stdout + refused.stderr).toContain('same beneficiary account, amount and currency as MON-0001');
    expect(await allPayouts(sb)).toHaveLength(2);
    const allowed = await watch('later.csv', 'LATER', { allowDuplicates: ['LATER-0001', 'MON-0002'] }, true);
    expect(allowed.code, allowed.stdout + allowed.stderr).toBe(0);
    expect(await allPayouts(sb)).toHaveLength(4);
  }, 60_000);
});

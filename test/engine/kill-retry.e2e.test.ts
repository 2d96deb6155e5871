// `retry` killed with SIGKILL at seeded points, then retried until it exits 0: the kill campaigns
// kill `run`, this one kills `retry`. A 12-row batch (8 USD, 4 GBP, every 4th row with a document)
// runs once through a front that drains the USD wallet before the first initiate leaves (another
// payment of the business), so the USD rows are refused INSUFFICIENT_FUNDS, under faults (5xx and
// dropped answers after create: unknown outcomes). The wallet is topped up; `retry` of the latest
// results is killed as its Nth initiate arrives (N seeded; the initiate still reaches the sandbox),
// again and again, until one exits 0; then two of its payouts FAIL at the service (refunded), `status`
// sees it, and `retry --resend-failed` goes the same way. At the sandbox: one live payout per row (a
// row is known by its unique amount), the failed ones left failed, no row lost, and the latest
// results file says what the sandbox holds. (A retry that settles a killed one's initiates under a
// new key instead of the journalled one fails it: 22 payouts for 14.)
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { Dec } from '../../src/money.ts';
import { readResults } from '../../src/results/read.ts';
import { mulberry32 } from '../../src/sandbox/faults.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { TEST_SHAPES, bare } from '../shapes.ts';
import { setStatus, until } from '../ops/helpers.ts';
import { startFront, type Front } from './front.ts';
import { KEY, allPayouts, anotherPaymentBody, cleanEnv, runCli, runMain, workDir, writeBatch, type CliRun } from './helpers.ts';

const SEED = 20261130;
const ROWS = 12;
const KILLS = 3; // per phase
let sb: LocalSandbox | undefined;
let front: Front | undefined;
afterAll(async () => {
  await front?.close();
  await sb?.close();
});

const rowKey = (currency: string, amount: string | number) => `${currency} ${new Dec(String(amount)).toFixed(2)}`;

/** The USD wallet, read again until answered (the faults are on). */
async function usdWallet(url: string): Promise<{ walletId: string; balance: string }> {
  for (;;) {
    const r = await fetch(`${url}/v1/payout-api/payouts/wallets`, { headers: { 'x-api-key': KEY } }).catch(() => undefined);
    if (!r?.ok) continue;
    const w = bare<{ data: { walletId: string; currency: string; balance: number | string }[] }>(await r.json()).data.find(
      (x) => x.currency === 'USD',
    )!;
    return { walletId: w.walletId, balance: String(w.balance) };
  }
}

/** Another payment of the business (a key of its own) takes all but 5.00 of the USD wallet: its amount, to leave it out. */
async function drainUsd(url: string): Promise<string> {
  const amount = new Dec((await usdWallet(url)).balance).minus(5).floor().toFixed(2);
  const body = anotherPaymentBody(amount);
  const headers = { 'x-api-key': KEY, 'idempotency-key': 'another-payment', 'content-type': 'application/json' };
  for (;;) {
    const r = await fetch(`${url}/v1/payout-api/payouts/initiate`, { method: 'POST', headers, body }).catch(() => undefined);
    if (r?.status === 201) return amount;
    if (r && r.status < 500 && r.status !== 429) throw new Error(`the draining payment was refused: ${r.status} ${await r.text()}`);
  }
}

describe(`retry killed with SIGKILL at seeded points, then retried to exit 0 (sandbox: ${TEST_SHAPES})`, () => {
  it('refused rows, unknown outcomes and refunded failures: one live payout per row, the results as the sandbox', async () => {
    const random = mulberry32(SEED);
    const sandbox = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null, randomSeed: SEED });
    sb = sandbox;
    const dir = await workDir('pb-kill-retry-');
    await writeBatch(dir, 'payroll.csv', { rows: ROWS, currencies: ['USD', 'GBP'], documentsEvery: 4, prefix: 'KR' });

    // The front: drains the USD wallet before the first initiate goes on; kills the child as its Nth initiate arrives
    // (after its preflight, among its settling resends, proofs and new attempts), then passes that initiate on.
    let drainedAmount: string | undefined;
    let drain: Promise<void> | undefined;
    let child: ChildProcess | undefined;
    let killAt = Infinity;
    let initiates = 0;
    let pending = 0;
    front = await startFront(sandbox.url, async (req, forward) => {
      pending++;
      try {
        if (req.path.endsWith('/initiate') && ++initiates >= killAt) {
          killAt = Infinity;
          child?.kill('SIGKILL');
        }
        if (req.path.endsWith('/initiate')) await (drain ??= drainUsd(sandbox.url).then((amount) => void (drainedAmount = amount)));
        return await forward();
      } finally {
        pending--;
      }
    });
    sandbox.setFaults({ latencyMs: [1, 15], errorAfterCreate: 0.15, dropAfterCreate: 0.1, spurious429: 0.03 });
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
    const conn = ['--base-url', front.url, '--yes', '--rate', '400'];

    // (the first run and the status read below set the scene: by main() in this process; the retries are killed)
    const first = await runMain(['run', 'payroll.csv', ...conn], { cwd: dir, env });
    expect(first.code, first.stdout + first.stderr).not.toBe(0);
    const refused = (await readResults(join(dir, 'payroll.results.csv'))).rows.filter((r) => r.result.errorCode === 'INSUFFICIENT_FUNDS');
    expect(refused.length).toBeGreaterThan(0);
    // the wallet topped up outside the API
    const { walletId } = await usdWallet(sandbox.url);
    const top = await fetch(`${sandbox.url}/_sandbox/wallets/${walletId}/credit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '20000' }),
    });
    expect(top.status).toBe(200);

    // the results file a person retries next: the newest a retry wrote (a killed one writes none)
    const newestResults = () => {
      const n = Math.max(0, ...readdirSync(dir).map((f) => Number(/^payroll\.results\.retry-(\d+)\.csv$/.exec(f)?.[1] ?? 0)));
      return n ? `payroll.results.retry-${n}.csv` : 'payroll.results.csv';
    };
    let latest = newestResults();
    const runs: string[] = [];
    /** `retry` of the latest results, killed KILLS times at its Nth initiate (N seeded, 1 to `most`), then until it exits 0. */
    const retryUntilDone = async (extra: string[], most: number) => {
      let kills = 0;
      for (let round = 0; round < KILLS + 5; round++) {
        const killing = kills < KILLS;
        const after = 1 + Math.floor(random() * most);
        initiates = 0;
        killAt = killing ? after : Infinity;
        const r: CliRun = await runCli(['retry', latest, ...extra, ...conn], { cwd: dir, env, onSpawn: (c) => (child = c) });
        killAt = Infinity;
        runs.push(r.signal ?? `exit ${r.code}`);
        if (r.signal === 'SIGKILL') {
          kills++;
          // the killed child's requests answered before the next one starts
          await until(() => pending === 0 && sandbox.inFlight() === 0, 10_000, 'the killed retry to be answered');
          continue;
        }
        latest = newestResults();
        if (r.code === 0) return kills;
      }
      throw new Error(`no retry exited 0: ${runs.join(', ')}`);
    };

    expect(await retryUntilDone([], 4)).toBeGreaterThan(0);
    // two created payouts fail at the service (refunded there), then are sent again
    const created = (await readResults(join(dir, latest))).rows.filter((r) => r.result.status === 'PENDING');
    const failed = created.slice(0, 2).map((r) => r.result.payoutId!);
    for (const id of failed) await setStatus(sandbox, id, 'FAILED', { reason: 'beneficiary bank returned it' });
    // `status` sees them FAILED and refunded, and says to pay them again with retry --resend-failed
    const status = await runMain(['status', latest, '--base-url', front.url], { cwd: dir, env });
    expect(status.stdout, status.stderr).toContain('--resend-failed');
    expect(await retryUntilDone(['--resend-failed'], 2)).toBeGreaterThan(0);

    sandbox.setFaults({});
    const results = await readResults(join(dir, latest));
    expect(results.rows, runs.join(', ')).toHaveLength(ROWS);
    const payouts = (await allPayouts(sandbox)).filter(
      (p) => !(p.sourceCurrency === 'USD' && new Dec(String(p.sourceAmount)).eq(drainedAmount!)),
    );
    const statusOf = async (id: string) =>
      bare<{ status: string }>(await (await fetch(`${sandbox.url}/v1/payout-api/payouts/${id}`, { headers: { 'x-api-key': KEY } })).json())
        .status;
    // no row lost: every reference once in the latest results
    expect(results.rows.map((r) => r.cells.reference).sort()).toEqual(
      Array.from({ length: ROWS }, (_, i) => `KR-${String(i + 1).padStart(4, '0')}`),
    );
    // one live payout per row at the sandbox, the failed two beside their row's new one
    const perRow = new Map<string, string[]>();
    for (const p of payouts) {
      const k = rowKey(p.sourceCurrency, p.sourceAmount);
      perRow.set(k, [...(perRow.get(k) ?? []), p.id]);
    }
    expect(payouts, runs.join(', ')).toHaveLength(ROWS + failed.length);
    for (const r of results.rows) {
      const live = (perRow.get(rowKey(r.cells.sourceCurrency!, r.cells.sourceAmount!)) ?? []).filter((id) => !failed.includes(id));
      expect(live, `${r.cells.reference} ${runs.join(', ')}`).toHaveLength(1);
      // the latest results name that payout, with the sandbox's status
      expect(r.result.payoutId, r.cells.reference).toBe(live[0]);
      expect(r.result.status, r.cells.reference).toBe(await statusOf(live[0]!));
    }
    for (const id of failed) expect(await statusOf(id)).toBe('FAILED');
  }, 120_000);
});

// Issue 39: a retried row is never paid twice, whichever ledger runs an older copy of the file, in
// both readings of a refused key (the sandbox stores refusals in the variant reading: TEST_SHAPES).
// Alice runs a 3-row payroll; after row 1 another payment of the business drains the USD wallet,
// so rows 2-3 are refused INSUFFICIENT_FUNDS. The wallet is topped up and Alice retries; Bob, from
// his own state folder, and Carol, from a watch folder, run a copy of the original file. One
// payout per row at the sandbox. Bob also runs it without the team ledger Alice used.
import { existsSync } from 'node:fs';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { Dec } from '../../src/money.ts';
import { readResults } from '../../src/results/read.ts';
import { writeResults } from '../../src/results/write.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { testDatabase, withPostgres } from '../pg/database.ts';
import { TEST_SHAPES } from '../shapes.ts';
import { startFront, type Front } from './front.ts';
import { KEY, allPayouts, cleanEnv, cliIn, runCli, runMain, tempDirs, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
let front: Front | undefined;
const dirs = tempDirs('pb-spent-');
afterEach(async () => {
  await front?.close();
  front = undefined;
  await sb?.close();
  sb = undefined;
  await dirs.remove();
});

const AMOUNTS = ['10.00', '5000.00', '5001.00'];
const WALLETS = '/v1/payout-api/payouts/wallets';

/** The sandbox's USD wallet: its id and balance (either reading: `data` with a number or a string). */
async function usdWallet(url: string): Promise<{ walletId: string; balance: string }> {
  const r = (await (await fetch(url + WALLETS, { headers: { 'x-api-key': KEY } })).json()) as {
    data: { walletId: string; currency: string; balance: number | string }[];
  };
  const w = r.data.find((x) => x.currency === 'USD')!;
  return { walletId: w.walletId, balance: String(w.balance) };
}

/**
 * Alice's first run through a front that, once row 1's initiate is answered, pays another payment
 * of the business from the USD wallet (all but 100 USD) before rows 2-3 go on.
 */
async function aliceRunsIntoADrainedWallet(dir: string, env: Record<string, string> = {}) {
  sb = await startSandbox({ shapes: TEST_SHAPES, rateLimitPerSecond: null });
  const service = sb.url;
  await writeBatch(dir, 'pay.csv', { rows: 3, currencies: ['USD'], prefix: 'PAY', amount: (i) => AMOUNTS[i]! });
  let draining = true;
  let release!: () => void;
  const drained = new Promise<void>((r) => (release = r));
  const row1 = idempotencyKey('PAY-0001', 1);
  front = await startFront(service, async (req, forward) => {
    if (!draining || !req.path.endsWith('/initiate')) return forward();
    if (req.headers['idempotency-key'] !== row1) return drained.then(forward);
    const answer = await forward();
    const { balance } = await usdWallet(service);
    const body = { ...(JSON.parse(req.body) as object), sourceAmount: Number(new Dec(balance).minus(100).floor().toFixed()) };
    const other = await fetch(service + '/v1/payout-api/payouts/initiate', {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'idempotency-key': 'another-payment', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(other.status).toBe(201);
    draining = false;
    release();
    return answer;
  });
  const alice = cliIn(dir, front.url, env);
  const run = await alice.inProcess('run', 'pay.csv', '--yes'); // (sets the scene: main() in this process)
  expect(run.code, run.stdout + run.stderr).toBe(1);
  const rows = await alice.results('pay.results.csv');
  expect(rows.map((r) => [r.status, r.errorCode])).toEqual([
    ['PENDING', ''],
    ['FAILED_TO_SEND', 'INSUFFICIENT_FUNDS'],
    ['FAILED_TO_SEND', 'INSUFFICIENT_FUNDS'],
  ]);
  // the wallet is topped up
  const { walletId } = await usdWallet(service);
  const top = await fetch(`${service}/_sandbox/wallets/${walletId}/credit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ amount: '20000' }),
  });
  expect(top.status).toBeLessThan(300);
  return alice;
}

/** Bob, with his own state folder, runs a copy of the original file. */
async function bobRunsTheOriginal(dir: string): Promise<void> {
  const bob = join(dir, 'bob');
  await mkdir(bob);
  await copyFile(join(dir, 'pay.csv'), join(bob, 'payroll-copy.csv'));
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(bob, 'state') });
  const r = await runMain(['run', 'payroll-copy.csv', '--yes', '--base-url', sb!.url], { cwd: bob, env }); // (main() in this process)
  expect(r.code, r.stdout + r.stderr).not.toBe(4);
}

/** Carol drops a copy of the original file in a watch folder, whose ledger is its own (DIR/.state). */
async function carolWatchesTheOriginal(dir: string): Promise<void> {
  const carol = join(dir, 'carol');
  await mkdir(join(carol, 'inbox'), { recursive: true });
  await writeFile(
    join(carol, 'payout-batch.json'),
    JSON.stringify({ environment: 'sandbox', baseUrl: sb!.url, settleSeconds: 1, rate: 200 }),
  );
  await copyFile(join(dir, 'pay.csv'), join(carol, 'inbox', 'payroll.csv'));
  await writeFile(join(carol, 'inbox', 'payroll.csv.ready'), '');
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(carol, 'usage') });
  const r = await runCli(['watch', carol, '--once'], { cwd: carol, env });
  expect(r.code, r.stdout + r.stderr).not.toBe(4);
  expect(r.stdout).toContain('payroll.csv');
}

/** Payouts at the sandbox per row (each row's amount is its own), the other payment left out. */
async function payoutsPerRow(): Promise<number[]> {
  const payouts = await allPayouts(sb!);
  return AMOUNTS.map((a) => payouts.filter((p) => new Dec(String(p.sourceAmount)).eq(a)).length);
}

interface Proof {
  reference: string;
  attempt: number;
  verdict: string;
  steps: { send?: string; answer?: string; code?: string; read?: string; causeGone?: boolean }[];
}

describe(`a retried row is paid once, whoever runs an older copy (sandbox: ${TEST_SHAPES})`, () => {
  it("Alice's retry after a drained wallet, then Bob's run of the original from another state folder and Carol's from a watch folder: one payout per row", async () => {
    const dir = await dirs.make();
    const alice = await aliceRunsIntoADrainedWallet(dir);

    const retry = await alice.cli('retry', 'pay.results.csv', '--yes', '--json');
    expect(retry.code, retry.stdout + retry.stderr).toBe(0);
    const after = await alice.results('pay.results.retry-1.csv');
    expect(after.map((r) => r.status)).toEqual(['PENDING', 'PENDING', 'PENDING']);
    await bobRunsTheOriginal(dir);
    expect(await payoutsPerRow()).toEqual([1, 1, 1]);
    await carolWatchesTheOriginal(dir);
    expect(await payoutsPerRow()).toEqual([1, 1, 1]);

    // what each refused row's key 1 showed, in --json
    const proofs = (JSON.parse(retry.stdout) as { keyProofs: Proof[] }).keyProofs;
    expect(proofs.map((p) => [p.reference, p.attempt])).toEqual([
      ['PAY-0002', 1],
      ['PAY-0003', 1],
    ]);
    if (sb!.storeRefusals) {
      // key 1 answers its refusal again though the wallet covers the row: spent, attempt 2 paid
      for (const p of proofs) {
        expect(p.verdict).toBe('spent');
        expect(p.steps).toEqual([
          { read: 'wallets', causeGone: true },
          { send: 'now', answer: 'refused', code: 'INSUFFICIENT_FUNDS' },
          { read: 'wallets', causeGone: true },
        ]);
      }
      expect(after.slice(1).map((r) => r.idempotencyKey)).toEqual([idempotencyKey('PAY-0002', 2), idempotencyKey('PAY-0003', 2)]);
    } else {
      // key 1 held nothing: the row is paid under it, where any older copy's key 1 finds it
      for (const p of proofs)
        expect([p.verdict, p.steps]).toEqual([
          'paid',
          [
            { read: 'wallets', causeGone: true },
            { send: 'now', answer: 'payout' },
          ],
        ]);
      expect(after.slice(1).map((r) => r.idempotencyKey)).toEqual([idempotencyKey('PAY-0002', 1), idempotencyKey('PAY-0003', 1)]);
    }
  }, 90_000);

  it("the same with Alice's row 2 edited (a fixed account number) before the retry: one payout per row", async () => {
    const dir = await dirs.make();
    const alice = await aliceRunsIntoADrainedWallet(dir);
    const file = join(dir, 'pay.results.csv');
    const table = await readResults(file);
    const row2 = table.rows[1]!;
    row2.cells.accountNumber = `${row2.cells.accountNumber!.slice(0, -1)}${row2.cells.accountNumber!.endsWith('1') ? '2' : '1'}`;
    await writeResults(file, table);

    const retry = await alice.cli('retry', 'pay.results.csv', '--yes', '--json');
    expect(retry.code, retry.stdout + retry.stderr).toBe(0);
    expect((await alice.results('pay.results.retry-1.csv')).map((r) => r.status)).toEqual(['PENDING', 'PENDING', 'PENDING']);
    await bobRunsTheOriginal(dir);
    expect(await payoutsPerRow()).toEqual([1, 1, 1]);

    const proof = (JSON.parse(retry.stdout) as { keyProofs: Proof[] }).keyProofs.find((p) => p.reference === 'PAY-0002')!;
    if (sb!.storeRefusals)
      // the edited body meets the stored refusal (409); the refused body gets it back: spent
      expect([proof.verdict, proof.steps]).toEqual([
        'spent',
        [
          { send: 'now', answer: 'conflict', code: 'IDEMPOTENCY_KEY_CONFLICT' },
          { send: 'journalled', answer: 'refused', code: 'INSUFFICIENT_FUNDS' },
        ],
      ]);
    else expect([proof.verdict, proof.steps]).toEqual(['paid', [{ send: 'now', answer: 'payout' }]]);
  }, 90_000);

  it.runIf(withPostgres)(
    'Alice on the team ledger retries; Bob runs the original without it (his own state folder): one payout per row',
    async () => {
      const dir = await dirs.make();
      const alice = await aliceRunsIntoADrainedWallet(dir, { PAYOUT_BATCH_LEDGER_URL: await testDatabase() });
      const retry = await alice.cli('retry', 'pay.results.csv', '--yes');
      expect(retry.code, retry.stdout + retry.stderr).toBe(0);
      expect((await alice.results('pay.results.retry-1.csv')).map((r) => r.status)).toEqual(['PENDING', 'PENDING', 'PENDING']);
      // Alice's journals are in the database, none in her state folder
      expect(existsSync(join(alice.state, 'ledgers'))).toBe(false);
      await bobRunsTheOriginal(dir);
      expect(await payoutsPerRow()).toEqual([1, 1, 1]);
    },
    90_000,
  );
});

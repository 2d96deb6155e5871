// Chaos campaign: a 1,000-row batch through `payout-batch run` against the sandbox with faults on,
// the CLI killed with SIGKILL at random moments (after a random number of its requests) and
// restarted each time, a 60-second window in which every request answers 5xx (500/502/503), then the same file again under another name, then `retry` of
// the results. Prints what matters to a payer and exits 1 on any miss.
//   npx tsx test/chaos/campaign.ts                  the real limit: sandbox and client at 5/s (long)
//   npx tsx test/chaos/campaign.ts --scale 10       sandbox and client at 50/s (a few minutes)
//   options: --rows N (1000), --kills K (10), --seed S (kill and outage schedule, and the
//            sandbox's fault PRNG), --outage-seconds T (60), --latency MIN-MAX (150-400)
//   --retries  (issue 39) another payment of the business drains the USD wallet once the run is a
//            third through, so its later USD rows are refused INSUFFICIENT_FUNDS; the wallet is
//            topped up, `retry` of the results is killed during its attempt n + 1 (its resends of the
//            refused keys and its new keys) and resumed to exit 0, then a second ledger (another
//            state folder) runs the original file: no payout may follow. With --store-refusals the
//            sandbox binds a refused key to its refusal (the other reading of spec §4.2).
//
// Faults (sandbox FaultConfig, every spec route): latency MIN-MAX ms, errorAfterCreate 0.10 (the
// payout is created, then a 5xx), dropAfterCreate 0.05 (created, then the socket is destroyed),
// spurious429 0.05. The outage: at a random moment, PUT the faults with errorBeforeEffect 1 (every
// request a 500/502/503 before any effect) for T seconds, then back. Monthly quota off (the
// campaign's retries, 429s and restarts are counted against no month).
// Every 10th row has a document (upload-url and storage PUT), the others are withdrawals.
//
// Measured at the end, faults off:
//   payouts expected        valid rows of the file
//   payouts created         payouts of the business at the sandbox
//   duplicates              payouts beyond one per row (a row is known by its unique amount)
//   rows lost               rows with no payout at the sandbox, or not created in the results file
//   balance mismatch        sum over currencies of |opening - closing - results' totalDeductible|
//   max in a rolling second most requests of the key in any 1000 ms of the sandbox's log, every
//                           run, kill, retry and 429 included (target: the limit)
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Dec } from '../../src/money.ts';
import { readResults } from '../../src/results/read.ts';
import type { FaultConfig } from '../../src/sandbox/contract.ts';
import { mulberry32 } from '../../src/sandbox/faults.ts';
import { bare } from '../shapes.ts';
import {
  HEADER,
  KEY,
  allPayouts,
  anotherPaymentBody,
  cleanEnv,
  runCli,
  wallets,
  workDir,
  writeBatch,
  type CliRun,
} from '../engine/helpers.ts';
import { readFlags } from '../bench/args.ts';
import { sandboxProcess } from './sandbox-process.ts';

interface Args {
  scale: number;
  rows: number;
  kills: number;
  seed: number;
  outageSeconds: number;
  latency: [number, number];
  retries: boolean;
  storeRefusals: boolean;
}

function parseArgs(argv: string[]): Args {
  const f = readFlags(argv, ['scale', 'rows', 'kills', 'seed', 'outage-seconds'], ['retries', 'store-refusals'], ['latency']);
  const a: Partial<Args> = {
    scale: f.num('scale'),
    rows: f.num('rows'),
    kills: f.num('kills'),
    seed: f.num('seed'),
    outageSeconds: f.num('outage-seconds'),
    latency: f.range('latency'),
  };
  return {
    scale: a.scale ?? 1,
    rows: a.rows ?? 1000,
    kills: a.kills ?? 10,
    seed: a.seed ?? Date.now() % 1_000_000,
    outageSeconds: a.outageSeconds ?? 60,
    latency: a.latency ?? [150, 400],
    retries: f.flag('retries') ?? false,
    storeRefusals: f.flag('store-refusals') ?? false,
  };
}

/** The key's wallets, read again until answered (the faults are on). */
async function readWallets(url: string): Promise<{ walletId: string; currency: string; balance: number | string }[]> {
  for (;;) {
    const r = await fetch(`${url}/v1/payout-api/payouts/wallets`, { headers: { 'x-api-key': KEY } }).catch(() => undefined);
    if (r?.ok) return bare<{ data: { walletId: string; currency: string; balance: number | string }[] }>(await r.json()).data;
    await sleep(200);
  }
}

/**
 * Another payment of the business (a key of its own, an amount no row has) takes all but `keep` of
 * the USD wallet; sent until answered, the faults being on. Its amount and debit, to leave it out.
 */
async function drainUsd(url: string, keep: Dec): Promise<{ amount: string; debit: Dec }> {
  const headers = { 'x-api-key': KEY, 'content-type': 'application/json' };
  const usd = new Dec(String((await readWallets(url)).find((w) => w.currency === 'USD')!.balance));
  const amount = usd.minus(keep).floor().plus('0.37').toFixed(2);
  const body = anotherPaymentBody(amount);
  for (;;) {
    const r = await fetch(`${url}/v1/payout-api/payouts/initiate`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': 'another-payment' },
      body,
    }).catch(() => undefined);
    if (r?.ok) {
      const p = bare<{ sourceAmount: number | string; transactionFees?: number | string }>(await r.json());
      return { amount, debit: new Dec(String(p.sourceAmount)).plus(new Dec(String(p.transactionFees ?? 0))) };
    }
    if (r && r.status < 500 && r.status !== 429) throw new Error(`the draining payment was refused: ${r.status} ${await r.text()}`);
    await sleep(200);
  }
}

/** A sandbox wallet of the key's business credited (a top-up outside the API). */
async function topUp(url: string, currency: string, amount: Dec): Promise<void> {
  const w = (await readWallets(url)).find((x) => x.currency === currency)!;
  const r = await fetch(`${url}/_sandbox/wallets/${w.walletId}/credit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ amount: amount.toFixed(2) }),
  });
  if (!r.ok) throw new Error(`top-up: ${r.status}`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<number> {
  const a = parseArgs(process.argv.slice(2));
  const limit = 5 * a.scale;
  const random = mulberry32(a.seed); // the campaign's own schedule, replayable with --seed
  const t0 = Date.now();
  const clock = () => `${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s`;
  const base: Partial<FaultConfig> = { latencyMs: a.latency, errorAfterCreate: 0.1, dropAfterCreate: 0.05, spurious429: 0.05 };
  const sb = await sandboxProcess({ rateLimitPerSecond: limit, monthlyQuota: null, randomSeed: a.seed, storeRefusals: a.storeRefusals });
  const dir = await workDir('pb-chaos-');
  let outageTimer: NodeJS.Timeout | undefined;
  try {
    await writeBatch(dir, 'payroll.csv', { rows: a.rows, documentsEvery: 10, prefix: 'CHAOS' });
    const opening = await wallets(sb);
    await sleep(1100); // our reads and the first run never share a rolling second
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
    const conn = ['--base-url', sb.url, '--yes', '--rate', String(limit)];
    const initiates201 = async () => (await sb.requestLog()).filter((r) => r.route === 'initiate' && r.status === 201).length;
    const initiatesSent = async () => (await sb.requestLog()).filter((r) => r.route === 'initiate').length;
    const requests = () => sb.keyRequests();

    // About 2.6 requests per row (quote, initiate, retries; uploads for 1 row in 10) at the limit,
    // capped by 8 requests in flight at the mean latency: the expected length of an unkilled run.
    const inFlightCap = 8 / (((a.latency[0] + a.latency[1]) / 2 + 20) / 1000);
    const expectedS = (a.rows * 2.6) / Math.min(limit * 0.9, inFlightCap);
    const outageAt = 10_000 + random() * Math.max(1, expectedS * 500 - 10_000);
    console.log(
      `Chaos campaign: ${a.rows} rows, sandbox and client at ${limit}/s per key${a.scale > 1 ? ` (scaled x${a.scale})` : ''}, seed ${a.seed}`,
    );
    console.log(
      `faults: latency ${a.latency[0]}-${a.latency[1]} ms, 10% 5xx after create, 5% dropped after create, 5% spurious 429; ` +
        `${a.outageSeconds} s of 503s from ~${(outageAt / 1000).toFixed(0)} s; ${a.kills} SIGKILLs; an unkilled run would take ~${expectedS.toFixed(0)} s`,
    );
    await sb.setFaults(base);
    let outage = 'not yet';
    outageTimer = setTimeout(() => {
      void sb.setFaults({ ...base, errorBeforeEffect: 1 });
      outage = 'on';
      console.log(`${clock()}  outage: every request answers 5xx for ${a.outageSeconds} s`);
      outageTimer = setTimeout(() => {
        void sb.setFaults(base);
        outage = 'over';
        console.log(`${clock()}  outage over`);
      }, a.outageSeconds * 1000);
    }, outageAt);

    // ---- (--retries) the USD wallet drained while the first run not killed sends (a killed one
    // would leave rows in flight that its resume must settle first, more than the wallet holds)
    // (10% of what the file's USD rows pay is left: a run drained while it sends has its later USD
    // rows refused)
    const usdRows = readFileSync(join(dir, 'payroll.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','))
      .filter((c) => c[HEADER.indexOf('sourceCurrency')] === 'USD')
      .reduce((t, c) => t.plus(new Dec(c[HEADER.indexOf('sourceAmount')]!)), new Dec(0));
    let drained: { amount: string; debit: Dec } | undefined;
    const drainAt = sb.keyInitiates() + Math.ceil(a.rows / 3);
    let runFrom = Infinity; // (the initiates when the current run started: drained only once it sends)
    const drainPoll = a.retries
      ? setInterval(() => {
          if (sb.keyInitiates() < drainAt || sb.keyInitiates() - runFrom < 3) return;
          clearInterval(drainPoll);
          void drainUsd(sb.url, usdRows.times('0.1')).then((d) => {
            drained = d;
            console.log(`${clock()}  another payment took USD ${d.amount} from the wallet: the later USD rows are refused`);
          });
        }, 10)
      : undefined;

    // ---- the run, killed K times at random moments, restarted each time
    const runs: CliRun[] = [];
    let kills = 0;
    let finished = false;
    // A kill lands after the child has made a random number of requests (uniform over 1 to 1.5
    // times an even share of the batch's ~2.5 requests per row split K + 2 ways, so that the K
    // kills fall within the batch and leave its end to a run that finishes): at any moment of
    // preflight, sending, retries or the outage, never wasted on the process's startup.
    const share = (a.rows * 2.5) / (a.kills + 2);
    for (let round = 1; round <= a.kills * 4 && !finished; round++) {
      const killing = kills < a.kills;
      const after = 1 + Math.floor(random() * 1.5 * share);
      let killedAt = '';
      const from = requests();
      runFrom = kills >= a.kills ? sb.keyInitiates() : Infinity; // (the first run not killed)
      const started = Date.now();
      let poll: NodeJS.Timeout | undefined;
      const r = await runCli(['run', 'payroll.csv', ...conn, ...(drained ? ['--allow-partial'] : [])], {
        cwd: dir,
        env,
        timeoutMs: 30 * 60_000,
        onSpawn: killing
          ? (child) => {
              poll = setInterval(() => {
                if (requests() - from >= after) {
                  clearInterval(poll);
                  killedAt = `after ${after} requests, ${((Date.now() - started) / 1000).toFixed(1)} s`;
                  child.kill('SIGKILL');
                }
              }, 10);
            }
          : undefined,
      });
      if (poll) clearInterval(poll);
      runFrom = Infinity;
      runs.push(r);
      if (r.signal === 'SIGKILL') kills++;
      // requests the killed process left in flight are answered (and counted) for up to the latency:
      // let them land before the next child's count starts
      if (r.signal === 'SIGKILL') await sleep(a.latency[1] + 100);
      const what = r.signal === 'SIGKILL' ? `SIGKILL ${kills}/${a.kills} ${killedAt}` : `exit ${r.code}`;
      console.log(
        `${clock()}  run ${String(round).padStart(2)}: ${what.padEnd(44)} initiates answered 201 so far: ${await initiates201()}, requests: ${requests()}, outage ${outage}`,
      );
      // (--retries: rows refused INSUFFICIENT_FUNDS end a run with exit 1)
      const ended = r.code === 0 || (a.retries && r.code === 1 && drained !== undefined);
      if (ended && kills >= a.kills) finished = true;
      else if (ended && kills < a.kills) {
        console.log(`${clock()}  the batch finished before the ${a.kills}th kill: ${kills} kills`);
        finished = true;
      } else if (r.code !== null && r.code !== 4 && r.code !== 1) {
        console.log(
          `${clock()}  unexpected exit ${r.code}:\n${r.stdout.slice(-800)}\n${r.stderr
            .split('\n')
            .filter((l) => !l.startsWith('{'))
            .slice(-10)
            .join('\n')}`,
        );
      }
    }
    if (outage !== 'over') {
      console.log(`${clock()}  waiting for the outage window to pass`);
      while (outage !== 'over') await sleep(1000);
      if (!finished) {
        const r = await runCli(['run', 'payroll.csv', ...conn, ...(drained ? ['--allow-partial'] : [])], {
          cwd: dir,
          env,
          timeoutMs: 30 * 60_000,
        });
        runs.push(r);
        finished = r.code === 0 || (a.retries && r.code === 1);
        console.log(`${clock()}  run after the outage: exit ${r.code}`);
      }
    }

    if (drainPoll) clearInterval(drainPoll);
    // ---- (--retries) the wallet topped up, `retry` killed during its attempts n + 1, resumed, then another ledger
    let retried: { runs: string[]; proofs: string; second?: CliRun; secondNew: number } | undefined;
    if (a.retries) {
      if (!drained) throw new Error('the run ended before the wallet was drained: use more --rows');
      await topUp(sb.url, 'USD', new Dec(drained.amount).plus(1000));
      const left = (await readResults(join(dir, 'payroll.results.csv'))).rows.filter((r) => !r.result.payoutId);
      const refused = left.filter((r) => r.result.errorCode === 'INSUFFICIENT_FUNDS');
      console.log(
        `${clock()}  the wallet topped up; ${refused.length} rows refused INSUFFICIENT_FUNDS and ${left.length - refused.length} others to retry`,
      );
      retried = { runs: [], proofs: '', secondNew: 0 };
      const retryKills = Math.max(2, Math.floor(a.kills / 3));
      let killed = 0;
      for (let round = 1; round <= retryKills * 4; round++) {
        const after = 1 + Math.floor(random() * Math.max(2, left.length * 1.5));
        const from = requests();
        const killing = killed < retryKills;
        let poll: NodeJS.Timeout | undefined;
        const r = await runCli(['retry', 'payroll.results.csv', '--out', 'payroll.results.retried.csv', '--json', ...conn], {
          cwd: dir,
          env,
          timeoutMs: 30 * 60_000,
          // (killed among its initiates: after its preflight, while it resends refused keys and sends new ones)
          onSpawn: killing
            ? (child) => {
                let sending: number | undefined;
                poll = setInterval(() => {
                  if (sending === undefined && requests() - from >= 3) sending = requests();
                  if (sending !== undefined && requests() - sending >= after) {
                    clearInterval(poll);
                    child.kill('SIGKILL');
                  }
                }, 5);
              }
            : undefined,
        });
        if (poll) clearInterval(poll);
        if (r.signal === 'SIGKILL') killed++;
        if (r.signal === 'SIGKILL') await sleep(a.latency[1] + 100);
        const what = r.signal === 'SIGKILL' ? `SIGKILL ${killed}/${retryKills}` : `exit ${r.code}`;
        retried.runs.push(what);
        console.log(`${clock()}  retry ${round}: ${what}, requests: ${requests() - from}`);
        if (r.code === 0) {
          const proofs = (JSON.parse(r.stdout) as { keyProofs?: { verdict: string }[] }).keyProofs ?? [];
          const verdicts = new Map<string, number>();
          for (const p of proofs) verdicts.set(p.verdict, (verdicts.get(p.verdict) ?? 0) + 1);
          retried.proofs = [...verdicts].map(([v, n]) => `${n} ${v}`).join(', ') || 'none';
          break;
        }
      }
      // Bob: another state folder, the original file
      const before = (await allPayouts(sb)).length;
      copyFileSync(join(dir, 'payroll.csv'), join(dir, 'payroll-bob.csv'));
      retried.second = await runCli(['run', 'payroll-bob.csv', ...conn], {
        cwd: dir,
        env: cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state-bob') }),
        timeoutMs: 30 * 60_000,
      });
      retried.secondNew = (await allPayouts(sb)).length - before;
      console.log(`${clock()}  another ledger ran the original: exit ${retried.second.code}, new payouts: ${retried.secondNew}`);
    }

    // ---- the same file under another name
    copyFileSync(join(dir, 'payroll.csv'), join(dir, 'payroll-copy.csv'));
    const before2 = await initiates201();
    const second = await runCli(['run', 'payroll-copy.csv', ...conn], { cwd: dir, env, timeoutMs: 30 * 60_000 });
    console.log(
      `${clock()}  same file as payroll-copy.csv: exit ${second.code} (${
        second.stderr
          .split('\n')
          .find((l) => l.includes('refused'))
          ?.slice(0, 140) ?? 'no refusal'
      }), new 201 initiates: ${(await initiates201()) - before2}`,
    );

    // ---- retry of the results
    const before3 = await initiatesSent();
    const results_ = a.retries ? 'payroll.results.retried.csv' : 'payroll.results.csv';
    const retry = await runCli(['retry', results_, ...conn], { cwd: dir, env, timeoutMs: 30 * 60_000 });
    console.log(`${clock()}  retry payroll.results.csv: exit ${retry.code}, initiates sent: ${(await initiatesSent()) - before3}`);

    // ---- the figures (faults off; the limit measured before our own reads)
    if (outageTimer) clearTimeout(outageTimer);
    const log = (await sb.requestLog()).filter((r) => r.apiKey === KEY && r.route !== 'control').sort((x, y) => x.at - y.at);
    let maxRolling = 0;
    for (let i = 0, j = 0; i < log.length; i++) {
      while (log[i]!.at - log[j]!.at >= 1000) j++;
      maxRolling = Math.max(maxRolling, i - j + 1);
    }
    // every rolling second over the limit, to see where it happened (run boundaries are printed above)
    const over: string[] = [];
    for (let i = 0, j = 0; i < log.length; i++) {
      while (log[i]!.at - log[j]!.at >= 1000) j++;
      if (i - j + 1 > limit && (over.length === 0 || !over[over.length - 1]!.startsWith(`${((log[j]!.at - t0) / 1000).toFixed(3)}`))) {
        over.push(
          `${((log[j]!.at - t0) / 1000).toFixed(3)} s: ${log
            .slice(j, i + 1)
            .map((r) => `+${r.at - log[j]!.at}ms ${r.route} ${r.status}`)
            .join(', ')}`,
        );
      }
    }
    await sb.setFaults({});
    await sleep(1100);
    const payouts = await allPayouts(sb);
    const closing = await wallets(sb);
    const results = await readResults(join(dir, results_));
    const rowKey = (currency: string, amount: string | number) => `${currency} ${new Dec(amount).toFixed(2)}`;
    const expected = new Map(results.rows.map((r) => [rowKey(r.cells.sourceCurrency!, r.cells.sourceAmount!), r]));
    const perRow = new Map<string, number>();
    let unexpected = 0;
    for (const p of payouts) {
      if (drained && p.sourceCurrency === 'USD' && new Dec(String(p.sourceAmount)).eq(drained.amount)) continue;
      const k = rowKey(p.sourceCurrency, p.sourceAmount);
      if (!expected.has(k)) unexpected++;
      perRow.set(k, (perRow.get(k) ?? 0) + 1);
    }
    const duplicates = [...perRow.values()].reduce((s, n) => s + Math.max(0, n - 1), 0) + unexpected;
    const created = (s?: string) => !!s && ['PENDING', 'ADDITIONAL_INFO_REQUIRED', 'PROCESSING', 'SUCCESSFUL'].includes(s);
    let lost = 0;
    for (const [k, r] of expected) if (!perRow.has(k) || !created(r.result.status) || !r.result.payoutId) lost++;
    const debited = new Map<string, Dec>();
    for (const r of results.rows) {
      if (!r.result.totalDeductible) continue;
      const c = r.cells.sourceCurrency!;
      debited.set(c, (debited.get(c) ?? new Dec(0)).plus(new Dec(r.result.totalDeductible)));
    }
    let mismatch = new Dec(0);
    const mismatchBy: string[] = [];
    if (drained) debited.set('USD', (debited.get('USD') ?? new Dec(0)).plus(drained.debit).minus(new Dec(drained.amount).plus(1000)));
    for (const [c, open] of opening) {
      const d = new Dec(open)
        .minus(new Dec(closing.get(c) ?? '0'))
        .minus(debited.get(c) ?? 0)
        .abs();
      if (!d.isZero()) mismatchBy.push(`${c} ${d.toFixed(2)}`);
      mismatch = mismatch.plus(d);
    }
    const statusCounts = new Map<number, number>();
    for (const r of log) statusCounts.set(r.status, (statusCounts.get(r.status) ?? 0) + 1);

    console.log('');
    console.log(
      `requests of the key: ${log.length} (by status: ${[...statusCounts]
        .sort((x, y) => x[0] - y[0])
        .map(([s, n]) => `${s}: ${n}`)
        .join(', ')}); runs: ${runs.length} (${kills} killed), then the copy and the retry; ${clock().trim()} in all`,
    );
    const line = (name: string, value: string, target: string, ok: boolean) =>
      console.log(`${name.padEnd(36)}${value.padStart(10)}   target ${target.padEnd(6)} ${ok ? 'ok' : 'MISSED'}`);
    const checks = [
      [`payouts expected`, String(expected.size), '', true],
      [
        `payouts created`,
        String(payouts.length - (drained ? 1 : 0)),
        String(expected.size),
        payouts.length - (drained ? 1 : 0) === expected.size,
      ],
      [`duplicates`, String(duplicates), '0', duplicates === 0],
      [`rows lost`, String(lost), '0', lost === 0],
      [`wallet balance mismatch${mismatchBy.length ? ` (${mismatchBy.join(', ')})` : ''}`, mismatch.toFixed(2), '0.00', mismatch.isZero()],
      [`max requests in any rolling second`, String(maxRolling), `<= ${limit}`, maxRolling <= limit],
      [`SIGKILLs`, String(kills), String(a.kills), kills >= a.kills],
      [`finished (a run exited 0)`, String(finished), 'true', finished],
      [`copy under another name refused`, `exit ${second.code}`, 'exit 3', second.code === 3],
      [`retry of the results`, `exit ${retry.code}`, 'exit 0', retry.code === 0],
      ...(retried
        ? ([
            [`retry killed and resumed (${retried.runs.join(', ')})`, retried.runs.at(-1)!, 'exit 0', retried.runs.at(-1) === 'exit 0'],
            [`  its refused keys (${retried.proofs})`, '', '', true],
            [`another ledger runs the original`, `exit ${retried.second?.code}`, '', true],
            [`  new payouts from it`, String(retried.secondNew), '0', retried.secondNew === 0],
          ] as const)
        : []),
    ] as const;
    for (const [n, v, t, ok] of checks) line(n, v, t, ok);
    if (over.length)
      console.log(`rolling seconds over ${limit} (${over.length}; arrival offsets in the window):\n  ${over.slice(0, 10).join('\n  ')}`);
    const ok = checks.every((c) => c[3]);
    console.log(ok ? 'All targets met.' : 'Some targets MISSED.');
    console.log(
      `replay the schedule: npx tsx test/chaos/campaign.ts ${process.argv
        .slice(2)
        .filter((x, i, xs) => x !== '--seed' && xs[i - 1] !== '--seed')
        .join(' ')} --seed ${a.seed}`.replace(/ +/g, ' '),
    );
    return ok ? 0 : 1;
  } finally {
    if (outageTimer) clearTimeout(outageTimer);
    await sb.close();
  }
}

process.exitCode = await main();

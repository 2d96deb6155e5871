// Chaos scenario (issue 15): a gateway in front of the service answering 408 or 502 with an HTML
// page after the service created the payout (sandbox fault gatewayAfterCreate, on new payouts and
// on the replays of them alike). `payout-batch run`, then `retry` of the results while the gateway
// still misbehaves, then `retry` with the gateway gone. Prints what matters to a payer and exits 1
// on any miss: exactly one payout per reference, nothing FAILED_TO_SEND, no row sent under a second
// attempt (a new key), every row created in the end.
//   npx tsx test/chaos/gateway.ts                   300 rows, 60% of successes answered by the gateway
//   options: --rows N (300), --probability P (0.6), --retries R (3: retries with the gateway on),
//            --rate R (client and sandbox limit, 50), --seed S (the sandbox's fault PRNG),
//            --json (the gateway answers JSON of its own shape instead of HTML)
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readResults } from '../../src/results/read.ts';
import { startSandbox } from '../../src/sandbox/start-sandbox.ts';
import { readFlags } from '../bench/args.ts';
import { allPayouts, cleanEnv, parseIdempotencyKey, runCli, workDir, writeBatch } from '../engine/helpers.ts';

const f = readFlags(process.argv.slice(2), ['rows', 'probability', 'retries', 'rate', 'seed'], ['json']);
const ROWS = f.num('rows') ?? 300;
const P = f.num('probability') ?? 0.6;
const RETRIES = f.num('retries') ?? 3;
const RATE = f.num('rate') ?? 50;
const SEED = f.num('seed') ?? Date.now() % 1_000_000;
const BODY = f.flag('json') ? 'json' : 'html';

async function main(): Promise<number> {
  const sb = await startSandbox({ rateLimitPerSecond: RATE, monthlyQuota: null, randomSeed: SEED });
  const dir = await workDir('pb-chaos-gateway-');
  try {
    console.log(
      `Gateway scenario: ${ROWS} rows, ${(P * 100).toFixed(0)}% of initiate successes answered 408 or 502 (${BODY}) ` +
        `by a gateway after the service acted; client and sandbox at ${RATE}/s; seed ${SEED}`,
    );
    await writeBatch(dir, 'payroll.csv', { rows: ROWS, documentsEvery: 10, prefix: 'GATE' });
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
    const conn = ['--base-url', sb.url, '--yes', '--rate', String(RATE)];
    sb.setFaults({ gatewayAfterCreate: { probability: P, status: [408, 502], body: BODY }, routes: ['initiate'] });

    const t0 = Date.now();
    const rounds: { what: string; code: number | null; unknown: number; failed: number; created: number }[] = [];
    const round = async (what: string, args: string[]) => {
      const r = await runCli([...args, ...conn], { cwd: dir, env, timeoutMs: 30 * 60_000 });
      const latest = (await readdir(dir))
        .filter((n) => /^payroll\.results(\.retry-\d+)?\.csv$/.test(n))
        .sort(byRetry)
        .at(-1)!;
      const rows = (await readResults(join(dir, latest))).rows;
      const count = (s: string) => rows.filter((x) => x.result.status === s).length;
      const created = rows.filter((x) => x.result.payoutId).length;
      rounds.push({ what, code: r.code, unknown: count('UNKNOWN_OUTCOME'), failed: count('FAILED_TO_SEND'), created });
      console.log(
        `${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s  ${what.padEnd(22)} exit ${r.code}  created ${created}, ` +
          `UNKNOWN_OUTCOME ${count('UNKNOWN_OUTCOME')}, FAILED_TO_SEND ${count('FAILED_TO_SEND')}`,
      );
      return latest;
    };
    let latest = await round('run (gateway on)', ['run', 'payroll.csv']);
    for (let i = 1; i <= RETRIES; i++) latest = await round(`retry ${i} (gateway on)`, ['retry', latest]);
    sb.setFaults({});
    latest = await round('retry (gateway gone)', ['retry', latest]);

    // ---- measured, the gateway gone
    const results = (await readResults(join(dir, latest))).rows;
    const payouts = await allPayouts(sb);
    // a row is known at the sandbox by its amount, unique in the batch
    const perAmount = new Map<string, number>();
    for (const p of payouts)
      perAmount.set(`${p.sourceCurrency} ${p.sourceAmount}`, (perAmount.get(`${p.sourceCurrency} ${p.sourceAmount}`) ?? 0) + 1);
    const perRow = results.map((r) => perAmount.get(`${r.cells.sourceCurrency} ${Number(r.cells.sourceAmount)}`) ?? 0);
    const duplicates = perRow.reduce((s, n) => s + Math.max(0, n - 1), 0);
    const lost = perRow.filter((n) => n === 0).length + results.filter((r) => !r.result.payoutId).length;
    const secondAttempts = results.filter((r) => (parseIdempotencyKey(r.result.idempotencyKey ?? '')?.attempt ?? 1) > 1).length;
    const gatewayAnswers = sb.requestLog().filter((e) => e.route === 'initiate' && (e.status === 408 || e.status === 502));
    const everFailed = rounds.reduce((s, r) => s + r.failed, 0);
    const everUnknown = rounds.slice(0, -1).reduce((m, r) => Math.max(m, r.unknown), 0);

    const rowsOut: [string, string | number, boolean][] = [
      ['rows', ROWS, true],
      ['payouts at the sandbox', payouts.length, payouts.length === ROWS],
      [
        'payouts per reference (min-max)',
        `${Math.min(...perRow)}-${Math.max(...perRow)}`,
        Math.min(...perRow) === 1 && Math.max(...perRow) === 1,
      ],
      ['duplicates', duplicates, duplicates === 0],
      ['rows lost', lost, lost === 0],
      ['gateway answers to initiate (408 or 502)', gatewayAnswers.length, true],
      [
        '  of them 408 / 502',
        `${gatewayAnswers.filter((e) => e.status === 408).length} / ${gatewayAnswers.filter((e) => e.status === 502).length}`,
        true,
      ],
      ['most rows UNKNOWN_OUTCOME after a round', everUnknown, true],
      ['rows FAILED_TO_SEND, any round', everFailed, everFailed === 0],
      ['rows sent under a second attempt (new key)', secondAttempts, secondAttempts === 0],
    ];
    console.log('\nFigures (the gateway gone):');
    for (const [what, v, ok] of rowsOut) console.log(`  ${what.padEnd(44)} ${String(v).padStart(8)}  ${ok ? '' : 'MISS'}`);
    const miss = rowsOut.some(([, , ok]) => !ok) || rounds.at(-1)!.code !== 0;
    console.log(miss ? '\nMISS: see the lines marked above' : '\nOK: one payout per reference, every row created, no new keys');
    return miss ? 1 : 0;
  } finally {
    await sb.close();
  }
}

/** payroll.results.csv before payroll.results.retry-1.csv before ...retry-2.csv. */
function byRetry(a: string, b: string): number {
  const n = (s: string) => Number(/retry-(\d+)/.exec(s)?.[1] ?? 0);
  return n(a) - n(b);
}

process.exitCode = await main();

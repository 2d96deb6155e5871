// Swap kill campaign (issue 28): a batch whose USD wallet is short and whose EUR wallet is full
// runs through `payout-batch run --fund-by-swap`, killed with SIGKILL at random instants around
// the swap and the first rows (after 1 to N of the CLI's own requests: preflight, the swaps list,
// the pairs, the swap, the wallets, the first initiates), restarted each time, then run to its
// end. N scales with the batch unless --max-after fixes it: P (the preflight's requests, counted
// by a `plan` first) plus what the batch still needs beyond its preflight (rows + 4, less what the
// runs before did beyond theirs) shared among the kills left, so every kill lands before the end. Faults on the swap and the initiates: 10% 5xx after create, 5% dropped after create, and
// the rate moving once between a pairs read and the swap. Prints the figures, exits 1 on a miss.
//   npx tsx test/chaos/swap-campaign.ts [--kills K (10)] [--rows N (12)] [--seed S] [--max-after N (scaled)]
//
// Measured at the end, faults off:
//   swaps with the batch's reference   exactly 1 (and no other swap of the business)
//   payouts per row                    exactly 1 (a row is known by its currency and unique amount)
//   rows created in the results        every row
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Dec } from '../../src/money.ts';
import { readResults } from '../../src/results/read.ts';
import type { FaultConfig } from '../../src/sandbox/contract.ts';
import { mulberry32 } from '../../src/sandbox/faults.ts';
import { KEY, ROOT, allPayouts, cleanEnv, runCli, swapReferenceOfCsv, workDir, writeBatch } from '../engine/helpers.ts';
import { readFlags } from '../bench/args.ts';
import { sandboxProcess } from './sandbox-process.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every swap of the key's business, as the swaps list gives them (100 a page). */
async function allSwaps(url: string): Promise<{ payoutRef: string; status: string; destinationAmount: number }[]> {
  const out: { payoutRef: string; status: string; destinationAmount: number }[] = [];
  for (let page = 1; ; page++) {
    const r = await fetch(`${url}/v1/payout-api/payouts/swaps?page=${page}&limit=100`, { headers: { 'x-api-key': KEY } });
    const body = (await r.json()) as { data: typeof out; meta: { total: number } };
    out.push(...body.data);
    if (body.data.length === 0 || page * 100 >= body.meta.total) return out;
  }
}

async function main(): Promise<number> {
  const f = readFlags(process.argv.slice(2), ['kills', 'rows', 'seed', 'max-after']);
  const [kills, rows, fixedAfter] = [f.num('kills') ?? 10, f.num('rows') ?? 12, f.num('max-after')];
  const seed = f.num('seed') ?? Date.now() % 1_000_000;
  const random = mulberry32(seed);
  // The default seed, the USD wallet short of the batch's USD rows, EUR full, GBP rows beside.
  const world = JSON.parse(readFileSync(join(ROOT, 'src/sandbox/default-seed.json'), 'utf8')) as {
    businesses: { wallets: { currency: string; balance: string }[] }[];
  };
  for (const w of world.businesses[0]!.wallets) if (w.currency === 'USD') w.balance = '10.00';
  const sb = await sandboxProcess({ seed: world, rateLimitPerSecond: 50, monthlyQuota: null, randomSeed: seed });
  const dir = await workDir('pb-swap-chaos-');
  const t0 = Date.now();
  const clock = () => `${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s`;
  try {
    const file = await writeBatch(dir, 'payroll.csv', { rows, currencies: ['USD', 'GBP'], prefix: 'SWAPCHAOS' });
    const reference = swapReferenceOfCsv(file, 'USD');
    const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
    const args = ['run', 'payroll.csv', '--fund-by-swap', '--yes', '--base-url', sb.url, '--rate', '50'];
    const faults: Partial<FaultConfig> = {
      latencyMs: [20, 80],
      errorAfterCreate: 0.1,
      dropAfterCreate: 0.05,
      routes: ['swap', 'initiate'],
      rateMoveAfterPairsRead: { pct: 0.3, times: 1 },
    };
    const planned = sb.keyRequests();
    const plan = await runCli(['plan', ...args.slice(1, 2), ...args.slice(4)], { cwd: dir, env });
    if (plan.code !== 0 && plan.code !== 1) throw new Error(`plan: exit ${plan.code}\n${plan.stderr}`);
    const preflight = sb.keyRequests() - planned;
    let left = rows + 4;
    const maxAfter = () => fixedAfter ?? preflight + Math.max(1, Math.ceil(left / Math.max(1, kills - killed)));
    await sb.setFaults(faults);
    console.log(
      `Swap kill campaign: ${rows} rows (USD short, EUR full, GBP), ${kills} SIGKILLs after 1-${fixedAfter ?? `(${preflight} + what is left / kills left)`} requests, seed ${seed}`,
    );
    let killed = 0;
    let finished = false;
    const exits: string[] = [];
    for (let round = 1; round <= kills + 6 && !finished; round++) {
      const killing = killed < kills;
      const after = 1 + Math.floor(random() * maxAfter());
      const from = sb.keyRequests();
      let poll: NodeJS.Timeout | undefined;
      const r = await runCli(args, {
        cwd: dir,
        env,
        timeoutMs: 5 * 60_000,
        onSpawn: killing
          ? (child) => {
              poll = setInterval(() => {
                if (sb.keyRequests() - from < after) return;
                clearInterval(poll);
                child.kill('SIGKILL');
              }, 2);
            }
          : undefined,
      });
      clearInterval(poll);
      left = Math.max(1, left - Math.max(0, sb.keyRequests() - from - preflight));
      if (r.signal === 'SIGKILL') killed++;
      if (r.signal === 'SIGKILL') await sleep(200); // its last requests land before the next run counts
      const swaps = (await allSwaps(sb.url)).filter((s) => s.payoutRef === reference).length;
      const what = r.signal === 'SIGKILL' ? `SIGKILL ${killed} after ${after} requests` : `exit ${r.code}`;
      exits.push(what);
      console.log(`${clock()}  run ${String(round).padStart(2)}: ${what.padEnd(30)} swaps with the reference: ${swaps}`);
      if (r.code !== null && r.code !== 0 && r.code !== 4)
        console.log(
          `  ${(r.stdout + r.stderr)
            .split('\n')
            .filter((l) => l && !l.startsWith('{'))
            .slice(-4)
            .join('\n  ')}`,
        );
      finished = r.code === 0 && killed >= kills;
    }
    await sb.setFaults({});
    const swaps = await allSwaps(sb.url);
    const mine = swaps.filter((s) => s.payoutRef === reference);
    const results = await readResults(join(dir, 'payroll.results.csv'));
    const rowKey = (currency: string, amount: string | number) => `${currency} ${new Dec(amount).toFixed(2)}`;
    const perRow = new Map<string, number>();
    for (const p of await allPayouts(sb))
      perRow.set(rowKey(p.sourceCurrency, p.sourceAmount), (perRow.get(rowKey(p.sourceCurrency, p.sourceAmount)) ?? 0) + 1);
    const expected = results.rows.map((r) => rowKey(r.cells.sourceCurrency!, r.cells.sourceAmount!));
    const duplicates =
      [...perRow.values()].reduce((n, c) => n + Math.max(0, c - 1), 0) + [...perRow.keys()].filter((k) => !expected.includes(k)).length;
    const lost = results.rows.filter(
      (r) => !r.result.payoutId || !perRow.has(rowKey(r.cells.sourceCurrency!, r.cells.sourceAmount!)),
    ).length;
    const usdRows = results.rows.filter((r) => r.cells.sourceCurrency === 'USD').length;
    const checks: [string, string, string, boolean][] = [
      ['SIGKILLs', String(killed), `>= ${kills}`, killed >= kills],
      ['a run finished (exit 0)', String(finished), 'true', finished],
      ['swaps with the batch reference', String(mine.length), '1', mine.length === 1],
      ['swaps of the business', String(swaps.length), '1', swaps.length === 1],
      [
        `rows (${usdRows} USD) / payouts`,
        `${expected.length} / ${[...perRow.values()].reduce((a, b) => a + b, 0)}`,
        'equal',
        duplicates === 0 && lost === 0,
      ],
      ['duplicates', String(duplicates), '0', duplicates === 0],
      ['rows lost', String(lost), '0', lost === 0],
    ];
    console.log('');
    for (const [n, v, t, ok] of checks) console.log(`${n.padEnd(34)}${v.padStart(10)}   target ${t.padEnd(6)} ${ok ? 'ok' : 'MISSED'}`);
    console.log(`the swap: ${mine.map((s) => `${s.status} ${s.destinationAmount} USD`).join(', ') || 'none'}; ${clock().trim()} in all`);
    const ok = checks.every((c) => c[3]);
    console.log(ok ? 'All targets met.' : 'Some targets MISSED.');
    console.log(
      `replay: npx tsx test/chaos/swap-campaign.ts --kills ${kills} --rows ${rows}${fixedAfter ? ` --max-after ${fixedAfter}` : ''} --seed ${seed}`,
    );
    return ok ? 0 : 1;
  } finally {
    await sb.close();
  }
}

process.exitCode = await main();

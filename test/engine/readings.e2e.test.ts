// The same payroll against the two readings of the spec the sandbox answers in (issue 14): the
// strict one, and the variant one that answers every "not shown" part in another plausible shape
// (envelopes, amounts as decimal strings, a tiered fee object, names instead of descriptors, an
// initiate answer carrying only what the spec promises). The client must pay every row exactly
// once and write the same money into the results file either way.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readResults } from '../../src/results/results.ts';
import { startSandbox, type LocalSandbox, type SandboxShapes } from '../../src/sandbox/start-sandbox.ts';
import { Dec, fromApi } from '../../src/money.ts';
import { cleanEnv, initiates, runCli, runMain, workDir, writeBatch } from './helpers.ts';

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const ROWS = 18;

/** Runs the payroll against a sandbox in one reading (as a process, or by main() in this process); what the results file says and the sandbox holds. */
async function payIn(shapes: SandboxShapes, how: typeof runCli | typeof runMain = runCli) {
  sb = await startSandbox({ shapes, rateLimitPerSecond: null });
  const dir = await workDir(`pb-readings-${shapes}-`);
  // every third row with its documents (uploads, a PATCH of the rest), the others withdrawals
  await writeBatch(dir, 'payroll.csv', { rows: ROWS, documentsEvery: 3 });
  const env = cleanEnv({ PAYOUT_BATCH_STATE_DIR: join(dir, 'state') });
  const run = (...args: string[]) => how([...args, '--base-url', sb!.url, '--rate', '100'], { cwd: dir, env });

  const first = await run('run', 'payroll.csv', '--yes');
  expect(first.code, first.stderr).toBe(0);
  const sent = initiates(sb).length;
  // a second run finds every payout created and sends nothing (by main() in this process)
  const again = await runMain(['run', 'payroll.csv', '--yes', '--base-url', sb.url, '--rate', '100'], { cwd: dir, env });
  expect(again.code, again.stderr).toBe(0);
  expect(initiates(sb).length).toBe(sent);

  const table = await readResults(join(dir, 'payroll.results.csv'));
  const byCurrency = new Map<string, { amount: Dec; fees: Dec; total: Dec }>();
  const fees: string[] = [];
  for (const row of table.rows) {
    const r = row.result;
    expect(r.status, JSON.stringify(r)).toBe('PENDING');
    expect(r.payoutId).toBeTruthy();
    expect(r.payoutRef).toBeTruthy();
    expect(r.fee, `row ${row.rowNumber}: the fee the service applied`).toMatch(/^\d+\.\d+$/);
    const c = row.cells.sourceCurrency!;
    const t = byCurrency.get(c) ?? { amount: new Dec(0), fees: new Dec(0), total: new Dec(0) };
    byCurrency.set(c, {
      amount: t.amount.plus(fromApi(row.cells.sourceAmount!)),
      fees: t.fees.plus(fromApi(r.fee!)),
      total: t.total.plus(fromApi(r.totalDeductible!)),
    });
    fees.push(`${row.cells.reference} ${r.fee} ${r.totalDeductible} ${r.destinationAmount}`);
  }
  const totals = Object.fromEntries(
    [...byCurrency].map(([c, t]) => [c, { amount: t.amount.toFixed(), fees: t.fees.toFixed(), total: t.total.toFixed() }]),
  );
  // one payout per row at the sandbox, whatever the initiate answer carried
  const payoutIds = new Set(table.rows.map((r) => r.result.payoutId));
  expect(payoutIds.size).toBe(ROWS);
  return { totals, fees: fees.sort(), payouts: sb.requestLog().filter((e) => e.route === 'initiate' && e.status < 300).length };
}

describe('a clean payroll under both readings of the spec', () => {
  it('pays every row exactly once, with the same totals in the results file', async () => {
    const strict = await payIn('strict');
    await sb!.close();
    sb = undefined;
    const variant = await payIn('variant', runMain); // (what the client makes of the answers, not a process)
    expect(strict.payouts).toBe(ROWS);
    expect(variant.payouts).toBe(ROWS);
    expect(variant.totals).toEqual(strict.totals);
    expect(variant.fees).toEqual(strict.fees);
  });
});

// `plan --out` quotes once per quote group (plan-command.ts planRows). A refused quote is the row's
// own (an amount that converts to nothing): its group is quoted once more with the next row's
// amount, and a row whose own amount was never quoted is never given another row's refusal as its own.
import { afterEach, expect, it } from 'vitest';
import { join } from 'node:path';
import { planBatch } from '../../src/engine/plan-command.ts';
import { startSandbox, type LocalSandbox } from '../../src/sandbox/start-sandbox.ts';
import { connectionTo } from '../ops/helpers.ts';
import { workDir, writeBatch } from './helpers.ts';

const PLAN_FLAGS = { mergeDocuments: false, allowPartial: false, enablePairs: false };

let sb: LocalSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

/** Plans 4 GBP rows (2 to 5) of one quote group (10.00, 11.00, ...), the quotes of the amounts `refused` answered 400. */
async function plan(refused: (amount: number) => boolean) {
  sb = await startSandbox({ rateLimitPerSecond: null });
  const quoted: number[] = [];
  const f: typeof fetch = async (input, init) => {
    if (!String(input instanceof Request ? input.url : input).endsWith('/quote')) return fetch(input, init);
    const body = await new Response(init?.body).text();
    const amount = (JSON.parse(body) as { sourceAmount: number }).sourceAmount;
    quoted.push(amount);
    if (!refused(amount)) return fetch(input, init);
    const refusal = { statusCode: 400, message: `sourceAmount ${amount} converts to 0: too small to send` };
    return new Response(JSON.stringify(refusal), { status: 400, headers: { 'content-type': 'application/json' } });
  };
  const dir = await workDir();
  const file = await writeBatch(dir, 'batch.csv', { rows: 4, currencies: ['GBP'], amount: (i) => `${10 + i}.00` });
  const r = await planBatch({
    file,
    conn: connectionTo(sb, f),
    stateDir: join(dir, 'state'),
    quote: true,
    out: join(dir, 'p.json'),
    ...PLAN_FLAGS,
  });
  const rows = r.planFile!.rows;
  return { r, quoted, fees: rows.map((x) => x.fee ?? '') };
}

it("the first row's amount refused: that row alone has the error, the group is quoted with the next row's amount", async () => {
  const { r, quoted, fees } = await plan((amount) => amount === 10);
  expect(quoted).toEqual([10, 11]);
  expect([...r.quoteErrors.keys()]).toEqual([2]);
  expect(r.quoteErrors.get(2)).toMatch(/400: sourceAmount 10 converts to 0/);
  expect(fees.slice(1).every((fee) => fee !== '')).toBe(true);
});

it("refused again with the next row's amount: no third quote; the rows not quoted say which rows' amounts failed", async () => {
  const { r, quoted } = await plan(() => true);
  expect(quoted).toEqual([10, 11]);
  expect(r.quoteErrors.get(2)).toMatch(/^quote \(POST [^)]*\): 400: sourceAmount 10 converts to 0/);
  expect(r.quoteErrors.get(3)).toMatch(/^quote \(POST [^)]*\): 400: sourceAmount 11 converts to 0/);
  for (const n of [4, 5])
    expect(r.quoteErrors.get(n)).toMatch(
      /^not quoted: its group's quote failed with the amount of row 2, then of row 3: quote .*sourceAmount 11/,
    );
});

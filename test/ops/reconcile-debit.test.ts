// Spec §2 calls a payout's sourceAmount the "amount debited from the source wallet": the sandbox's
// variant reading answers it with the fee added. Where the results hold no totalDeductible (the
// run stopped before the service gave the fee), reconcile expects the debit from the payout as
// listed: the amount plus its fee, counted once in either reading.
import { describe, expect, it } from 'vitest';
import { reconcile } from '../../src/follow-up/reconciliation.ts';
import { readResults, writeResults } from '../../src/results/results.ts';
import { connectionTo, paidBatch, startSb } from './helpers.ts';

describe('reconcile of rows without a totalDeductible', () => {
  // (statement-fuzz: an amount typed "1'234.56", as the run read it, or the variant's debit was expected with its fee twice)
  it.each([
    ['strict', undefined],
    ['variant', undefined],
    ['variant', "1'234.56"],
  ] as const)('ties out, the fee counted once (%s reading, amount %s)', async (shapes, typed) => {
    const sb = await startSb({ shapes });
    try {
      const b = await paidBatch(sb, { rows: 2, ...(typed ? { amount: () => typed } : {}) });
      const table = await readResults(b.results);
      const rows = table.rows.map((r) => ({ ...r, result: { ...r.result, fee: undefined, totalDeductible: undefined } }));
      await writeResults(b.results, { ...table, rows });
      const rc = await reconcile({ client: connectionTo(sb).client, resultsFile: b.results });
      expect(rc.report?.problems).toEqual([]);
      expect(rc.kind).toBe('ok');
      expect(rc.report?.counts).toMatchObject({ created: 2, tiedOut: 2 });
    } finally {
      await sb.close();
    }
  });
});

// `attach REFERENCE --results FILE` finds the payout on the row of that reference: a row whose result
// columns were sorted apart from its cells holds another payment's payout, never given documents.
import { describe, expect, it } from 'vitest';
import { payoutIdOf } from '../../src/follow-up/attach-documents.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import { connectionTo, paidBatch, sortApart, startSb } from './helpers.ts';

describe('attach by reference in a results file whose batch columns were sorted apart from its result columns', () => {
  it("is refused naming the row, never given another row's payout", async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 2 });
      const o = { resultsFile: b.results, ledgers: [ledgerOf(connectionTo(sb))] };
      expect(await payoutIdOf('GEN-0002', o)).toMatchObject({ payoutId: b.ids[1] });
      await sortApart(b.results);
      await expect(payoutIdOf('GEN-0002', o)).rejects.toMatchObject({ message: expect.stringMatching(/ row 2: .*GEN-0002.*GEN-0001/) });
    } finally {
      await sb.close();
    }
  });
});

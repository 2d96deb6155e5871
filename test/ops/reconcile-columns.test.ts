// `reconcile` of a batch whose columns bear an export's names ("Payment Reference", "Currency"):
// each row is named by its reference, as `status` and the statement name it.
import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { reconcile } from '../../src/follow-up/reconciliation.ts';
import { connectionTo, paidBatch, startSb } from './helpers.ts';

describe('reconcile of a batch with export column names', () => {
  it('names each row by its reference', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 2 });
      const text = await readFile(b.results, 'utf8');
      await writeFile(b.results, text.replace('reference,sourceAmount,sourceCurrency,', 'Payment Reference,Amount,Currency,'));
      const rc = await reconcile({ client: connectionTo(sb).client, resultsFile: b.results });
      expect(rc.report?.rows.map((r) => [r.reference, r.currency])).toEqual([
        ['GEN-0001', 'GBP'],
        ['GEN-0002', 'GBP'],
      ]);
    } finally {
      await sb.close();
    }
  });
});

// payroll.csv run every month in one folder writes payroll.results.csv again: each month's results
// file is its own batch's (the journal that sent its keys), never an earlier month's whose header
// names the same path, for the report's batch id, the pain.002's and `status`/`reconcile`'s swaps.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { runBatch } from '../../src/engine/pipeline.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import { writeResultsReport } from '../../src/report/write-report.ts';
import { connectionTo, startSb, unattended, workDir, writeBatch } from './helpers.ts';

describe('a results path written again by next month’s batch', () => {
  it("is reported under that month's batch id", async () => {
    const sb = await startSb();
    try {
      const dir = await workDir('pb-ops-');
      for (const [m, prefix] of ['JAN', 'FEB', 'MAR', 'APR'].entries()) {
        const amount = (i: number) => `${m * 10 + i + 11}.25`;
        const file = await writeBatch(dir, 'payroll.csv', { rows: 2, currencies: ['GBP'], prefix, amount });
        const r = await runBatch({ file, conn: connectionTo(sb), ...unattended({ settleDelayMs: 10 }) });
        expect(r.kind).toBe('ok');
        const report = await writeResultsReport(r.resultsPath, { ledgers: [ledgerOf(connectionTo(sb))] });
        expect(await readFile(report, 'utf8'), prefix).toContain(`data-field="header-batchId">${r.batchId}<`);
      }
    } finally {
      await sb.close();
    }
  });
});

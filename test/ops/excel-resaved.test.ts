// A results file re-saved by a spreadsheet before `status` or `reconcile` reads it back: amounts
// written with a decimal comma (Excel in a European locale, `;` between cells) are no amounts to
// count, said as a problem; never read as a hundred times what was paid.
import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import { reconcile } from '../../src/follow-up/reconciliation.ts';
import { connectionTo, paidBatch, startSb } from './helpers.ts';

/** As Excel saves a CSV where the comma is the decimal mark: `;` between cells, "12,00". */
const europeanCsv = (text: string): string =>
  text
    .split(/\r?\n/)
    .map((line) =>
      line
        .split(',')
        .map((cell) => cell.replace(/^(-?\d+)\.(\d+)$/, '$1,$2'))
        .join(';'),
    )
    .join('\r\n');

describe('a results file re-saved with decimal commas', () => {
  it('status and reconcile say its amounts cannot be read, never count them a hundred times over', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 2 });
      await writeFile(b.results, europeanCsv(await readFile(b.results, 'utf8')));
      expect(await readFile(b.results, 'utf8')).toMatch(/;PENDING;.*;2,00;12,00;10,00;/);

      const st = await refreshStatus({ client: connectionTo(sb).client, resultsFile: b.results });
      expect(st.money.GBP?.debited).not.toBe('2501.00');
      expect(st.moneyProblems).toEqual([
        'row 2: totalDeductible "12,00" is not an amount: its payout is not counted',
        'row 3: totalDeductible "13,01" is not an amount: its payout is not counted',
      ]);
      expect(st.kind).toBe('rows-failed');

      const rc = await reconcile({ client: connectionTo(sb).client, resultsFile: b.results });
      expect(rc.report?.problems.join('\n')).not.toMatch(/1200\.00|2501\.00/);
      expect(rc.report?.problems).toContain('row 2 GEN-0001: totalDeductible "12,00" is not an amount');
    } finally {
      await sb.close();
    }
  });
});

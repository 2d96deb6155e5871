// A results file re-saved by a spreadsheet before `status`, `reconcile` or `listen` reads it back:
// amounts written with a decimal comma (Excel in a European locale, `;` between cells) are no
// amounts to count, said as a problem, never read as a hundred times what was paid; a file saved as
// UTF-16 ("Unicode Text") takes `listen`'s statuses as a UTF-8 one does.
import { createHmac, randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import { reconcile } from '../../src/follow-up/reconciliation.ts';
import { startListener } from '../../src/follow-up/webhook-receiver.ts';
import { readResults, writeResults } from '../../src/results/results.ts';
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

describe("a batch's amounts typed with thousands marks, their fees not told", () => {
  it('status counts each payout\'s amount as the run read it ("1\'234.56" is 1234.56), never left out', async () => {
    // (statement-fuzz: the report left such amounts out; status does when the service gave no fee)
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 2, amount: () => "1'234.56" });
      const t = await readResults(b.results);
      for (const r of t.rows) {
        delete r.result.fee;
        delete r.result.totalDeductible;
      }
      await writeResults(b.results, t);

      const st = await refreshStatus({ client: connectionTo(sb).client, resultsFile: b.results });
      expect(st.moneyProblems).toEqual([]);
      expect(st.money.GBP).toMatchObject({ payouts: 2, debited: '2469.12', feesNotKnown: 2 });
    } finally {
      await sb.close();
    }
  });
});

describe('a results file re-saved as UTF-16 text', () => {
  it('listen applies a status to it', async () => {
    const sb = await startSb();
    const secret = 'whsec_resaved_0123456789abcdef';
    try {
      const b = await paidBatch(sb, { rows: 2 });
      // Excel's "Unicode Text": UTF-16LE with a BOM, a tab between cells
      const text = (await readFile(b.results, 'utf8')).replace(/^\uFEFF/, '').replace(/,/g, '\t');
      const txt = b.results.replace(/\.csv$/, '.txt');
      await writeFile(txt, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
      const listener = await startListener({ port: 0, secret, stateDir: join(b.dir, 'listen-state'), results: [txt] });
      try {
        const at = new Date().toISOString();
        const data = { payoutId: b.ids[0], businessId: 'biz', oldStatus: 'PENDING', newStatus: 'PROCESSING', changedAt: at };
        const body = JSON.stringify({ eventType: 'payout.status.changed', deliveryId: randomUUID(), occurredAt: at, data });
        const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
        const headers = { 'content-type': 'application/json', 'x-service-delivery-id': randomUUID(), 'x-service-signature': signature };
        expect((await fetch(listener.url, { method: 'POST', headers, body })).status).toBe(200);
        await listener.idle();
      } finally {
        await listener.close();
      }
      expect((await readResults(txt)).rows.map((r) => r.result.status)).toEqual(['PROCESSING', 'PENDING']);
    } finally {
      await sb.close();
    }
  });
});

describe('a results file with a row copied (the same payout on two rows)', () => {
  it('status counts the payout once and says which rows name it', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 2 });
      const lines = (await readFile(b.results, 'utf8')).trimEnd().split('\n');
      await writeFile(b.results, [...lines, lines[1]].join('\n') + '\n');
      const st = await refreshStatus({ client: connectionTo(sb).client, resultsFile: b.results });
      expect(st.money.GBP?.debited).toBe('25.01');
      expect(st.moneyProblems).toEqual([expect.stringMatching(/^row 4: payout \S+ is row 2's too: counted once$/)]);
    } finally {
      await sb.close();
    }
  });
});

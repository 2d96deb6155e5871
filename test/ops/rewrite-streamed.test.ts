// `status` and `listen` rewrite a results file a row at a time (its rows wait in a file, not in
// memory): the file written is the one the whole table would have given, byte for byte; a file that
// cannot be read to its end is left as it was; and `listen` finds a payout id however the file's
// pieces fall.
import { appendFileSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyStatus, type StatusUpdate } from '../../src/follow-up/apply-status.ts';
import { startListener } from '../../src/follow-up/webhook-receiver.ts';
import { refreshStatus } from '../../src/follow-up/refresh-status.ts';
import { ledgerOf } from '../../src/ledger/open.ts';
import { readResults, writeResults, type ResultRow, type ResultsTable } from '../../src/results/results.ts';
import { tempDir } from '../results/helpers.ts';
import { applyToTable, connectionTo, paidBatch, setStatus, startSb } from './helpers.ts';

const tmp = tempDir('pb-rewrite-streamed-');
afterAll(tmp.cleanup);
/** No journal anywhere: the state roots are an empty folder. */
const o = () => ({ stateRoots: [tmp.path('state')] });

const ROWS = 2_500;
const row = (i: number, padding = ''): ResultRow => ({
  rowNumber: i + 2,
  cells: {
    reference: `REF-${i}`,
    sourceAmount: `${i}.50`,
    // quotes, the delimiter, a line break, accents, a formula-looking cell
    narration: i % 7 ? `Salaire "janvier"; ligne\r\n${i} é` : `=HYPERLINK("x")${padding}`,
  },
  result: { status: 'PENDING', payoutId: `po_${i}`, idempotencyKey: `pb3-${'0'.repeat(32)}-${i}`, updatedAt: '2025-01-01T00:00:00Z' },
});
const table = (format: 'csv' | 'xlsx'): ResultsTable => ({
  format,
  inputColumns: ['reference', 'sourceAmount', 'narration'],
  delimiter: format === 'csv' ? ';' : undefined,
  // po_3 is on two rows
  rows: [...Array.from({ length: ROWS }, (_, i) => row(i)), { ...row(3), rowNumber: ROWS + 2 }],
});
const update = (payoutId: string, status: string, at: string, more: Partial<StatusUpdate> = {}): StatusUpdate => ({
  payoutId,
  status,
  at,
  source: 'webhook',
  ...more,
});
const UPDATES = [
  update('po_2400', 'PROCESSING', '2025-01-02T00:00:00Z'),
  update('po_3', 'FAILED', '2025-01-03T00:00:00Z', { reason: 'account closed' }), // a column no row had
  update('po_10', 'ADDITIONAL_INFO_REQUIRED', '2025-01-02T00:00:00Z', {
    informationRequests: [
      { title: 'An invoice', type: 'DOCUMENT', description: undefined, section: undefined, rejectionReason: undefined },
    ],
  }),
  update('po_2400', 'SUCCESSFUL', '2025-01-04T00:00:00Z'),
  update('po_11', 'PENDING', '2024-12-31T00:00:00Z'), // older: not applied
  update('po_none', 'PROCESSING', '2025-01-02T00:00:00Z'),
];

describe('a results file rewritten a row at a time', () => {
  for (const format of ['csv', 'xlsx'] as const) {
    it(`${format}: holds the bytes the whole table would have been written as, every row, and the same changes in the updates' order`, async () => {
      const p = tmp.path(`streamed.results.${format}`);
      const whole = tmp.path(`whole.results.${format}`);
      await writeResults(p, table(format));
      copyFileSync(p, whole);

      const r = await applyStatus([{ file: p }], UPDATES, o());
      const t = await readResults(whole);
      const expected = applyToTable(t, p, UPDATES);
      await writeResults(whole, t);

      expect(readFileSync(p).equals(readFileSync(whole))).toBe(true);
      const back = await readResults(p);
      expect(back).toEqual(await readResults(whole));
      expect(back.rows).toHaveLength(ROWS + 1);
      expect(r).toEqual(expected);
      expect(r.applied.map((c) => [c.payoutId, c.rowNumber, c.to])).toEqual([
        ['po_2400', 2402, 'PROCESSING'],
        ['po_3', 5, 'FAILED'],
        ['po_3', ROWS + 2, 'FAILED'],
        ['po_10', 12, 'ADDITIONAL_INFO_REQUIRED'],
        ['po_2400', 2402, 'SUCCESSFUL'],
      ]);
      expect(back.rows.filter((x) => x.result.statusReason).map((x) => x.rowNumber)).toEqual([5, ROWS + 2]);
    });
  }

  it('leaves a file that cannot be read to its end as it was', async () => {
    const p = tmp.path('broken.results.csv');
    await writeResults(p, table('csv'));
    appendFileSync(p, '"REF-X;1.00;never closed\r\n');
    const before = readFileSync(p);
    // (skipped, said: the rows read before the broken line are not written half-way)
    const r = await applyStatus([{ file: p }], [update('po_5', 'PROCESSING', '2025-01-02T00:00:00Z')], o());
    expect(r.applied).toEqual([]);
    expect(readFileSync(p).equals(before)).toBe(true);
  });
});

describe('listen', () => {
  it("applies a delivery whose payout id falls across two of the file's pieces", async () => {
    const p = tmp.path('across.results.csv');
    const at = (padding: string) => writeResults(p, { ...table('csv'), rows: [row(0, padding), ...table('csv').rows.slice(1)] });
    await at('');
    // the first row's padding puts po_400 across the 64 KiB boundary of the file's reads
    await at('x'.repeat(65_536 - readFileSync(p, 'latin1').indexOf(';po_400;') - 4));
    expect(readFileSync(p, 'latin1').indexOf(';po_400;')).toBe(65_536 - 4);
    const stateDir = tmp.path('listen-state');
    mkdirSync(stateDir, { recursive: true });
    const raw = JSON.stringify({
      eventType: 'payout.status.changed',
      deliveryId: 'd0',
      data: { payoutId: 'po_400', newStatus: 'PROCESSING', changedAt: '2025-01-02T00:00:00Z' },
    });
    const receivedAt = new Date().toISOString();
    writeFileSync(
      join(stateDir, 'inbox.jsonl'),
      `${JSON.stringify({ t: 'delivery', deliveryId: 'd0', eventType: 'payout.status.changed', receivedAt, eventKey: 'k0', raw })}\n`,
    );
    const listener = await startListener({ port: 0, secret: 'whsec_across', stateDir, results: [p], stateRoots: o().stateRoots });
    await listener.idle();
    await listener.close();
    expect((await readResults(p)).rows.find((r) => r.result.payoutId === 'po_400')?.result.status).toBe('PROCESSING');
  });
});

describe('status', () => {
  it('brings a row whose key and payout id were cleared up to the ledger by its reference, the other rows as they were', async () => {
    const sb = await startSb();
    try {
      const b = await paidBatch(sb, { rows: 3 });
      const conn = connectionTo(sb);
      const table = await readResults(b.results);
      const { payoutId: _p, idempotencyKey: _k, ...rest } = table.rows[1]!.result;
      table.rows[1]!.result = rest;
      await writeResults(b.results, table);
      await setStatus(sb, b.ids[1]!, 'PROCESSING');
      const at = new Date(Date.now() + 1000).toISOString();
      // a status only the journal holds
      await applyStatus([], [{ payoutId: b.ids[1]!, status: 'PROCESSING', at, source: 'webhook' }], { ledgers: [ledgerOf(conn)] });

      await refreshStatus({ client: conn.client, resultsFile: b.results, ledgers: [ledgerOf(conn)] });
      const rows = (await readResults(b.results)).rows.map((r) => [r.cells.reference, r.result.payoutId, r.result.status]);
      expect(rows).toEqual(table.rows.map((r, i) => [r.cells.reference, b.ids[i], i === 1 ? 'PROCESSING' : 'PENDING']));
    } finally {
      await sb.close();
    }
  });
});

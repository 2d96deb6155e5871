// The batch's swaps in the results (issue 28): folded from hand-made journal lines into summary
// lines, a second sheet "Swaps" in an XLSX results file that reads back exactly, none in a CSV.
import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import * as XLSX from 'xlsx';
import { swapLinesOf } from '../../src/engine/outcome.ts';
import { swapReference } from '../../src/engine/swap.ts';
import { foldJournal, type SwapEvent } from '../../src/journal/lines.ts';
import { readResults, writeResults, type SwapLine } from '../../src/results/results.ts';
import { csvText, table, tempDir } from './helpers.ts';

const tmp = tempDir('pb-results-swaps-');
afterAll(tmp.cleanup);

const BATCH = 'a'.repeat(64);
const at = '2026-11-27T10:00:00.000Z';
const usd = swapReference([BATCH], 'USD');
const gbp = swapReference([BATCH], 'GBP');
const snapshot = {
  id: '7d0c6a1e-0000-4000-8000-000000000001',
  payoutRef: usd,
  status: 'PROCESSING',
  sourceAmount: '9215.00',
  sourceCurrency: 'EUR',
  destinationAmount: '10000.00',
  destinationCurrency: 'USD',
  exchangeRate: '1.0851871947',
};
const LINES: SwapEvent[] = [
  { t: 'swap', phase: 'initiating', currency: 'USD', reference: usd, attempt: 1, key: 'k1', body: '{}', at },
  { t: 'swap', phase: 'created', currency: 'USD', reference: usd, attempt: 1, key: 'k1', swap: snapshot, at },
  { t: 'swap', phase: 'status', currency: 'USD', reference: usd, swap: { ...snapshot, status: 'SUCCESSFUL' }, at },
  { t: 'swap', phase: 'initiating', currency: 'GBP', reference: gbp, attempt: 1, key: 'k2', body: '{}', at },
  {
    t: 'swap',
    phase: 'unknown',
    currency: 'GBP',
    reference: gbp,
    attempt: 1,
    key: 'k2',
    error: { status: 502, message: 'Bad Gateway' },
    at,
  },
];

describe('the swaps of the results', () => {
  const lines = swapLinesOf(foldJournal(LINES).swaps.values());

  it('gives one line per currency, in currency order: the swap as last known, else the state in the results words', () => {
    const { payoutRef: _, ...fields } = snapshot;
    expect(lines).toEqual<SwapLine[]>([
      { currency: 'GBP', reference: gbp, status: 'UNKNOWN_OUTCOME' },
      { currency: 'USD', reference: usd, ...fields, status: 'SUCCESSFUL' },
    ]);
  });

  it('writes them on a second sheet "Swaps" of an XLSX results file, amounts and rate numeric, and reads them back exactly', async () => {
    const p = tmp.path('r.xlsx');
    const t = { ...table('xlsx', 2), swaps: lines };
    await writeResults(p, t);
    const wb = XLSX.read(readFileSync(p), { type: 'buffer', cellNF: true });
    expect(wb.SheetNames).toEqual(['Results', 'Swaps']);
    const ws = wb.Sheets.Swaps!;
    expect(XLSX.utils.sheet_to_json<string[]>(ws, { header: 1 })[0]).toEqual([
      'currency',
      'reference',
      'id',
      'status',
      'sourceAmount',
      'sourceCurrency',
      'destinationAmount',
      'destinationCurrency',
      'exchangeRate',
    ]);
    expect(ws.E3).toMatchObject({ t: 'n', v: 9215, z: '#,##0.00' });
    expect(ws.I3).toMatchObject({ t: 'n', v: 1.0851871947 });
    const back = await readResults(p);
    expect(back.swaps).toEqual(lines);
    expect(back.rows).toEqual(t.rows);
    // a results file rewritten as read (status, listen) keeps its swaps
    await writeResults(p, back);
    expect((await readResults(p)).swaps).toEqual(lines);
  });

  it('leaves a CSV results file as it is (it stays a valid input for retry) and an XLSX one without swaps with one sheet', async () => {
    const t = table('csv', 2);
    expect(csvText({ ...t, swaps: lines })).toBe(csvText(t));
    const p = tmp.path('none.xlsx');
    await writeResults(p, table('xlsx', 1));
    expect(XLSX.read(readFileSync(p), { type: 'buffer' }).SheetNames).toEqual(['Results']);
    expect((await readResults(p)).swaps).toBeUndefined();
  });
});

// What the engine orders by currency code, computed as a host computes it: host-locale.test.ts runs
// this file in a child process under another LANG and compares its answer with the worker's.
// Run directly (node --import tsx test/engine/host-order.ts), it prints that answer as JSON.
import { fileURLToPath } from 'node:url';
import { buildPlan } from '../../src/engine/batch-plan.ts';
import { moneyTotals } from '../../src/engine/money-totals.ts';
import { swapLinesOf } from '../../src/engine/outcome.ts';
import { spillRows } from '../../src/engine/prepare.ts';
import { foldJournal } from '../../src/journal/lines.ts';
import { Dec } from '../../src/money.ts';
import type { PayoutRow } from '../../src/validation/row-schemas.ts';
import { payoutRow, preflightOf } from './helpers.ts';

// Sorted apart by a locale: Estonian puts Z between S and T (ZAR before TRY), Czech CH after H (CHF after HKD).
const CODES = ['ZAR', 'TRY', 'HKD', 'CHF'];

const row = (rowNumber: number, currency: string, amount = '1000'): PayoutRow => payoutRow(rowNumber, amount, currency);

function planOf(rows: PayoutRow[], balances: Record<string, number>) {
  const batch = {
    file: '/b.csv',
    format: 'csv' as const,
    inputColumns: [],
    rows: spillRows(rows.map((p) => ({ rowNumber: p.rowNumber, cells: {}, payout: p, problems: [] }))),
    fileProblems: [],
    identity: { batchId: 'a'.repeat(64), source: 'content' as const, fileSha256: 'a'.repeat(64) },
  };
  const wallets = Object.entries(balances).map(([currency, balance]) => ({ walletId: `w-${currency}`, currency, balance }));
  const pairs = Object.keys(balances)
    .filter((c) => c !== 'USD')
    .map((c) => ({ currencyPairId: `USD-${c}`, baseCurrency: 'USD', quoteCurrency: c, rate: 1, enabled: true }));
  const pf = preflightOf({ wallets, pairs });
  return buildPlan(batch, pf, foldJournal([]), 'sandbox', { allowPartial: true, mergeDocuments: false, fundBySwap: true });
}

export function hostOrders() {
  // TRY and ZAR rows, both wallets empty, a USD wallet that can fund one swap of the two: which is paid?
  const short = planOf([row(2, 'ZAR'), row(3, 'TRY')], { ZAR: 0, TRY: 0, USD: 1500 });
  // a USD row, its wallet short, two wallets that fund it equally well: which is debited?
  const tie = planOf([row(2, 'USD')], { USD: 0, HKD: 5000, CHF: 5000 });
  const entries = CODES.map((currency) => ({ status: 'COMPLETED', currency, amount: new Dec(1) }));
  const states = CODES.map((currency) => ({ currency, reference: `S-${currency}`, attempt: 1, key: 'k', phase: 'rejected' as const }));
  return {
    locale: new Intl.Collator().resolvedOptions().locale,
    paid: short.toSend,
    swappedFor: short.swaps.map((s) => s.currency),
    tieFundedFrom: tie.swaps.map((s) => s.fromCurrency),
    planCurrencies: planOf(
      CODES.map((c, i) => row(i + 2, c, '1')),
      { ZAR: 9, TRY: 9, HKD: 9, CHF: 9 },
    ).currencies.map((c) => c.currency),
    moneyTotals: Object.keys(moneyTotals(entries)),
    swapLines: swapLinesOf(states).map((s) => s.currency),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(JSON.stringify(hostOrders()));

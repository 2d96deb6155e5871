// A BatchPlan for the unit tests of the engine's pure stages: two valid rows (2 and 3) to send,
// nothing created, refused or blocked; `over` changes what a test is about.
import type { BatchPlan } from '../../src/engine/batch-plan.ts';
import type { SwapProposal } from '../../src/engine/swap.ts';

export const planFixture = (over: Partial<BatchPlan> = {}): BatchPlan => ({
  batchId: 'a'.repeat(64),
  fileSha256: 'a'.repeat(64),
  env: 'sandbox',
  file: '/b.csv',
  rows: 2,
  valid: 2,
  invalid: 0,
  toSend: [2, 3],
  created: [],
  notSent: new Map(),
  invalidRows: new Map(),
  alreadyCreated: 0,
  toSettle: 0,
  currencies: [],
  corridorsNotEnabled: [],
  warnings: [],
  requests: {
    preflight: 3,
    estimate: 5,
    quotes: 0,
    uploadUrls: 0,
    storagePuts: 0,
    initiates: 2,
    patches: 0,
    swapRequests: 0,
    listPages: 0,
  },
  swaps: [],
  swapRefusals: [],
  fundedBySwaps: false,
  shortfall: false,
  corridorBlocked: false,
  ...over,
});

/** A swap from the EUR wallet funding a USD shortfall of 1,000.20 at USD/EUR 0.9215 (EUR is the quote: ÷ rate). */
export const swapFixture = (over: Partial<SwapProposal> = {}): SwapProposal => ({
  reference: 'PBS-x-USD',
  currency: 'USD',
  fromCurrency: 'EUR',
  sourceWalletId: 'w-EUR',
  destinationWalletId: 'w-USD',
  swapAmount: '930.91',
  amountToBeSent: '1010.21',
  pair: { baseCurrency: 'USD', quoteCurrency: 'EUR', rate: '0.9215' },
  shortfall: '1000.20',
  margin: '10.01',
  balances: [
    { currency: 'EUR', before: '500000.00', afterSwap: '499069.09', afterBatch: '499069.09' },
    { currency: 'USD', before: '100.00', afterSwap: '1110.21', afterBatch: '10.21' },
  ],
  ...over,
});

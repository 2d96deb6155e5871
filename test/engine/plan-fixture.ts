// A BatchPlan for the unit tests of the engine's pure stages: two valid rows (2 and 3) to send,
// nothing created, refused or blocked; `over` changes what a test is about.
import type { BatchPlan } from '../../src/engine/plan.ts';

export const planFixture = (over: Partial<BatchPlan> = {}): BatchPlan => ({
  batchId: 'a'.repeat(64),
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
  requests: { preflight: 3, estimate: 5, quotes: 0, uploadUrls: 0, storagePuts: 0, initiates: 2, patches: 0, swapRequests: 0 },
  swaps: [],
  swapRefusals: [],
  fundedBySwaps: false,
  shortfall: false,
  corridorBlocked: false,
  ...over,
});

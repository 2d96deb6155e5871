// The send step of a swap at run time (spec §4.7 swap, §4.8 swaps list, §4.9 pairs): for each
// approved proposal, before any row of its currency is sent, find the batch's swap through the
// journal and the swaps list, else send it once (journalled before it leaves), then see the
// destination credited. STUB: the interface the pipeline calls; its body is written with the send
// step (it funds nothing and makes no request yet).
import type { PayoutClient } from '../client/client.ts';
import type { Dec } from '../money.ts';
import type { EngineEvent } from './execute.ts';
import type { BatchSession } from './session.ts';
import type { SwapProposal, SwapSnapshot } from './swap.ts';

/** What the send step of a swap works with: the run's client, journal and identity. */
export interface SwapSendContext {
  client: PayoutClient;
  session: BatchSession;
  /** The batch's identity: each proposal's reference is swapReference(batchId, currency). */
  batchId: string;
  onEvent?: (e: EngineEvent) => void;
  stop?: AbortSignal;
}

export interface FundBySwapOptions {
  /**
   * --swap-rate-tolerance as a fraction (0.01 = 1%): the most the pairs route's rate may have moved
   * since the plan's (the approvers signed that rate) before the swap is refused.
   */
  rateTolerance: Dec;
}

/**
 * One currency's funding: `funded` (its rows go), or `stopped` with the reason its rows are
 * NOT_SENT and the run's exit class: 3 refused (the swap refused, REJECTED, or the rate outside the
 * tolerance: nothing of it moved), 4 the service unreachable or an outcome not settled (resume is safe).
 */
export type SwapFunding =
  | { currency: string; funded: true; swap?: SwapSnapshot }
  | { currency: string; funded: false; code: string; reason: string; exitClass: 3 | 4 };

/**
 * Funds each proposal's currency by its swap, before any row of that currency is sent; returns one
 * entry per proposal's currency. A currency that is stopped stops only its own rows.
 */
export async function fundBySwaps(
  ctx: SwapSendContext,
  proposals: readonly SwapProposal[],
  options: FundBySwapOptions,
): Promise<Map<string, SwapFunding>> {
  void ctx;
  void options;
  return Promise.resolve(new Map(proposals.map((p): [string, SwapFunding] => [p.currency, { currency: p.currency, funded: true }])));
}

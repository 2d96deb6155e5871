// Spec §3: status changes of payouts and swaps and their effects: the event, the refund, the swap
// reversal, and the optional timed PENDING -> PROCESSING -> SUCCESSFUL.
import { canTransition, type PayoutStatus, type SwapStatus } from '../spec/codes.ts';
import type { InformationRequest } from '../spec/schemas.ts';
import { later } from './clock.ts';
import { apiError } from './http.ts';
import type { PayoutRec, Store, StoreEvent, SwapRec } from './store.ts';

export interface StatusChange {
  reason?: string;
  informationRequests?: InformationRequest[];
  changedBy?: string;
}

/** Reading: a request for information with none given asks for the invoice (spec §1.10). */
const DEFAULT_INFORMATION_REQUESTS: InformationRequest[] = [
  {
    title: 'Supporting document',
    description: 'Attach the invoice for this payout (PDF, JPEG or PNG).',
    type: 'FILE',
    section: 'Documents',
  },
];

/** Spec §6 payout.status.changed; a payout's details go between newStatus and changedAt. */
function statusChanged(r: PayoutRec | SwapRec, from: PayoutStatus, change: StatusChange, oldDetail?: string): StoreEvent {
  const p: Partial<PayoutRec> = 'fee' in r ? r : {};
  return {
    eventType: 'payout.status.changed',
    businessId: r.businessId,
    data: {
      payoutId: r.id,
      businessId: r.businessId,
      oldStatus: from,
      newStatus: r.status,
      ...(p.statusDetail ? { newStatusDetail: p.statusDetail } : {}),
      ...(oldDetail ? { oldStatusDetail: oldDetail } : {}),
      ...(p.informationRequests ? { informationRequests: p.informationRequests } : {}),
      changedAt: r.updatedAt,
      ...(change.reason ? { reason: change.reason } : {}),
      ...(change.changedBy ? { changedBy: change.changedBy } : {}),
    },
  };
}

/** The timed walk (autoAdvance): from a status (or a new swap) the next, after which delay, and why. */
const AUTO_STEPS = {
  PENDING: { to: 'PROCESSING', after: 'toProcessingMs', reason: 'Approved and processing' },
  PROCESSING: { to: 'SUCCESSFUL', after: 'toSuccessfulMs', reason: 'Funds sent' },
  swap: { to: 'SUCCESSFUL', after: 'toSuccessfulMs', reason: 'Swap confirmed' },
} as const;
type AutoStep = (typeof AUTO_STEPS)[keyof typeof AUTO_STEPS];
/** The step a payout or swap takes next on its own, if any (a swap has no `fee`). */
const autoStep = (r: PayoutRec | SwapRec): AutoStep | undefined =>
  r.status !== 'PENDING' && r.status !== 'PROCESSING' ? undefined : 'fee' in r ? AUTO_STEPS[r.status] : AUTO_STEPS.swap;

export class Lifecycle {
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly store: Store,
    private readonly autoAdvance: { toProcessingMs: number; toSuccessfulMs: number } | false,
  ) {}

  /**
   * The state table (codes.ts). Readings: FAILED and REJECTED refund amount plus fee in one CREDIT;
   * ADDITIONAL_INFO_REQUIRED -> PENDING sets statusDetail ADDITIONAL_INFO_UNDER_REVIEW until the next
   * change; informationRequests exist only while ADDITIONAL_INFO_REQUIRED.
   */
  changePayout(p: PayoutRec, to: PayoutStatus, change: StatusChange = {}): void {
    if (!canTransition(p.status, to)) throw apiError(409, 'INVALID_TRANSITION', `A payout cannot move from ${p.status} to ${to}`);
    // the wallet refunded, checked before anything changes (store.creditProblem)
    const wallet = to === 'FAILED' || to === 'REJECTED' ? this.store.walletIn(p.businessId, p.sourceCurrency) : undefined;
    const refund = p.sourceAmount.plus(p.fee);
    const problem = wallet && this.store.creditProblem(wallet, refund);
    if (problem) throw apiError(409, 'INVALID_TRANSITION', `The refund of payout ${p.payoutRef} ${problem}`);
    const from = p.status;
    const oldDetail = p.statusDetail;
    p.status = to;
    if (from === 'ADDITIONAL_INFO_REQUIRED' && to === 'PENDING') p.statusDetail = 'ADDITIONAL_INFO_UNDER_REVIEW';
    else delete p.statusDetail;
    if (to === 'ADDITIONAL_INFO_REQUIRED')
      p.informationRequests = change.informationRequests?.length ? change.informationRequests : DEFAULT_INFORMATION_REQUESTS;
    else delete p.informationRequests;
    if ((to === 'FAILED' || to === 'REJECTED') && change.reason) p.failureReason = change.reason;
    p.updatedAt = this.store.clock.iso();
    this.store.publish(statusChanged(p, from, change, oldDetail));
    if (wallet) {
      const metadata = { kind: 'payout_refund', payoutId: p.id, status: to };
      this.store.move(wallet, refund, p.payoutRef, `Refund of payout ${p.payoutRef} (${to})`, metadata);
    }
    this.scheduleNext(p);
  }

  /** Spec §3 swaps: PROCESSING -> SUCCESSFUL or REJECTED; reading: a reversal puts both wallets back, refused when the destination no longer holds the amount (or the source could not: creditProblem). */
  changeSwap(s: SwapRec, to: SwapStatus, change: StatusChange = {}): void {
    if (s.status !== 'PROCESSING' || to === 'PROCESSING')
      throw apiError(409, 'INVALID_TRANSITION', `A swap cannot move from ${s.status} to ${to}`);
    if (to === 'REJECTED') {
      const source = this.store.wallets.get(s.sourceWalletId)!;
      const destination = this.store.wallets.get(s.destinationWalletId)!;
      if (destination.balance.lessThan(s.destinationAmount)) {
        throw apiError(
          409,
          'INSUFFICIENT_FUNDS',
          `The ${destination.currency} wallet no longer holds the swapped amount; the swap cannot be reversed`,
        );
      }
      const problem = this.store.creditProblem(source, s.sourceAmount);
      if (problem) throw apiError(409, 'INVALID_TRANSITION', `The reversal of swap ${s.payoutRef} ${problem}`);
      const narration = `Reversal of swap ${s.payoutRef}`;
      this.store.move(destination, s.destinationAmount.negated(), s.payoutRef, narration, { kind: 'swap_reversal', swapId: s.id });
      this.store.move(source, s.sourceAmount, s.payoutRef, narration, { kind: 'swap_reversal', swapId: s.id });
    }
    const from = s.status;
    s.status = to;
    s.updatedAt = this.store.clock.iso();
    this.publishSwap(s, from, change);
  }

  /** Spec §6: a swap's creation emits payout.status.changed to PROCESSING; oldStatus is "not shown": PENDING. */
  publishSwap(s: SwapRec, from: PayoutStatus, change: StatusChange = {}): void {
    this.store.publish(statusChanged(s, from, change));
    this.scheduleNext(s);
  }

  /** The record's timed step, when autoAdvance is on: taken after its delay if the record has not moved meanwhile. */
  scheduleNext(r: PayoutRec | SwapRec): void {
    const step = autoStep(r);
    if (!this.autoAdvance || !step) return;
    const at = r.status;
    later(this.timers, this.autoAdvance[step.after], () => r.status === at && this.advance(r, step)).unref();
  }

  private advance(r: PayoutRec | SwapRec, step: AutoStep): void {
    const change = { changedBy: 'sandbox-auto-advance', reason: step.reason };
    if ('fee' in r) this.changePayout(r, step.to, change);
    else this.changeSwap(r, step.to, change);
  }

  /** After a restore: the timed steps that fell due meanwhile are taken now. */
  catchUp(): void {
    const delays = this.autoAdvance;
    if (!delays) return;
    const now = this.store.clock.now();
    for (const r of [...this.store.payouts.values(), ...this.store.swaps.values()]) {
      const from = r.status;
      let due = Date.parse(r.updatedAt);
      // (a payout under review waits for a person; a step taken leaves no statusDetail)
      const held = 'statusDetail' in r && r.statusDetail;
      for (let step = held ? undefined : autoStep(r); step && (due += delays[step.after]) <= now; step = autoStep(r)) this.advance(r, step);
      // A move schedules the next step; a record not yet due waits a whole delay from now.
      if (r.status === from) this.scheduleNext(r);
    }
  }

  close(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
